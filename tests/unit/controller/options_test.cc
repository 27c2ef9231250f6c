// Flags and upstream's Configuration file: strict decoding, defaults, validation messages.
#include "controller/options.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

namespace trainer::controller {
namespace {

// manifests/base/manager/controller_manager_config.yaml of upstream v2.3.0, as shipped.
constexpr char kUpstreamConfig[] = R"(apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
# Health configuration
health:
  healthProbeBindAddress: :8081
  readinessEndpointName: readyz
  livenessEndpointName: healthz
metrics:
  bindAddress: :8443
  secureServing: true
webhook:
  port: 9443
  host: ""
leaderElection:
  leaderElect: true
  resourceName: trainer.kubeflow.org
  resourceNamespace: ""
  leaseDuration: 15s
  renewDeadline: 10s
  retryPeriod: 2s
controller:
  groupKindConcurrency:
    TrainJob.trainer.kubeflow.org: 5
    TrainingRuntime.trainer.kubeflow.org: 1
    ClusterTrainingRuntime.trainer.kubeflow.org: 1
certManagement:
  enable: true
  webhookServiceName: kubeflow-trainer-controller-manager
  webhookSecretName: kubeflow-trainer-webhook-cert
clientConnection:
  qps: 50
  burst: 100
statusServer:
  port: 10443
  qps: 5
  burst: 10
)";

std::string Header() {
  return "apiVersion: config.trainer.kubeflow.org/v1alpha1\nkind: Configuration\n";
}

TEST_CASE("upstream's shipped Configuration is accepted", "[options]") {
  StatusOr<Configuration> cfg = ParseConfiguration(kUpstreamConfig);
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
}

TEST_CASE("defaults of an empty Configuration", "[options]") {
  StatusOr<Configuration> cfg = ParseConfiguration(Header());
  REQUIRE(cfg.ok());
  CHECK_FALSE(cfg->leader_election.has_value());
  CHECK(*cfg->qps == 50);
  CHECK(*cfg->burst == 100);
  CHECK(cfg->webhook_port == 9443);
  CHECK(cfg->metrics_bind_address == ":8443");
  CHECK(cfg->metrics_secure_serving);
}

TEST_CASE("strict decoding", "[options]") {
  struct Case {
    std::string name, text, error;
  };
  std::vector<Case> cases = {
      {"unknown top-level field", Header() + "foo: 1\n",
       "failed to decode config file: strict decoding error: unknown field \"foo\""},
      {"unknown nested field", Header() + "metrics:\n  bindAdress: :1\n",
       "failed to decode config file: strict decoding error: unknown field "
       "\"metrics.bindAdress\""},
      {"wrong type", Header() + "webhook:\n  port: \"9443\"\n",
       "failed to decode config file: json: cannot unmarshal string into field webhook.port of "
       "type int32"},
      {"wrong kind", "apiVersion: config.trainer.kubeflow.org/v1alpha1\nkind: Foo\n",
       "failed to decode config file: no kind \"Foo\" is registered for version "
       "\"config.trainer.kubeflow.org/v1alpha1\""},
      {"missing kind", "apiVersion: config.trainer.kubeflow.org/v1alpha1\n",
       "failed to decode config file: Object 'Kind' is missing in config file"},
      {"bad duration", Header() + "leaderElection:\n  leaseDuration: 15x\n",
       "failed to decode config file: time: invalid duration \"15x\""},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      StatusOr<Configuration> cfg = ParseConfiguration(c.text);
      REQUIRE_FALSE(cfg.ok());
      CHECK(cfg.status().message() == c.error);
    }
  }
}

TEST_CASE("validation messages are upstream's", "[options]") {
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

TEST_CASE("Go durations", "[options]") {
  CHECK(*ParseGoDuration("15s") == std::chrono::seconds(15));
  CHECK(*ParseGoDuration("1m30s") == std::chrono::seconds(90));
  CHECK(*ParseGoDuration("500ms") == std::chrono::milliseconds(500));
  CHECK(*ParseGoDuration("1.5h") == std::chrono::minutes(90));
  CHECK_FALSE(ParseGoDuration("10").ok());
  CHECK_FALSE(ParseGoDuration("").ok());
}

StatusOr<Options> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "trainer-controller");
  return ParseOptions(static_cast<int>(args.size()), args.data());
}

TEST_CASE("flags: defaults, forms, and precedence over the file", "[options]") {
  StatusOr<Options> o = Parse({});
  REQUIRE(o.ok());
  CHECK(o->trainjob_workers == 5);
  CHECK(o->kube_api_qps == 0);
  CHECK_FALSE(o->leader_elect);
  CHECK_FALSE(o->lifecycle_conditions);
  CHECK_FALSE(o->protect_runtimes_in_use);

  o = Parse({"--trainjob-workers=8", "--leader-elect", "--kube-api-qps", "20",
             "--lifecycle-conditions=true", "--zap-log-level=2"});
  REQUIRE(o.ok());
  CHECK(o->trainjob_workers == 8);
  CHECK(o->leader_elect);
  CHECK(o->kube_api_qps == 20);
  CHECK(o->lifecycle_conditions);
  CHECK(o->verbosity == 2);

  std::string path = "/tmp/trainer-controller-options-test.yaml";
  {
    std::ofstream f(path);
    f << kUpstreamConfig;
  }
  o = Parse({"--config", path.c_str()});
  REQUIRE(o.ok());
  CHECK(o->leader_elect);
  CHECK(o->trainjob_workers == 5);
  CHECK(o->kube_api_qps == 50);
  CHECK(o->kube_api_burst == 100);
  o = Parse({"--config", path.c_str(), "--leader-elect=false", "--trainjob-workers=16",
             "--kube-api-qps=0"});
  REQUIRE(o.ok());
  CHECK_FALSE(o->leader_elect);
  CHECK(o->trainjob_workers == 16);
  CHECK(o->kube_api_qps == 0);
  std::remove(path.c_str());

  CHECK(Parse({"--nope"}).status().message() == "unknown flag: --nope");
  CHECK_FALSE(Parse({"--trainjob-workers=0"}).ok());
  CHECK(Parse({"--config=/nonexistent.yaml"}).status().message() ==
        "failed to read config file: open /nonexistent.yaml: no such file or directory");
}

}  // namespace
}  // namespace trainer::controller
