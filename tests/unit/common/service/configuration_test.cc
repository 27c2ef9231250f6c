// Upstream's Configuration file: strict decoding, defaults, validation messages, and which
// fields a file sets.
#include "common/service/configuration.h"

#include <catch2/catch.hpp>

namespace trainer::service {
namespace {

constexpr char kUpstreamConfig[] =
    "tests/unit/common/service/testdata/controller_manager_config.yaml";

std::string Header() {
  return "apiVersion: config.trainer.kubeflow.org/v1alpha1\nkind: Configuration\n";
}

TEST_CASE("upstream's shipped Configuration is accepted", "[configuration]") {
  StatusOr<Configuration> cfg = LoadConfiguration(kUpstreamConfig);
  REQUIRE(cfg.ok());
  REQUIRE(cfg->leader_election.has_value());
  CHECK(cfg->leader_election->leader_elect);
  CHECK(cfg->leader_election->resource_name == "trainer.kubeflow.org");
  CHECK(cfg->leader_election->lease_duration == std::chrono::seconds(15));
  CHECK(cfg->leader_election->renew_deadline == std::chrono::seconds(10));
  CHECK(cfg->leader_election->retry_period == std::chrono::seconds(2));
  CHECK(cfg->group_kind_concurrency.at("TrainJob.trainer.kubeflow.org") == 5);
  CHECK(*cfg->qps == 50);
  CHECK(*cfg->burst == 100);
  CHECK(cfg->metrics_bind_address == ":8443");
  CHECK(cfg->health_probe_bind_address == ":8081");
  CHECK(cfg->cert_management_enable);
  CHECK(cfg->webhook_service_name == "kubeflow-trainer-controller-manager");
  CHECK(cfg->webhook_secret_name == "kubeflow-trainer-webhook-cert");
}

TEST_CASE("defaults of an empty Configuration", "[configuration]") {
  StatusOr<Configuration> cfg = ParseConfiguration(Header());
  REQUIRE(cfg.ok());
  CHECK_FALSE(cfg->leader_election.has_value());
  CHECK(*cfg->qps == 50);
  CHECK(*cfg->burst == 100);
  CHECK(cfg->webhook_port == 9443);
  CHECK(cfg->metrics_bind_address == ":8443");
  CHECK(cfg->metrics_secure_serving);
  CHECK(cfg->cert_management_enable);  // upstream's SetDefaults
  CHECK(cfg->webhook_service_name == "kubeflow-trainer-controller-manager");
  StatusOr<Configuration> off = ParseConfiguration(Header() + "certManagement:\n  enable: false\n");
  REQUIRE(off.ok());
  CHECK_FALSE(off->cert_management_enable);
  // Upstream decodes into a Configuration, which fills an absent apiVersion or kind: an empty
  // file, or one without them, is accepted as well (checked against upstream's binary).
  for (const std::string text : {"", "null\n", "webhook:\n  port: 9443\n",
                                 "apiVersion: config.trainer.kubeflow.org/v1alpha1\n",
                                 "kind: Configuration\n"}) {
    INFO(text);
    StatusOr<Configuration> c = ParseConfiguration(text);
    REQUIRE(c.ok());
    CHECK(c->webhook_port == 9443);
    CHECK(*c->qps == 50);
  }
}

TEST_CASE("strict decoding", "[configuration]") {
  struct Case {
    std::string name, text, error;
  };
  std::vector<Case> cases = {
      {"unknown top-level field", Header() + "foo: 1\n",
       "failed to decode config file: strict decoding error: unknown field \"foo\""},
      {"unknown nested field", Header() + "metrics:\n  bindAdress: :1\n",
       "failed to decode config file: strict decoding error: unknown field "
       "\"metrics.bindAdress\""},
      // Every unknown field, in the order upstream's decoder meets them (keys sorted).
      {"unknown fields", Header() + "zeta: 1\nwebhook:\n  portt: 3\nfoo: 1\nmetrics:\n  b: 1\n",
       "failed to decode config file: strict decoding error: unknown field \"foo\", unknown "
       "field \"metrics.b\", unknown field \"webhook.portt\", unknown field \"zeta\""},
      // A type error wins over unknown fields; of two type errors, the first met.
      {"type error and unknown field", Header() + "foo: 1\nwebhook:\n  port: x\nhealth: 3\n",
       "failed to decode config file: json: cannot unmarshal number into Go struct field "
       "Configuration.health of type v1alpha1.ControllerHealth"},
      {"wrong type", Header() + "webhook:\n  port: \"9443\"\n",
       "failed to decode config file: json: cannot unmarshal string into Go struct field "
       "ControllerWebhook.webhook.port of type int32"},
      {"not an int32", Header() + "webhook:\n  port: 99999999999\n",
       "failed to decode config file: json: cannot unmarshal number 99999999999 into Go struct "
       "field ControllerWebhook.webhook.port of type int32"},
      {"a fraction", Header() + "clientConnection:\n  burst: 1.5\n",
       "failed to decode config file: json: cannot unmarshal number 1.5 into Go struct field "
       "ClientConnection.clientConnection.burst of type int32"},
      {"beyond float32", Header() + "clientConnection:\n  qps: 1e40\n",
       "failed to decode config file: json: cannot unmarshal number 1e+40 into Go struct field "
       "ClientConnection.clientConnection.qps of type float32"},
      {"bool for an int", Header() + "statusServer:\n  port: true\n",
       "failed to decode config file: json: cannot unmarshal bool into Go struct field "
       "StatusServer.statusServer.port of type int32"},
      {"not an object", Header() + "leaderElection: 3\n",
       "failed to decode config file: json: cannot unmarshal number into Go struct field "
       "Configuration.leaderElection of type v1alpha1.LeaderElectionConfiguration"},
      {"a map value", Header() + "featureGates:\n  A: \"x\"\n",
       "failed to decode config file: json: cannot unmarshal string into Go struct field "
       "Configuration.featureGates of type bool"},
      {"not a map", Header() + "controller:\n  groupKindConcurrency: 3\n",
       "failed to decode config file: json: cannot unmarshal number into Go struct field "
       "ControllerConfigurationSpec.controller.groupKindConcurrency of type map[string]int32"},
      {"a list item", Header() + "tls:\n  cipherSuites: [1]\n",
       "failed to decode config file: json: cannot unmarshal number into Go struct field "
       "TLSOptions.tls.cipherSuites of type string"},
      {"not a list", Header() + "tls:\n  cipherSuites: x\n",
       "failed to decode config file: json: cannot unmarshal string into Go struct field "
       "TLSOptions.tls.cipherSuites of type []string"},
      {"a duration not a string", Header() + "leaderElection:\n  leaseDuration: 5\n",
       "failed to decode config file: json: cannot unmarshal number into Go struct field "
       "LeaderElectionConfiguration.leaderElection.leaseDuration of type string"},
      {"a duration without a unit", Header() + "leaderElection:\n  leaseDuration: \"15\"\n",
       "failed to decode config file: time: missing unit in duration \"15\""},
      {"wrong kind", "apiVersion: config.trainer.kubeflow.org/v1alpha1\nkind: Foo\n",
       "failed to decode config file: no kind \"Foo\" is registered for version "
       "\"config.trainer.kubeflow.org/v1alpha1\""},
      {"wrong version, no kind", "apiVersion: foo/v1\n",
       "failed to decode config file: no kind \"Configuration\" is registered for version "
       "\"foo/v1\""},
      {"not an object", "[]\n",
       "failed to decode config file: couldn't get version/kind: expected a Configuration "
       "object, got array"},
      {"bad duration", Header() + "leaderElection:\n  leaseDuration: 15x\n",
       "failed to decode config file: time: unknown unit \"x\" in duration \"15x\""},
      // Keys set twice: go-yaml's strict errors, each at the line where the later value starts
      // (a value's own duplicates first), before the unknown fields; types are checked first, on
      // the later values. Each text is what upstream's v2.3.0 binary prints for the same file.
      {"a key set twice", Header() + "webhook:\n  port: 1\n\n\nwebhook:\n\n  port: 3\n",
       "failed to decode config file: strict decoding error: yaml: unmarshal errors:\n  line 9: "
       "key \"webhook\" already set in map"},
      {"keys set twice, nested first",
       Header() + "webhook:\n  port: 1\nwebhook:\n  port: 2\n  port: 3\n",
       "failed to decode config file: strict decoding error: yaml: unmarshal errors:\n  line 7: "
       "key \"port\" already set in map\n  line 6: key \"webhook\" already set in map"},
      {"a key set twice and unknown fields", Header() + "foo: 1\nfoo: 2\nbar: 3\n",
       "failed to decode config file: strict decoding error: yaml: unmarshal errors:\n  line 4: "
       "key \"foo\" already set in map, unknown field \"bar\", unknown field \"foo\""},
      {"a number key set twice", Header() + "1: a\n1: b\n",
       "failed to decode config file: strict decoding error: yaml: unmarshal errors:\n  line 4: "
       "key 1 already set in map, unknown field \"1\""},
      {"the later value's type error wins", Header() + "webhook:\n  port: 1\nwebhook:\n- 3\n",
       "failed to decode config file: json: cannot unmarshal array into Go struct field "
       "Configuration.webhook of type v1alpha1.ControllerWebhook"},
      {"the later value is the one typed",
       Header() + "webhook:\n  port: \"x\"\nwebhook:\n  port: 3\n",
       "failed to decode config file: strict decoding error: yaml: unmarshal errors:\n  line 6: "
       "key \"webhook\" already set in map"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      StatusOr<Configuration> cfg = ParseConfiguration(c.text);
      REQUIRE_FALSE(cfg.ok());
      CHECK(cfg.status().message() == c.error);
    }
  }
}

TEST_CASE("validation messages are upstream's", "[configuration]") {
  StatusOr<Configuration> cfg = ParseConfiguration(Header() + "webhook:\n  port: 70000\n");
  REQUIRE_FALSE(cfg.ok());
  CHECK(cfg.status().message() ==
        "invalid configuration: webhook.port: Invalid value: 70000: must be between 1 and 65535");

  cfg = ParseConfiguration(
      Header() +
      "clientConnection:\n  qps: -1\n  burst: -2\n"
      "controller:\n  groupKindConcurrency:\n    TrainJob.trainer.kubeflow.org: 0\n");
  REQUIRE_FALSE(cfg.ok());
  CHECK(cfg.status().message() ==
        "invalid configuration: [clientConnection.qps: Invalid value: -1: must be greater than or "
        "equal to 0, clientConnection.burst: Invalid value: -2: must be greater than or equal to "
        "0, controller.groupKindConcurrency[TrainJob.trainer.kubeflow.org]: Invalid value: 0: "
        "must be greater than 0]");

  cfg = ParseConfiguration(Header() + "statusServer:\n  port: 0\n");
  REQUIRE_FALSE(cfg.ok());
  CHECK(cfg.status().message() ==
        "invalid configuration: statusServer.port: Invalid value: 0: must be between 1 and 65535");

  cfg = ParseConfiguration(Header() + "statusServer:\n  qps: -1.5\n  burst: -3\n");
  REQUIRE_FALSE(cfg.ok());
  CHECK(cfg.status().message() ==
        "invalid configuration: [statusServer.qps: Invalid value: -1.5: must be greater than or "
        "equal to 0, statusServer.burst: Invalid value: -3: must be greater than or equal to 0]");
}

TEST_CASE("the fields a file sets, and those a service does not use", "[configuration]") {
  StatusOr<Configuration> cfg = LoadConfiguration(kUpstreamConfig);
  REQUIRE(cfg.ok());
  CHECK(cfg->Has("metrics.bindAddress"));
  CHECK(cfg->Has("controller.groupKindConcurrency[TrainJob.trainer.kubeflow.org]"));
  CHECK_FALSE(cfg->Has("webhook.host"));  // "" is Go's zero value: as good as unset
  CHECK_FALSE(cfg->Has("leaderElection.resourceNamespace"));
  CHECK(IgnoredFields(*cfg, {"leaderElection", "metrics", "health", "controller",
                             "clientConnection", "webhook.port", "statusServer"}) ==
        std::vector<std::string>{"certManagement.enable", "certManagement.webhookSecretName",
                                 "certManagement.webhookServiceName"});
  // A prefix covers whole path segments only.
  StatusOr<Configuration> gates =
      ParseConfiguration(Header() + "featureGates:\n  TrainJobStatus: true\n");
  REQUIRE(gates.ok());
  CHECK(IgnoredFields(*gates, {"feature"}) ==
        std::vector<std::string>{"featureGates[TrainJobStatus]"});
  CHECK(IgnoredFields(*gates, {"featureGates"}).empty());
}

TEST_CASE("a file that cannot be read", "[configuration]") {
  CHECK(LoadConfiguration("/nonexistent.yaml").status().message() ==
        "failed to read config file: open /nonexistent.yaml: no such file or directory");
}

}  // namespace
}  // namespace trainer::service
