// certs/rotator.h against the test bed's real apiserver: the resourceVersion preconditions
// (merge patches of the Secret and of the webhook configurations) as the apiserver enforces them,
// replicas racing on an empty Secret, a CA rotation driven by real watches, and a configuration
// whose caBundle someone overwrote. The configurations are this test's own (unique names, a
// URL nobody serves, an objectSelector nothing matches), so no admission on the shared test bed
// calls them.
#include <catch2/catch.hpp>
#include <set>
#include <thread>

#include "certs/rotator.h"
#include "common/encoding/base64.h"
#include "common/kube/meta.h"
#include "tests/integration/common/kube/testbed_client.h"

namespace trainer::certs {
namespace {

using namespace std::chrono_literals;
using kube::testbed::Eventually;

json::Value Parse(const std::string& text) { return json::Parse(text).value(); }

// A namespace with an empty Secret and two webhook configurations named after it.
struct Cluster {
  explicit Cluster(kube::Client& c) : client(c), ns(c, "certs") {
    REQUIRE(client
                .Create(kube::kSecrets, ns.name(),
                        Parse(R"({"apiVersion":"v1","kind":"Secret","type":"Opaque",
                                 "metadata":{"name":"cert"}})"))
                .ok());
    const std::string webhook =
        R"({"name":"NAME.trainer.kubeflow.org","admissionReviewVersions":["v1"],
        "sideEffects":"None","failurePolicy":"Fail",
        "objectSelector":{"matchLabels":{"trainer-test":"never-matches"}},
        "clientConfig":{"url":"https://127.0.0.1:1/x"},
        "rules":[{"apiGroups":["trainer.kubeflow.org"],"apiVersions":["v1alpha1"],
                  "operations":["CREATE"],"resources":["trainjobs"]}]})";
    auto config = [&](const char* kind, const std::string& name, int webhooks) {
      std::string list;
      for (int i = 0; i < webhooks; ++i) {
        std::string w = webhook;
        w.replace(w.find("NAME"), 4, "w" + std::to_string(i));
        list += (i ? "," : "") + w;
      }
      return Parse(R"({"apiVersion":"admissionregistration.k8s.io/v1","kind":")" +
                   std::string(kind) + R"(","metadata":{"name":")" + name + R"("},"webhooks":[)" +
                   list + "]}");
    };
    mutating = ns.name() + "-defaulter";
    validating = ns.name() + "-validator";
    REQUIRE(client
                .Create(kube::kMutatingWebhookConfigurations, "",
                        config("MutatingWebhookConfiguration", mutating, 1))
                .ok());
    REQUIRE(client
                .Create(kube::kValidatingWebhookConfigurations, "",
                        config("ValidatingWebhookConfiguration", validating, 3))
                .ok());
  }
  ~Cluster() {
    client.Delete(kube::kMutatingWebhookConfigurations, "", mutating).IgnoreError();
    client.Delete(kube::kValidatingWebhookConfigurations, "", validating).IgnoreError();
  }

  RotatorOptions Options(std::string replica) const {
    RotatorOptions o;
    o.ns = ns.name();
    o.secret_name = "cert";
    o.mutating_configuration = mutating;
    o.validating_configuration = validating;
    o.replica = std::move(replica);
    o.policy.dns_names = {"trainer-webhook." + ns.name() + ".svc"};
    o.policy.propagation = 2s;
    o.policy.report_interval = 2s;
    return o;
  }

  State Secret() const {
    return DecodeSecret(client.Get(kube::kSecrets, ns.name(), "cert").value());
  }

  // Every webhook's caBundle, decoded.
  std::vector<std::string> Bundles() const {
    std::vector<std::string> out;
    for (const auto& [gvr, name] :
         {std::pair{kube::kMutatingWebhookConfigurations, mutating},
          std::pair{kube::kValidatingWebhookConfigurations, validating}}) {
      json::Value config = client.Get(gvr, "", name).value();
      for (const json::Value& wh : config["webhooks"].elements()) {
        const json::Value* ca = wh.Find("clientConfig")->Find("caBundle");
        out.push_back(ca == nullptr ? "" : encoding::Base64Decode(ca->AsString()).value_or("?"));
      }
    }
    return out;
  }

  void Annotate(const std::string& rotate) const {
    json::Value patch = json::Value::Object();
    patch["metadata"]["annotations"].Set(kRotateAnnotation, json::Value(rotate));
    REQUIRE(client.Patch(kube::kSecrets, ns.name(), "cert", kube::PatchType::kMerge, patch).ok());
  }

  kube::Client& client;
  kube::testbed::TempNamespace ns;
  std::string mutating, validating;
};

// A replica: a Rotator whose `serve` keeps the pair (thread-safe: Start() serves from its
// thread).
struct Replica {
  Replica(kube::Client& client, RotatorOptions o,
          std::chrono::milliseconds load_delay = std::chrono::milliseconds(0)) {
    o.serve = [this, load_delay](const KeyPair& pair, const std::string& ca) {
      std::this_thread::sleep_for(load_delay);  // a slow replica
      std::lock_guard<std::mutex> lock(mu);
      served = pair;
      served_ca = ca;
      return OkStatus();
    };
    REQUIRE(ValidateRotatorOptions(o).ok());
    rotator = std::make_unique<Rotator>(client, std::move(o));
  }
  std::pair<KeyPair, std::string> Served() {
    std::lock_guard<std::mutex> lock(mu);
    return {served, served_ca};
  }
  std::mutex mu;
  KeyPair served;
  std::string served_ca;
  std::unique_ptr<Rotator> rotator;
};

