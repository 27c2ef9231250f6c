// TrainJobStatus plugin (upstream plugins/trainjobstatus/trainjobstatus_test.go):
// TestEnforceMLPolicy and TestBuild by upstream case name, plus the registry's gate.
#include "runtime/plugins/trainjobstatus/trainjobstatus.h"

#include <catch2/catch.hpp>

#include "common/encoding/base64.h"
#include "runtime/framework/map_reader.h"
#include "runtime/framework/testing/testing.h"
#include "runtime/plugins/registry.h"

namespace trainer::plugins {
namespace {

using testing::Canon;
using testing::EnvNames;
using testing::EnvValue;
using testing::InfoBuilder;
using testing::PodSet;

constexpr char kCA[] = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

framework::Config Gated() {
  framework::Config c;
  REQUIRE(c.feature_gates.Set("TrainJobStatus=true").ok());
  return c;
}

std::unique_ptr<framework::Plugin> Make(const framework::Reader& reader,
                                        framework::Config config = Gated()) {
  auto p = TrainJobStatus::New(framework::PluginContext{&reader, {}, std::move(config)});
  REQUIRE(p.ok());
  return std::move(p).value();
}

TrainJobStatus& As(std::unique_ptr<framework::Plugin>& p) {
  return *static_cast<TrainJobStatus*>(p.get());
}

api::TrainJob Job() {
  return testing::TrainJob(
      "metadata: {name: test-job, namespace: team-a, uid: uid-1}\n"
      "spec: {runtimeRef: {name: torch-distributed}}");
}

json::Value WebhookSecret(std::string_view data_yaml) {
  return testing::Yaml(
      "apiVersion: v1\nkind: Secret\nmetadata: {name: "
      "kubeflow-trainer-webhook-cert, namespace: kubeflow-system}\ndata: " +
      std::string(data_yaml));
}

constexpr char kWantURL[] =
    "https://trainer-webhook.kubeflow-system.svc:10443/apis/trainer.kubeflow.org/v1alpha1/"
    "namespaces/team-a/trainjobs/test-job/status";
constexpr char kWantVolume[] =
    R"({"name":"kubeflow-trainer-token","projected":{"sources":[{"serviceAccountToken":{"audience":"trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/test-job/status","expirationSeconds":3600,"path":"token"}},{"configMap":{"items":[{"key":"ca.crt","path":"ca.crt"}],"name":"test-job-tls-config"}}]}})";
constexpr char kWantMount[] =
    R"({"mountPath":"/var/run/secrets/kubeflow/trainer","name":"kubeflow-trainer-token","readOnly":true})";

void CheckInjected(const framework::Container& c) {
  CHECK(EnvValue(c.env, "KUBEFLOW_TRAINER_SERVER_URL") == kWantURL);
  CHECK(EnvValue(c.env, "KUBEFLOW_TRAINER_SERVER_CA_CERT") ==
        "/var/run/secrets/kubeflow/trainer/ca.crt");
  CHECK(EnvValue(c.env, "KUBEFLOW_TRAINER_SERVER_TOKEN") ==
        "/var/run/secrets/kubeflow/trainer/token");
  REQUIRE(c.volume_mounts.size() == 1);
  CHECK(Canon(c.volume_mounts.at(0)) == kWantMount);
}

TEST_CASE("TestEnforceMLPolicy", "[trainjobstatus]") {
  framework::MapReader reader;
  auto plugin = Make(reader);
  api::TrainJob job = Job();
  SECTION("does nothing if no trainer pods") {
    framework::Info info =
        InfoBuilder().PodSet(PodSet("dataset-initializer").Containers({"init"})).Build();
    REQUIRE(As(plugin).EnforceMLPolicy(&info, job).ok());
    CHECK(info.template_spec.pod_sets[0].containers[0].env.empty());
    CHECK(info.template_spec.pod_sets[0].volumes.empty());
  }
  SECTION("injects runtime configuration into trainer containers") {
    framework::Info info = InfoBuilder()
                               .PodSet(PodSet("node").Ancestor("trainer").Container(
                                   "{name: node, env: [{name: A, value: a}]}"))
                               .Build();
    REQUIRE(As(plugin).EnforceMLPolicy(&info, job).ok());
    const framework::PodSet& ps = info.template_spec.pod_sets[0];
    CHECK(EnvNames(ps.containers[0].env) ==
          "A,KUBEFLOW_TRAINER_SERVER_URL,KUBEFLOW_TRAINER_SERVER_CA_CERT,"
          "KUBEFLOW_TRAINER_SERVER_TOKEN");
    CheckInjected(ps.containers[0]);
    REQUIRE(ps.volumes.size() == 1);
    CHECK(Canon(ps.volumes.at(0)) == kWantVolume);
  }
  SECTION("injects runtime configuration into multiple containers") {
    framework::Info info =
        InfoBuilder()
            .PodSet(PodSet("dataset-initializer").Containers({"dataset-initializer"}))
            .PodSet(PodSet("launcher").Ancestor("trainer").Containers({"node", "sidecar"}))
            .Build();
    REQUIRE(As(plugin).EnforceMLPolicy(&info, job).ok());
    const framework::PodSet& trainer = info.template_spec.pod_sets[1];
    CheckInjected(trainer.containers[0]);
    CheckInjected(trainer.containers[1]);
    CHECK(trainer.volumes.size() == 1);
    CHECK(info.template_spec.pod_sets[0].containers[0].env.empty());
  }
  SECTION("re-running replaces, never duplicates; a user's value of the same name is replaced") {
    framework::Info info =
        InfoBuilder()
            .PodSet(PodSet("node").Ancestor("trainer").Container(
                "{name: node, env: [{name: KUBEFLOW_TRAINER_SERVER_URL, value: mine}]}"))
            .Build();
    REQUIRE(As(plugin).EnforceMLPolicy(&info, job).ok());
    REQUIRE(As(plugin).EnforceMLPolicy(&info, job).ok());
    const framework::PodSet& ps = info.template_spec.pod_sets[0];
    CHECK(EnvNames(ps.containers[0].env) ==
          "KUBEFLOW_TRAINER_SERVER_URL,KUBEFLOW_TRAINER_SERVER_CA_CERT,"
          "KUBEFLOW_TRAINER_SERVER_TOKEN");
    CheckInjected(ps.containers[0]);
    CHECK(ps.volumes.size() == 1);
  }
  SECTION("the URL names the configured Service, namespace and port") {
    framework::Config c = Gated();
    c.webhook_service_name = "kubeflow-trainer-controller-manager";
    c.operator_namespace = "kubeflow";
    c.status_server_port = 8443;
    auto p = Make(reader, c);
    framework::Info info =
        InfoBuilder().PodSet(PodSet("node").Ancestor("trainer").Containers({"node"})).Build();
    REQUIRE(As(p).EnforceMLPolicy(&info, job).ok());
    CHECK(
        EnvValue(info.template_spec.pod_sets[0].containers[0].env, "KUBEFLOW_TRAINER_SERVER_URL") ==
        "https://kubeflow-trainer-controller-manager.kubeflow.svc:8443/apis/"
        "trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/test-job/status");
  }
  SECTION("missing status server port") {
    framework::Config c = Gated();
    c.status_server_port.reset();
    auto p = Make(reader, c);
    framework::Info info =
        InfoBuilder().PodSet(PodSet("node").Ancestor("trainer").Containers({"node"})).Build();
    CHECK(As(p).EnforceMLPolicy(&info, job).message() == "missing status server port");
  }
  SECTION("no action when info is nil") { CHECK(As(plugin).EnforceMLPolicy(nullptr, job).ok()); }
}

TEST_CASE("TestBuild", "[trainjobstatus]") {
  framework::MapReader reader;
  api::TrainJob job = Job();
  framework::Info info;
  SECTION("no action when info is nil") {
    auto plugin = Make(reader);
    auto objs = As(plugin).Build(nullptr, job);
    REQUIRE(objs.ok());
    CHECK(objs->empty());
  }
  SECTION("creates ConfigMap with CA cert from secret") {
    REQUIRE(
        reader.Add(WebhookSecret("{ca.crt: " + encoding::Base64Encode(kCA) + ", tls.crt: eA==}"))
            .ok());
    auto plugin = Make(reader);
    auto objs = As(plugin).Build(&info, job);
    REQUIRE(objs.ok());
    REQUIRE(objs->size() == 1);
    json::Value want = testing::Yaml(R"(
apiVersion: v1
kind: ConfigMap
metadata:
  name: test-job-tls-config
  namespace: team-a
  ownerReferences:
  - {apiVersion: trainer.kubeflow.org/v1alpha1, kind: TrainJob, name: test-job, uid: uid-1,
     controller: true, blockOwnerDeletion: true}
)");
    want.Set("data", json::Value::Object()).Set("ca.crt", kCA);
    CHECK(Canon(objs->at(0)) == Canon(want));
  }
  SECTION("during a CA rotation the ConfigMap holds the bundle of both CAs") {
    const std::string bundle = std::string(kCA) + std::string(kCA);  // two PEM blocks
    REQUIRE(reader
                .Add(WebhookSecret("{ca.crt: " + encoding::Base64Encode(kCA) +
                                   ", ca-bundle.crt: " + encoding::Base64Encode(bundle) + "}"))
                .ok());
    auto plugin = Make(reader);
    auto objs = As(plugin).Build(&info, job);
    REQUIRE(objs.ok());
    REQUIRE(objs->size() == 1);
    CHECK(objs->at(0)["data"]["ca.crt"].AsString() == bundle);
  }
  SECTION("a bundle without ca.crt is upstream's error") {
    REQUIRE(reader.Add(WebhookSecret("{ca-bundle.crt: " + encoding::Base64Encode(kCA) + "}")).ok());
    auto plugin = Make(reader);
    CHECK(As(plugin).Build(&info, job).status().message() ==
          "failed to find status server ca.crt in tls secret");
  }
  SECTION("returns error when webhook secret not found") {
    auto plugin = Make(reader);
    CHECK(As(plugin).Build(&info, job).status().message() ==
          "failed to look up status server tls secret: secrets "
          "\"kubeflow-trainer-webhook-cert\" not found");
  }
  SECTION("returns error when CA cert is missing in secret") {
    REQUIRE(reader.Add(WebhookSecret("{tls.crt: eA==}")).ok());
    auto plugin = Make(reader);
    CHECK(As(plugin).Build(&info, job).status().message() ==
          "failed to find status server ca.crt in tls secret");
  }
  SECTION("returns error when CA cert is empty in secret") {
    REQUIRE(reader.Add(WebhookSecret("{ca.crt: ''}")).ok());
    auto plugin = Make(reader);
    CHECK(As(plugin).Build(&info, job).status().message() ==
          "failed to find status server ca.crt in tls secret");
  }
  SECTION("the Secret is read from the configured namespace and name") {
    json::Value s = WebhookSecret("{ca.crt: " + encoding::Base64Encode(kCA) + "}");
    s["metadata"].Set("name", "custom-cert");
    s["metadata"].Set("namespace", "kubeflow");
    REQUIRE(reader.Add(std::move(s)).ok());
    framework::Config c = Gated();
    c.webhook_secret_name = "custom-cert";
    c.operator_namespace = "kubeflow";
    auto plugin = Make(reader, c);
    auto objs = As(plugin).Build(&info, job);
    REQUIRE(objs.ok());
    CHECK(objs->size() == 1);
  }
}

TEST_CASE("the registry runs TrainJobStatus only with its feature gate", "[trainjobstatus]") {
  framework::MapReader reader;
  auto names = [&reader](framework::Config config) {
    auto list = NewPlugins(framework::PluginContext{&reader, {}, std::move(config)});
    REQUIRE(list.ok());
    std::vector<std::string> out;
    for (const auto& p : *list) out.emplace_back(p->Name());
    return out;
  };
  std::vector<std::string> off = names({});
  CHECK(std::find(off.begin(), off.end(), "TrainJobStatus") == off.end());
  std::vector<std::string> on = names(Gated());
  REQUIRE(on.size() == off.size() + 1);
  // After every ML policy, before the JobSet that carries its env into the pod templates.
  CHECK(on[on.size() - 2] == "TrainJobStatus");
  CHECK(on.back() == "JobSet");
}

TEST_CASE("TokenAudience and StatusPath as upstream's statusserver utils", "[trainjobstatus]") {
  CHECK(trainjobstatus::TokenAudience("ns", "job") ==
        "trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status");
  CHECK(trainjobstatus::StatusPath("ns", "job") ==
        "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status");
}

}  // namespace
}  // namespace trainer::plugins
