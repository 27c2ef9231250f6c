// trainer-controller's flags and how upstream's Configuration file merges with them (the file's
// own decoding is tested in tests/unit/common/service/configuration_test.cc).
#include "controller/options.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/flags/flags.h"
#include "runtime/features/features.h"

namespace trainer::controller {
namespace {

constexpr char kUpstreamConfig[] =
    "tests/unit/common/service/testdata/controller_manager_config.yaml";

TEST_CASE("flags: defaults, forms, and precedence over the file", "[options]") {
  StatusOr<Options> o = ParseOptions({});
  REQUIRE(o.ok());
  CHECK(o->trainjob_workers == 5);
  CHECK(o->kube_api_qps == 0);
  CHECK_FALSE(o->leader_elect);
  CHECK_FALSE(o->lifecycle_conditions);
  CHECK_FALSE(o->protect_runtimes_in_use);
  CHECK(o->frame.metrics_bind_address == ":8443");
  CHECK(o->frame.metrics_secure_serving);
  CHECK(o->frame.health_probe_bind_address == ":8081");
  CHECK(o->frame.program == "trainer-controller");
  CHECK(o->frame.log_format == "json");  // upstream's manager logs JSON by default

  o = ParseOptions({"--trainjob-workers=8", "--leader-elect", "--kube-api-qps", "20",
                    "--lifecycle-conditions=true", "--zap-log-level=2", "--zap-encoder=json"});
  REQUIRE(o.ok());
  CHECK(o->trainjob_workers == 8);
  CHECK(o->leader_elect);
  CHECK(o->kube_api_qps == 20);
  CHECK(o->lifecycle_conditions);
  CHECK(o->frame.verbosity == 2);
  CHECK(o->frame.log_format == "json");
  // -v and --log-format win over the zap flags, wherever they are.
  o = ParseOptions({"--v=3", "--zap-log-level=2", "--log-format=text", "--zap-encoder=json"});
  REQUIRE(o.ok());
  CHECK(o->frame.verbosity == 3);
  CHECK(o->frame.log_format == "text");

  o = ParseOptions({"--config", kUpstreamConfig});
  REQUIRE(o.ok());
  CHECK(o->leader_elect);
  CHECK(o->trainjob_workers == 5);
  CHECK(o->kube_api_qps == 50);
  CHECK(o->kube_api_burst == 100);
  o = ParseOptions({"--config", kUpstreamConfig, "--leader-elect=false", "--trainjob-workers=16",
                    "--kube-api-qps=0", "--metrics-bind-address=:9090"});
  REQUIRE(o.ok());
  CHECK_FALSE(o->leader_elect);
  CHECK(o->trainjob_workers == 16);
  CHECK(o->kube_api_qps == 0);
  CHECK(o->frame.metrics_bind_address == ":9090");
}

TEST_CASE("errors: one wording for every binary", "[options]") {
  CHECK(ParseOptions({"--nope"}).status().message() == "unknown flag \"--nope\"");
  CHECK(ParseOptions({"--trainjob-workers=0"}).status().message() ==
        "flag \"--trainjob-workers\": 0 is out of range [1, 1000]");
  CHECK(ParseOptions({"--leader-elect=maybe"}).status().message() ==
        "flag \"--leader-elect\": expected true or false, got \"maybe\"");
  CHECK(ParseOptions({"--config=/nonexistent.yaml"}).status().message() ==
        "failed to read config file: open /nonexistent.yaml: no such file or directory");
  // Upstream's main exits 2 for a command line Go's flag package refuses, 1 for what it finds
  // after (the file, the feature gates).
  auto exit_code = [](const std::vector<std::string>& args) {
    std::ostringstream out, err;
    StatusOr<Options> o = ParseOptions(args);
    return flags::ExitEarly("trainer-controller", o.status(), false, "", out, err);
  };
  CHECK(exit_code({"--nope"}) == 2);
  CHECK(exit_code({"--leader-elect=maybe"}) == 2);
  CHECK(exit_code({"--config=/nonexistent.yaml"}) == 1);
  CHECK(exit_code({"--feature-gates=Bogus=true"}) == 1);
  StatusOr<Options> h = ParseOptions({"--help"});
  REQUIRE(h.ok());
  CHECK(h->help);
}

TEST_CASE("leader election timings client-go would refuse are refused", "[options]") {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "trainer-controller-options-test-le.yaml";
  auto with = [&](const std::string& le) {
    std::ofstream(path) << "apiVersion: config.trainer.kubeflow.org/v1alpha1\n"
                           "kind: Configuration\n"
                           "leaderElection:\n  leaderElect: true\n" << le;
    return ParseOptions({"--config", path.string()});
  };
  StatusOr<Options> o = with("  leaseDuration: 5s\n  renewDeadline: 10s\n");
  REQUIRE_FALSE(o.ok());
  CHECK(o.status().message() ==
        "leaderElection: leaseDuration must be greater than renewDeadline");
  o = with("  renewDeadline: 2s\n  retryPeriod: 2s\n");
  REQUIRE_FALSE(o.ok());
  CHECK(o.status().message() ==
        "leaderElection: renewDeadline must be greater than retryPeriod*JitterFactor (1.2)");
  // Negative durations parse, as Go's do, and are refused; 0 means unset (the default).
  o = with("  retryPeriod: -1s\n");
  REQUIRE_FALSE(o.ok());
  CHECK(o.status().message() == "leaderElection: retryPeriod must be greater than zero");
  o = with("  leaseDuration: -15s\n");
  REQUIRE_FALSE(o.ok());
  CHECK(o.status().message() ==
        "leaderElection: leaseDuration must be greater than renewDeadline");
  o = with("  leaseDuration: 0s\n");
  REQUIRE(o.ok());
  CHECK(o->lease_duration == std::chrono::seconds(15));
  o = with("  leaseDuration: 30s\n  renewDeadline: 20s\n  retryPeriod: 5s\n");
  REQUIRE(o.ok());
  CHECK(o->lease_duration == std::chrono::seconds(30));
  // Without leader election the timings are not used, as upstream.
  std::ofstream(path) << "apiVersion: config.trainer.kubeflow.org/v1alpha1\nkind: Configuration\n"
                         "leaderElection:\n  leaderElect: false\n  leaseDuration: 1s\n";
  CHECK(ParseOptions({"--config", path.string()}).ok());
  std::filesystem::remove(path);
}

TEST_CASE("a groupKindConcurrency above the workers' maximum is capped, not refused", "[options]") {
  // Upstream runs one worker whatever the key says, so a file it starts with must start us.
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "trainer-controller-options-test-gkc.yaml";
  auto with = [&](int workers, std::vector<std::string> more = {}) {
    std::ofstream(path) << "apiVersion: config.trainer.kubeflow.org/v1alpha1\n"
                           "kind: Configuration\n"
                           "controller:\n  groupKindConcurrency:\n"
                           "    TrainJob.trainer.kubeflow.org: " << workers << "\n";
    more.insert(more.begin(), {"--config", path.string()});
    return ParseOptions(more);
  };
  StatusOr<Options> o = with(5000);
  REQUIRE(o.ok());
  CHECK(o->trainjob_workers == kMaxTrainJobWorkers);
  CHECK(o->frame.capped_config_values ==
        std::vector<std::string>{
            "controller.groupKindConcurrency[TrainJob.trainer.kubeflow.org]: 5000, 1000 TrainJob "
            "workers run"});
  o = with(1000);
  REQUIRE(o.ok());
  CHECK(o->trainjob_workers == 1000);
  CHECK(o->frame.capped_config_values.empty());
  o = with(5000, {"--trainjob-workers=7"});  // the flag wins, and nothing is capped
  REQUIRE(o.ok());
  CHECK(o->trainjob_workers == 7);
  CHECK(o->frame.capped_config_values.empty());
  // Upstream's own validation still refuses what it refuses.
  o = with(0);
  REQUIRE_FALSE(o.ok());
  CHECK(o.status().message().find("controller.groupKindConcurrency[TrainJob.trainer.kubeflow.org]: "
                                  "Invalid value: 0: must be greater than 0") != std::string::npos);
  // The flag is ours: out of its range is an error.
  CHECK(ParseOptions({"--trainjob-workers=5000"}).status().message() ==
        "flag \"--trainjob-workers\": 5000 is out of range [1, 1000]");
  std::filesystem::remove(path);
}

TEST_CASE("the file's fields the controller does not use are listed once", "[options]") {
  StatusOr<Options> o = ParseOptions({"--config", kUpstreamConfig});
  REQUIRE(o.ok());
  CHECK(o->frame.ignored_config_fields ==  // in the order upstream's decoder meets them
        std::vector<std::string>{
            "certManagement.enable",
            "controller.groupKindConcurrency[ClusterTrainingRuntime.trainer.kubeflow.org]",
            "controller.groupKindConcurrency[TrainingRuntime.trainer.kubeflow.org]",
            "health.livenessEndpointName",
            "health.readinessEndpointName",
            "statusServer.burst",
            "statusServer.qps",
            "webhook.port"
        });
  // What the TrainJobStatus plugin reads, as the file sets it: upstream's Service name.
  CHECK(o->webhook_service_name == "kubeflow-trainer-controller-manager");
  CHECK(o->webhook_secret_name == "kubeflow-trainer-webhook-cert");
  CHECK(o->status_server_port == 10443);
  CHECK_FALSE(o->feature_gates.Enabled(features::kTrainJobStatus));
}

TEST_CASE("TrainJobStatus: the gate and what its plugin reads", "[options]") {
  StatusOr<Options> o = ParseOptions({});
  REQUIRE(o.ok());
  CHECK_FALSE(o->feature_gates.Enabled(features::kTrainJobStatus));
  CHECK(o->webhook_service_name == "trainer-webhook");
  CHECK(o->webhook_secret_name == "kubeflow-trainer-webhook-cert");
  CHECK(o->webhook_secret_namespace.empty());
  CHECK(o->status_server_port == 10443);
  CHECK(o->progress_stale_after == std::chrono::minutes(10));
  o = ParseOptions({"--feature-gates=TrainJobStatus=true", "--webhook-service-name=svc",
                    "--webhook-secret-name=s", "--webhook-secret-namespace=ops",
                    "--status-server-port=8443", "--progress-stale-after=90s"});
  REQUIRE(o.ok());
  CHECK(o->feature_gates.Enabled(features::kTrainJobStatus));
  CHECK(o->webhook_service_name == "svc");
  CHECK(o->webhook_secret_name == "s");
  CHECK(o->webhook_secret_namespace == "ops");
  CHECK(o->status_server_port == 8443);
  CHECK(o->progress_stale_after == std::chrono::seconds(90));
  CHECK(ParseOptions({"--feature-gates=TrainJobStatus"}).status().message() ==
        "flag \"--feature-gates\": missing bool value for TrainJobStatus");
  // The flag wins over the file's featureGates.
  o = ParseOptions({"--config", kUpstreamConfig, "--feature-gates=TrainJobStatus=true",
                    "--webhook-service-name=trainer-webhook"});
  REQUIRE(o.ok());
  CHECK(o->feature_gates.Enabled(features::kTrainJobStatus));
  CHECK(o->webhook_service_name == "trainer-webhook");
}

}  // namespace
}  // namespace trainer::controller
