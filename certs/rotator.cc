// The certificate rotator (see rotator.h).
#include "certs/rotator.h"

#include <algorithm>

#include "common/encoding/base64.h"
#include "common/informer/informer.h"
#include "common/kube/meta.h"
#include "common/kube/rest_mapper.h"
#include "common/log/log.h"

namespace trainer::certs {
namespace {

// Passes of one Step before it gives up for now (each conflict or write costs one).
constexpr int kMaxPasses = 10;
constexpr std::chrono::seconds kMaxSleep{3600};

std::string SecretKey(const RotatorOptions& o) { return o.ns + "/" + o.secret_name; }

}  // namespace

Status ValidateRotatorOptions(const RotatorOptions& o) {
  if (o.ns.empty() || o.secret_name.empty()) {
    return InvalidArgumentError("certificate rotation needs the Secret's namespace and name");
  }
  if (o.policy.dns_names.empty()) {
    return InvalidArgumentError("certificate rotation needs the webhook Service's DNS names");
  }
  if (o.policy.ca_validity <= 2 * o.policy.lookahead ||
      o.policy.serving_validity <= o.policy.lookahead) {
    return InvalidArgumentError(
        "certificate validities must exceed the renewal lookahead (the CA's twice)");
  }
  if (!o.serve) {
    return InvalidArgumentError("certificate rotation needs somewhere to serve the certificate");
  }
  return OkStatus();
}

Rotator::Rotator(kube::Client& client, RotatorOptions options)
    : client_(client), options_(std::move(options)) {}

Rotator::~Rotator() { Stop(); }

std::string Rotator::serving_ca() const {
  std::lock_guard<std::mutex> lock(mu_);
  return served_ca_;
}

StatusOr<std::vector<Rotator::Configuration>> Rotator::ReadConfigurations() {
  std::vector<Configuration> out(2);
  out[0].gvr = kube::kMutatingWebhookConfigurations;
  out[0].name = options_.mutating_configuration;
  out[1].gvr = kube::kValidatingWebhookConfigurations;
  out[1].name = options_.validating_configuration;
  for (Configuration& c : out) {
    if (c.name.empty()) {
      continue;
    }
    StatusOr<json::Value> obj = client_.Get(c.gvr, "", c.name);
    if (obj.ok()) {
      c.object = std::move(obj).value();
    } else if (!IsNotFound(obj.status())) {
      return obj.status().WithContext("reading " + c.gvr.resource + " " + c.name);
    } else if (!missing_logged_) {
      log::Warn("webhook configuration not found; no caBundle to keep in it",
                {{"resource", c.gvr.resource}, {"name", c.name}});
    }
  }
  missing_logged_ = !out[0].object.has_value() || !out[1].object.has_value();
  return out;
}

bool Rotator::Carries(const json::Value& config, const std::string& bundle) {
  const json::Value* webhooks = config.Find("webhooks");
  if (webhooks == nullptr || !webhooks->IsArray()) {
    return true;
  }
  for (const json::Value& wh : webhooks->elements()) {
    const json::Value* cc = wh.Find("clientConfig");
    const json::Value* ca = cc != nullptr ? cc->Find("caBundle") : nullptr;
    if (ca == nullptr || !ca->IsString()) {
      return false;
    }
    StatusOr<std::string> pem = encoding::Base64Decode(ca->AsString());
    if (!pem.ok() || *pem != bundle) {
      return false;
    }
  }
  return true;
}

bool Rotator::Carries(const std::vector<Configuration>& configs, const std::string& bundle) {
  return std::all_of(configs.begin(), configs.end(), [&](const Configuration& c) {
    return !c.object.has_value() || Carries(*c.object, bundle);
  });
}

Status Rotator::Inject(const std::vector<Configuration>& configs, const std::string& bundle) {
  std::string encoded = encoding::Base64Encode(bundle);
  for (const Configuration& c : configs) {
    if (!c.object.has_value() || Carries(*c.object, bundle)) {
      continue;
    }
    // A merge patch replaces the whole list: every webhook as read, with the new caBundle. The
    // resourceVersion makes it fail (409) if anything changed since the read.
    json::Value webhooks = json::Value::Array();
    if (const json::Value* read = c.object->Find("webhooks"); read != nullptr && read->IsArray()) {
      for (const json::Value& wh : read->elements()) {
        json::Value copy = wh.Clone();
        copy["clientConfig"].Set("caBundle", json::Value(encoded));
        webhooks.PushBack(std::move(copy));
      }
    }
    json::Value patch = json::Value::Object();
    patch["metadata"].Set("resourceVersion",
                          json::Value(std::string(kube::ResourceVersion(*c.object))));
    patch.Set("webhooks", std::move(webhooks));
    StatusOr<json::Value> written = client_.Patch(c.gvr, "", c.name, kube::PatchType::kMerge, patch,
                                                  {.field_manager = options_.field_manager});
    if (!written.ok()) {
      return written.status().WithContext("writing caBundle into " + c.gvr.resource + " " + c.name);
    }
    log::Info("wrote caBundle", {{"resource", c.gvr.resource},
                                 {"name", c.name},
                                 {"bundle", BundleFingerprint(SplitBundle(bundle).value_or({}))}});
  }
  return OkStatus();
}

void Rotator::Serve(const State& state) {
  std::string cert = Fingerprint(state.serving.cert_pem);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cert == served_cert_) {
      return;
    }
  }
  if (!VerifyServing(state.ca.cert_pem, state.serving, options_.policy.dns_names, options_.now())
           .ok()) {
    return;  // the plan replaces it
  }
  if (Status s = options_.serve(state.serving, state.ca.cert_pem); !s.ok()) {
    log::Error("serving the new certificate failed; keeping the previous one",
               {{"error", s.message()}});
    return;
  }
  std::string ca = Fingerprint(state.ca.cert_pem);
  log::Info("serving certificate", {{"certificate", cert}, {"ca", ca}});
  std::lock_guard<std::mutex> lock(mu_);
  served_cert_ = std::move(cert);
  served_ca_ = std::move(ca);
}

