// certs/rotator.h on the FakeClient (which enforces resourceVersion preconditions as the
// apiserver does): replicas racing on an empty Secret agree; the bundle reaches every webhook;
// renewals are served in-process; and a whole CA rotation, with replicas coming and going and the
// apiserver's caBundle lagging behind, never has a replica serve a certificate the apiserver
// does not trust.
#include "certs/rotator.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "common/encoding/base64.h"
#include "common/kube/rest_mapper.h"
#include "common/kube/testing/fake_client.h"
#include "common/metrics/metrics.h"
#include "common/metrics/workqueue.h"

namespace trainer::certs {
namespace {

using namespace std::chrono_literals;
using kube::testing::FakeClient;

const Time kT0 = std::chrono::system_clock::from_time_t(1767225600);  // 2026-01-01T00:00:00Z
const std::vector<std::string> kNames = {"trainer-webhook.ns.svc"};

json::Value Parse(std::string_view text) { return json::Parse(text).value(); }

// The value of `series` (family and labels, as the text exposition writes them) in `registry`,
// -1 while it is not exported.
double SeriesValue(const metrics::Registry& registry, const std::string& series) {
  const std::string text = registry.Text();
  const size_t at = text.find(series + " ");
  return at == std::string::npos ? -1.0 : std::stod(text.substr(at + series.size() + 1));
}

void SeedCluster(FakeClient& c, bool configurations = true) {
  c.Seed(kube::kSecrets, Parse(R"({"apiVersion":"v1","kind":"Secret","type":"Opaque",
      "metadata":{"name":"cert","namespace":"ns"}})"));
  if (!configurations) {
    return;
  }
  c.Seed(kube::kMutatingWebhookConfigurations, Parse(R"({"kind":"MutatingWebhookConfiguration",
      "metadata":{"name":"defaulter"},
      "webhooks":[{"name":"a","clientConfig":{"service":{"name":"trainer-webhook"}}}]})"));
  c.Seed(kube::kValidatingWebhookConfigurations, Parse(R"({"kind":"ValidatingWebhookConfiguration",
      "metadata":{"name":"validator"},
      "webhooks":[{"name":"b","clientConfig":{"service":{"name":"trainer-webhook"}}},
                  {"name":"c","clientConfig":{"caBundle":"b2xk"}}]})"));
}

// One webhook replica: a Rotator whose `serve` records what it would serve.
struct Replica {
  Replica(kube::Client& client, std::string id, const Time* clock,
          metrics::ReconcileMetrics* metrics = nullptr,
          workqueue::WorkqueueMetricsProvider* queue_metrics = nullptr) {
    RotatorOptions o;
    o.metrics = metrics;
    o.queue_metrics = queue_metrics;
    o.ns = "ns";
    o.secret_name = "cert";
    o.mutating_configuration = "defaulter";
    o.validating_configuration = "validator";
    o.replica = std::move(id);
    o.policy.dns_names = kNames;
    o.policy.propagation = 30s;
    o.policy.report_interval = 10s;
    o.now = [clock] { return *clock; };
    o.serve = [this](const KeyPair& pair, const std::string& ca) {
      if (refuse && refuse()) {
        return InternalError("refused");
      }
      std::lock_guard<std::mutex> lock(mu);
      served = pair;
      served_ca = ca;
      ++serves;
      return OkStatus();
    };
    REQUIRE(ValidateRotatorOptions(o).ok());
    rotator = std::make_unique<Rotator>(client, std::move(o));
  }
  Time Step() {
    StatusOr<Time> next = rotator->Step();
    INFO(next.status().message());
    REQUIRE(next.ok());
    return *next;
  }
  std::unique_ptr<Rotator> rotator;
  KeyPair Served() {
    std::lock_guard<std::mutex> lock(mu);
    return served;
  }
  std::function<bool()> refuse;  // `serve` fails while it returns true
  std::mutex mu;                 // guards `served` for tests that Start() the rotator
  KeyPair served;
  std::string served_ca;
  int serves = 0;
};

State ReadState(FakeClient& c) { return DecodeSecret(c.Get(kube::kSecrets, "ns", "cert").value()); }

// The caBundle of every webhook (decoded), in order.
std::vector<std::string> CABundles(FakeClient& c) {
  std::vector<std::string> out;
  for (const auto& gvr :
       {kube::kMutatingWebhookConfigurations, kube::kValidatingWebhookConfigurations}) {
    json::Value config =
        c.Get(gvr, "", gvr == kube::kMutatingWebhookConfigurations ? "defaulter" : "validator")
            .value();
    for (const json::Value& wh : config["webhooks"].elements()) {
      const json::Value* ca = wh.Find("clientConfig")->Find("caBundle");
      out.push_back(ca == nullptr ? "" : encoding::Base64Decode(ca->AsString()).value());
    }
  }
  return out;
}

// What `kubectl annotate secret cert cert.trainer.kubeflow.org/rotate=<what>` does.
void RequestRotation(FakeClient& c, std::string_view what) {
  json::Value patch = json::Value::Object();
  patch["metadata"]["annotations"].Set(kRotateAnnotation, json::Value(what));
  REQUIRE(c.Patch(kube::kSecrets, "ns", "cert", kube::PatchType::kMerge, patch).ok());
}

// Does a client trusting `bundle` accept `pair` (any CA of the bundle) at `at`? Memoized on
// the certificates alone (the test's minutes are far inside their validity): the rotation test
// asks thousands of times about a handful of pairs.
bool Trusted(const std::string& bundle, const KeyPair& pair, Time at) {
  static std::map<std::pair<std::string, std::string>, bool> memo;
  auto [it, inserted] = memo.try_emplace({bundle, pair.cert_pem}, false);
  if (inserted) {
    std::vector<std::string> cas = SplitBundle(bundle).value();
    it->second = std::any_of(cas.begin(), cas.end(), [&](const std::string& ca) {
      return VerifyServing(ca, pair, kNames, at).ok();
    });
  }
  return it->second;
}

// Delays the first Secret patch until `before` ran: a second replica acting between the first
// one's read and its write.
class RacingClient : public FakeClient {
 public:
  std::function<void()> before;
  StatusOr<json::Value> Patch(const kube::GroupVersionResource& gvr, std::string_view ns,
                              std::string_view name, kube::PatchType type, const json::Value& patch,
                              const kube::PatchOptions& options) override {
    if (gvr == kube::kSecrets && before) {
      std::function<void()> run = std::move(before);
      before = nullptr;
      run();
    }
    return FakeClient::Patch(gvr, ns, name, type, patch, options);
  }
};

TEST_CASE("two replicas starting together on an empty Secret agree on one CA", "[rotator]") {
  RacingClient client;
  SeedCluster(client);
  Time now = kT0;
  Replica a(client, "a", &now);
  Replica b(client, "b", &now);
  client.before = [&] { b.Step(); };  // b reads, plans, writes while a is about to write
  a.Step();
  State s = ReadState(client);
  CHECK(a.served == s.serving);
  CHECK(b.served == s.serving);
  CHECK(a.served_ca == s.ca.cert_pem);
  CHECK(a.serves == 1);  // a never served the pair it lost with
  for (const std::string& bundle : CABundles(client)) {
    CHECK(bundle == s.ca.cert_pem);
  }
  CHECK(a.rotator->ready());
  CHECK(b.rotator->ready());
  CHECK(s.injected_at == kT0);
}

TEST_CASE("a settled replica sleeps until the next renewal is due (at most an hour)", "[rotator]") {
  FakeClient client;
  SeedCluster(client);
  Time now = kT0;
  Replica a(client, "a", &now);
  CHECK(a.Step() == kT0 + 1h);
  int patches = client.Calls("patch");
  now += 10s;
  a.Step();
  CHECK(client.Calls("patch") == patches);  // nothing written when nothing changed
}

TEST_CASE("without webhook configurations the replica still serves and is ready", "[rotator]") {
  FakeClient client;
  SeedCluster(client, /*configurations=*/false);
  Time now = kT0;
  Replica a(client, "a", &now);
  a.Step();
  CHECK(a.serves == 1);
  CHECK(a.rotator->ready());
}

TEST_CASE("a replica that cannot serve the certificate is unready and retries soon", "[rotator]") {
  FakeClient client;
  SeedCluster(client);
  Time now = kT0;
  Replica a(client, "a", &now);
  a.refuse = [] { return true; };
  StatusOr<Time> next = a.rotator->Step();
  REQUIRE_FALSE(next.ok());  // Run backs off (seconds) rather than sleeping until the wake
  CHECK(next.status().code() == StatusCode::kUnavailable);
  CHECK_FALSE(a.rotator->ready());
  a.refuse = nullptr;
  CHECK(a.Step() == kT0 + 1h);
  CHECK(a.serves == 1);
  CHECK(a.rotator->ready());
}

TEST_CASE("every pass is one cert-rotator reconcile; a failed pass is an error", "[rotator]") {
  FakeClient client;
  metrics::Registry registry;
  metrics::ReconcileMetrics m(registry, "cert-rotator", 1);
  Time now = kT0;
  Replica a(client, "a", &now, &m);
  auto count = [&](const std::string& series) { return SeriesValue(registry, series); };
  const std::string c = "{controller=\"cert-rotator\"";
  REQUIRE_FALSE(a.rotator->Step().ok());  // no Secret yet
  CHECK(count("controller_runtime_reconcile_total" + c + ",result=\"error\"}") == 1);
  CHECK(count("controller_runtime_reconcile_errors_total" + c + "}") == 1);
  SeedCluster(client);
  a.Step();
  CHECK(count("controller_runtime_reconcile_total" + c + ",result=\"success\"}") == 1);
  CHECK(count("controller_runtime_reconcile_errors_total" + c + "}") == 1);
  CHECK(count("controller_runtime_reconcile_time_seconds_count" + c + "}") == 2);
  CHECK(count("controller_runtime_active_workers" + c + "}") == 0);
}

TEST_CASE("a missing Secret is an error that says the install creates it", "[rotator]") {
  FakeClient client;
  Time now = kT0;
  Replica a(client, "a", &now);
  StatusOr<Time> next = a.rotator->Step();
  REQUIRE_FALSE(next.ok());
  CHECK(next.status().code() == StatusCode::kNotFound);
  CHECK(next.status().message() ==
        "reading Secret ns/cert: secrets \"cert\" not found (the install creates it, empty)");
  CHECK_FALSE(a.rotator->ready());
}

TEST_CASE("a serving renewal is served by every replica; caBundle does not change", "[rotator]") {
  FakeClient client;
  SeedCluster(client);
  Time now = kT0;
  Replica a(client, "a", &now);
  Replica b(client, "b", &now);
  a.Step();
  b.Step();
  KeyPair first = a.served;
  std::vector<std::string> bundles = CABundles(client);
  now = kT0 + 275 * 24h;  // within 90 days of the serving certificate's end
  a.Step();
  b.Step();
  CHECK(a.served != first);
  CHECK(b.served == a.served);
  CHECK(CABundles(client) == bundles);
}

// The whole rotation, one second at a time. The apiserver trusts what the configurations carried
// `lag` ago (its informer; less than the policy's 30 s propagation). Replicas step in a random
// order each second; replica "c" dies in SignNext (it stops, its report expires), "d" starts
// half-way, and "e" fails to load any new pair until second 150 (it keeps serving its old one and
// says so in its reports). After every step, every live replica's certificate must be trusted by
// the apiserver.
TEST_CASE("a CA rotation never serves a certificate the apiserver does not trust", "[rotator]") {
  FakeClient client;
  SeedCluster(client);
  Time now = kT0;
  std::map<std::string, std::unique_ptr<Replica>> live;
  for (const char* id : {"a", "b", "c", "e"}) {
    live[id] = std::make_unique<Replica>(client, id, &now);
    live[id]->Step();
  }
  live["e"]->refuse = [&] { return now < kT0 + 1h + 150s; };
  const std::string first_ca = ReadState(client).ca.cert_pem;
  RequestRotation(client, "ca");

  const auto lag = 20s;
  std::deque<std::pair<Time, std::string>> history;  // what the configurations carried, when
  std::mt19937 rng(7);
  std::vector<std::string> phases;
  int violations = 0;
  for (int second = 0; second < 220; ++second) {
    now = kT0 + 1h + std::chrono::seconds(second);
    if (second == 50) {
      live["d"] = std::make_unique<Replica>(client, "d", &now);
    }
    State s = ReadState(client);
    if (PhaseOf(s) == Phase::kSignNext && live.count("c") != 0) {
      live.erase("c");
    }
    std::vector<Replica*> order;
    for (auto& [id, r] : live) {
      order.push_back(r.get());
    }
    std::shuffle(order.begin(), order.end(), rng);
    for (Replica* r : order) {
      r->Step();
      history.emplace_back(now, CABundles(client).front());
      // The apiserver's view: the newest bundle at least `lag` old (the first one before that).
      std::string view = history.front().second;
      for (const auto& [at, bundle] : history) {
        if (at + lag <= now) {
          view = bundle;
        }
      }
      for (auto& [id, other] : live) {
        if (other->serves > 0 && !Trusted(view, other->served, now)) {
          ++violations;
          UNSCOPED_INFO("second " << second << ": replica " << id << " serves a certificate the "
                                  << "apiserver does not trust");
        }
      }
    }
    std::string phase(PhaseName(PhaseOf(ReadState(client))));
    if (phases.empty() || phases.back() != phase) {
      phases.push_back(phase);
    }
  }
  CHECK(violations == 0);
  CHECK(live["e"]->serves == 2);
  CHECK(phases == std::vector<std::string>{"TrustNext", "SignNext", "Stable"});
  State end = ReadState(client);
  CHECK(end.ca.cert_pem != first_ca);
  CHECK(end.bundle == std::vector<std::string>{end.ca.cert_pem});
  for (const std::string& bundle : CABundles(client)) {
    CHECK(bundle == end.ca.cert_pem);
  }
  for (auto& [id, r] : live) {
    CHECK(r->served_ca == end.ca.cert_pem);
  }
  CHECK(end.rotate.empty());
  CHECK(end.reports.empty());
}

TEST_CASE("Start() acts on a change of the Secret without waiting for its schedule", "[rotator]") {
  FakeClient client;
  SeedCluster(client);
  Time now = kT0;
  Replica a(client, "a", &now);
  a.rotator->Start();
  REQUIRE(a.rotator->WaitReady(10s));
  KeyPair first = a.Served();
  RequestRotation(client, "serving");
  // Well before its next scheduled pass (an hour away), the watch event makes it renew and
  // serve the new pair.
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < deadline &&
         (a.Served() == first || a.Served() != ReadState(client).serving)) {
    std::this_thread::sleep_for(10ms);
  }
  a.rotator->Stop();
  CHECK(a.Served() != first);
  CHECK(a.Served() == ReadState(client).serving);
}

TEST_CASE("Start() queues passes on the cert-rotator workqueue; a failed one is retried",
          "[rotator]") {
  FakeClient client;
  metrics::Registry registry;
  metrics::PrometheusWorkqueueMetrics queue_metrics(registry);
  Time now = kT0;
  Replica a(client, "a", &now, nullptr, &queue_metrics);
  // The value of a series of the queue (upstream's labels), -1 while it is not exported.
  auto value = [&](const std::string& family, const std::string& more = "") {
    return SeriesValue(registry,
                       family + "{controller=\"cert-rotator\",name=\"cert-rotator\"" + more + "}");
  };
  a.rotator->Start();
  // No Secret yet: each pass fails and is queued again with backoff (0.5 s, then 1 s).
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < deadline && value("workqueue_retries_total") < 2) {
    std::this_thread::sleep_for(10ms);
  }
  CHECK(value("workqueue_retries_total") >= 2);
  CHECK_FALSE(a.rotator->ready());
  SeedCluster(client);
  REQUIRE(a.rotator->WaitReady(20s));
  a.rotator->Stop();
  CHECK(value("workqueue_adds_total") >= 3);
  CHECK(value("workqueue_work_duration_seconds_count") >= 3);
  CHECK(value("workqueue_queue_duration_seconds_count") >= 3);
  CHECK(value("workqueue_depth", ",priority=\"0\"") == 0);
}

}  // namespace
}  // namespace trainer::certs