bool Trusts(const std::string& bundle, const std::string& ca_pem) {
  return !ca_pem.empty() && bundle.find(ca_pem) != std::string::npos;
}

TEST_CASE("three replicas racing on an empty Secret agree on one CA", "[integration]") {
  auto client = kube::testbed::NewClient();
  Cluster cluster(*client);
  std::vector<std::unique_ptr<Replica>> replicas;
  for (const char* id : {"a", "b", "c"}) {
    replicas.push_back(std::make_unique<Replica>(*client, cluster.Options(id)));
  }
  std::vector<std::thread> threads;
  std::vector<Status> results(replicas.size());
  for (size_t i = 0; i < replicas.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = replicas[i]->rotator->Step().status(); });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  State s = cluster.Secret();
  for (size_t i = 0; i < replicas.size(); ++i) {
    INFO("replica " << i << ": " << results[i].message());
    CHECK(results[i].ok());
    CHECK(replicas[i]->Served().first == s.serving);
    CHECK(replicas[i]->rotator->ready());
  }
  CHECK(VerifyServing(s.ca.cert_pem, s.serving, {"trainer-webhook." + cluster.ns.name() + ".svc"},
                      std::chrono::system_clock::now())
            .ok());
  std::vector<std::string> bundles = cluster.Bundles();
  CHECK(bundles.size() == 4);
  for (const std::string& b : bundles) {
    CHECK(b == s.ca.cert_pem);
  }
  CHECK(s.injected_at.has_value());
}

TEST_CASE("a stale merge patch is refused with 409 by the apiserver", "[integration]") {
  auto client = kube::testbed::NewClient();
  Cluster cluster(*client);
  State s = cluster.Secret();
  State first = s;
  first.rotate = "serving";
  REQUIRE(client
              ->Patch(kube::kSecrets, cluster.ns.name(), "cert", kube::PatchType::kMerge,
                      EncodeSecretPatch(first))
              .ok());
  State second = s;  // planned from the same read
  second.rotate = "ca";
  StatusOr<json::Value> stale = client->Patch(kube::kSecrets, cluster.ns.name(), "cert",
                                              kube::PatchType::kMerge, EncodeSecretPatch(second));
  CHECK(IsConflict(stale.status()));
  CHECK(cluster.Secret().rotate == "serving");
}

TEST_CASE("a CA rotation over real watches: the served CA is always in every caBundle",
          "[integration]") {
  auto client = kube::testbed::NewClient();
  Cluster cluster(*client);
  Replica a(*client, cluster.Options("a"));
  Replica b(*client, cluster.Options("b"), 1500ms);  // loads each pair 1.5 s late
  a.rotator->Start();
  b.rotator->Start();
  REQUIRE(a.rotator->WaitReady(30s));
  REQUIRE(b.rotator->WaitReady(30s));
  const std::string first_ca = cluster.Secret().ca.cert_pem;

  SECTION("serving renewal: both serve the new pair, caBundle untouched") {
    KeyPair before = a.Served().first;
    cluster.Annotate("serving");
    REQUIRE(Eventually(
        [&] {
          State s = cluster.Secret();
          return s.serving != before && a.Served().first == s.serving &&
                 b.Served().first == s.serving;
        },
        30s));
    for (const std::string& bundle : cluster.Bundles()) {
      CHECK(bundle == first_ca);
    }
  }

  SECTION("CA rotation") {
    cluster.Annotate("ca");
    std::set<std::string> phases;
    int violations = 0;
    bool done = Eventually(
        [&] {
          State s = cluster.Secret();
          phases.insert(std::string(PhaseName(PhaseOf(s))));
          std::vector<std::string> bundles = cluster.Bundles();
          for (Replica* r : {&a, &b}) {
            std::string ca = r->Served().second;
            for (const std::string& bundle : bundles) {
              if (!Trusts(bundle, ca)) {
                ++violations;
              }
            }
          }
          return PhaseOf(s) == Phase::kStable && s.ca.cert_pem != first_ca &&
                 a.Served().second == s.ca.cert_pem && b.Served().second == s.ca.cert_pem;
        },
        90s);
    REQUIRE(done);
    CHECK(violations == 0);
    CHECK(phases.count("TrustNext") == 1);
    CHECK(phases.count("SignNext") == 1);
    State s = cluster.Secret();
    CHECK(s.bundle == std::vector<std::string>{s.ca.cert_pem});
    CHECK(s.rotate.empty());
    CHECK(s.reports.empty());
    REQUIRE(Eventually(
        [&] {
          std::vector<std::string> bundles = cluster.Bundles();
          return std::all_of(bundles.begin(), bundles.end(),
                             [&](const std::string& x) { return x == s.ca.cert_pem; });
        },
        10s));
  }

  SECTION("a caBundle someone overwrote is written back") {
    json::Value config =
        client->Get(kube::kValidatingWebhookConfigurations, "", cluster.validating).value();
    for (json::Value& wh : config["webhooks"].elements()) {
      wh["clientConfig"].Set("caBundle", json::Value(encoding::Base64Encode("junk")));
    }
    REQUIRE(client->Update(kube::kValidatingWebhookConfigurations, "", config).ok());
    REQUIRE(Eventually(
        [&] {
          std::vector<std::string> bundles = cluster.Bundles();
          return std::all_of(bundles.begin(), bundles.end(),
                             [&](const std::string& x) { return x == first_ca; });
        },
        15s));
  }
  a.rotator->Stop();
  b.rotator->Stop();
}

}  // namespace
}  // namespace trainer::certs