StatusOr<Time> Rotator::Step() {
  if (options_.metrics == nullptr) {
    return Pass();
  }
  options_.metrics->WorkerStarted();
  const auto start = std::chrono::steady_clock::now();
  StatusOr<Time> next = Pass();
  options_.metrics->Observe(next.ok() ? metrics::ReconcileMetrics::Result::kSuccess
                                      : metrics::ReconcileMetrics::Result::kError,
                            std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                                .count());
  options_.metrics->WorkerFinished();
  return next;
}

StatusOr<Time> Rotator::Pass() {
  const std::string key = SecretKey(options_);
  for (int pass = 0; pass < kMaxPasses; ++pass) {
    // The configurations first, then the Secret: see Inject's precondition (rotator.h).
    ASSIGN_OR_RETURN(std::vector<Configuration> configs, ReadConfigurations());
    StatusOr<json::Value> secret = client_.Get(kube::kSecrets, options_.ns, options_.secret_name);
    if (!secret.ok()) {
      Status s = secret.status().WithContext("reading Secret " + key);
      return IsNotFound(secret.status())
                 ? NotFoundError(s.message() + " (the install creates it, empty)")
                 : s;
    }
    State state = DecodeSecret(*secret);
    Serve(state);
    std::string bundle = JoinBundle(state.bundle);
    Observed observed{.bundle_injected = !state.bundle.empty() && Carries(configs, bundle),
                      .replica = options_.replica,
                      .serving_ca = serving_ca()};
    ASSIGN_OR_RETURN(Decision d, Plan(state, observed, options_.policy, options_.now()));
    if (d.write.has_value()) {
      StatusOr<json::Value> written =
          client_.Patch(kube::kSecrets, options_.ns, options_.secret_name, kube::PatchType::kMerge,
                        EncodeSecretPatch(*d.write), {.field_manager = options_.field_manager});
      if (IsConflict(written.status())) {
        log::Debug(1, "the Secret changed since it was read; reading it again", {{"secret", key}});
        continue;
      }
      if (!written.ok()) {
        return written.status().WithContext("writing Secret " + key);
      }
      for (const std::string& reason : d.reasons) {
        log::Info("certificate Secret updated",
                  {{"secret", key}, {"phase", PhaseName(PhaseOf(*d.write))}, {"reason", reason}});
      }
      continue;
    }
    if (!observed.bundle_injected) {
      Status s = Inject(configs, bundle);
      if (!s.ok() && !IsConflict(s)) {
        return s;
      }
      continue;
    }
    if (observed.serving_ca.empty()) {
      // Serve failed (logged): an error, so Run retries with backoff instead of sleeping until
      // the plan's next wake, up to an hour, unready.
      return UnavailableError("not serving the Secret's certificate yet");
    }
    ready_.store(true, std::memory_order_release);
    return d.wake;
  }
  return UnavailableError("the certificate Secret " + key + " kept changing during " +
                          std::to_string(kMaxPasses) + " passes");
}

void Rotator::Wake() { queue_->Add(SecretKey(options_)); }

bool Rotator::WaitReady(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!ready()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

void Rotator::Start() {
  if (thread_.joinable()) {
    return;
  }
  queue_ = std::make_unique<workqueue::Workqueue>(workqueue::WorkqueueOptions{
      .name = "cert-rotator",
      .rate_limiter = std::make_unique<workqueue::ItemExponentialFailureRateLimiter>(
          std::chrono::milliseconds(500), std::chrono::seconds(30)),
      .metrics = options_.queue_metrics});
  auto watch = [&](const kube::GroupVersionResource& gvr, const std::string& ns,
                   const std::string& name) {
    if (name.empty()) {
      return;
    }
    auto inf = std::make_unique<informer::Informer>(
        client_, informer::InformerOptions{.gvr = gvr,
                                           .ns = ns,
                                           .field_selector = "metadata.name=" + name,
                                           .store_mode = informer::StoreMode::kShared,
                                           .name = "certs-" + gvr.resource});
    inf->AddEventHandler({.on_add = [this](const json::Value&) { Wake(); },
                          .on_update = [this](const json::Value&, const json::Value&) { Wake(); },
                          .on_delete = [this](const json::Value&) { Wake(); }});
    inf->Start();
    informers_.push_back(std::move(inf));
  };
  watch(kube::kSecrets, options_.ns, options_.secret_name);
  watch(kube::kMutatingWebhookConfigurations, "", options_.mutating_configuration);
  watch(kube::kValidatingWebhookConfigurations, "", options_.validating_configuration);
  Wake();  // the first pass
  thread_ = std::thread([this] { Run(); });
}

void Rotator::Stop() {
  if (!thread_.joinable()) {
    return;
  }
  queue_->ShutDown();  // later Wake()s are dropped
  thread_.join();
  for (auto& inf : informers_) {
    inf->Stop();
  }
  informers_.clear();
  queue_.reset();
}

void Rotator::Run() {
  while (std::optional<std::string> key = queue_->Get()) {
    if (queue_->ShuttingDown()) {  // no pass after Stop()
      queue_->Done(*key);
      break;
    }
    StatusOr<Time> next = Step();
    if (next.ok()) {
      queue_->Forget(*key);
      queue_->AddAfter(*key, std::clamp<std::chrono::steady_clock::duration>(
                                 *next - options_.now(), std::chrono::seconds(0), kMaxSleep));
    } else {
      log::Error("certificate rotation failed; retrying",
                 {{"secret", *key}, {"error", next.status().message()}});
      queue_->AddRateLimited(*key);
    }
    queue_->Done(*key);
  }
}

}  // namespace trainer::certs
