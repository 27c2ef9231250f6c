// trainer-webhook's flags and the fields of upstream's Configuration file it uses.
#include "webhook/options.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/flags/flags.h"

namespace trainer::webhook {
namespace {

constexpr char kUpstreamConfig[] =
    "tests/unit/common/service/testdata/controller_manager_config.yaml";

TEST_CASE("defaults match upstream's manager and the brief") {
  auto o = ParseOptions({});
  REQUIRE(o.ok());
  CHECK(o->port == 9443);
  CHECK(o->Address() == ":9443");
  CHECK(o->cert_dir == "/tmp/k8s-webhook-server/serving-certs");
  CHECK(o->frame.metrics_bind_address == ":8080");
  CHECK_FALSE(o->frame.metrics_secure_serving);
  CHECK(o->frame.health_probe_bind_address == ":8081");
  CHECK(o->frame.log_format == "json");  // controller-runtime's production mode
  CHECK(o->frame.verbosity == 0);
  CHECK(o->frame.program == "trainer-webhook");
  CHECK(o->threads == 16);
  CHECK(o->busy_poll == http::ServerOptions{}.busy_poll);
}

TEST_CASE("both --flag=value and --flag value, -v and --v") {
  auto o =
      ParseOptions({"--port=10443", "--cert-dir", "/certs", "-v=3", "--log-format=json",
                    "--kubeconfig", "/k", "--metrics-bind-address=0", "--offline-runtimes=a.yaml",
                    "--offline-runtimes", "b.yaml", "--webhook-threads=8", "--busy-poll=20us"});
  REQUIRE(o.ok());
  CHECK(o->port == 10443);
  CHECK(o->cert_dir == "/certs");
  CHECK(o->frame.verbosity == 3);
  CHECK(o->frame.log_format == "json");
  CHECK(o->kubeconfig == "/k");
  CHECK(o->frame.metrics_bind_address == "0");
  CHECK(o->offline_runtimes == std::vector<std::string>{"a.yaml", "b.yaml"});
  CHECK(o->threads == 8);
  CHECK(o->busy_poll == std::chrono::microseconds(20));
  auto v = ParseOptions({"--v", "2"});
  REQUIRE(v.ok());
  CHECK(v->frame.verbosity == 2);
}

// Upstream's manifests pass --zap-log-level to its one manager; both services take the zap flags.
TEST_CASE("upstream's zap flags") {
  const struct {
    std::vector<std::string> args;
    int verbosity;
    const char* log_format;
  } cases[] = {
      {{}, 0, "json"},  // without any flag, JSON like upstream's production mode
      {{"--zap-log-level=2", "--zap-encoder=json", "--zap-devel", "--zap-stacktrace-level=panic",
        "--zap-time-encoding=rfc3339"},
       2,
       "json"},
      {{"--zap-log-level=debug", "--zap-encoder=console"}, 1, "text"},
      {{"--zap-log-level=Error"}, 0, "json"},  // upstream's manifests pass only this one
      // -v and --log-format win, wherever they are.
      {{"--v=3", "--zap-log-level=2", "--log-format=text", "--zap-encoder=json"}, 3, "text"},
      // --zap-devel picks zap's development (console, debug) or production (JSON, info)
      // defaults; --zap-encoder and --zap-log-level win over them.
      {{"--zap-devel"}, 1, "text"},
      {{"--zap-devel=false"}, 0, "json"},
      {{"--zap-devel=false", "--zap-encoder=console", "--zap-log-level=3"}, 3, "text"},
      {{"--zap-devel", "--log-format=json", "--v=0"}, 0, "json"},
  };
  for (const auto& c : cases) {
    std::string line;
    for (const std::string& a : c.args) line += a + " ";
    INFO(line);
    auto o = ParseOptions(c.args);
    REQUIRE(o.ok());
    CHECK(o->frame.verbosity == c.verbosity);
    CHECK(o->frame.log_format == c.log_format);
  }
  // controller-runtime refuses what it cannot use.
  for (const std::string& bad : {std::string("--zap-devel=maybe"),
                                 std::string("--zap-log-level=loud"),
                                 std::string("--zap-log-level=0"),
                                 std::string("--zap-encoder=xml"),
                                 std::string("--zap-time-encoding=unix")}) {
    INFO(bad);
    CHECK_FALSE(ParseOptions({bad}).ok());
  }
  CHECK(ParseOptions({"--zap-log-level=loud"}).status().message() ==
        "flag \"--zap-log-level\": invalid log level \"loud\"");
}

// The wording is common/flags' (one for every binary); before it, this binary said
// "--port: expected an integer, got \"x\"" and "unknown flag \"--nope=1\"".
TEST_CASE("errors name the flag") {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  std::vector<Case> cases = {
      {{"--port=x"}, "flag \"--port\": expected an integer, got \"x\""},
      {{"--port=70000"}, "flag \"--port\": 70000 is out of range [1, 65535]"},
      {{"--log-format=xml"}, "flag \"--log-format\": expected text or json, got \"xml\""},
      {{"--nope=1"}, "unknown flag \"--nope\""},
      {{"--port"}, "flag \"--port\" needs a value"},
      {{"stray"}, "unexpected argument \"stray\""},
      {{"--busy-poll=1s"}, "flag \"--busy-poll\": 1s is out of range [0s, 10ms]"},
      {{"--busy-poll=50"}, "flag \"--busy-poll\": time: missing unit in duration \"50\""},
  };
  for (const Case& c : cases) {
    auto o = ParseOptions(c.args);
    REQUIRE_FALSE(o.ok());
    CHECK(o.status().message() == c.message);
    std::ostringstream out, err;
    CHECK(flags::ExitEarly("trainer-webhook", o.status(), false, "", out, err) == 2);
  }
  // What the flags name but only later fails exits 1, as upstream's main.
  for (const char* arg : {"--config=/nonexistent.yaml", "--feature-gates=Bogus=true"}) {
    std::ostringstream out, err;
    auto o = ParseOptions({arg});
    CHECK(flags::ExitEarly("trainer-webhook", o.status(), false, "", out, err) == 1);
  }
  auto h = ParseOptions({"--help"});
  REQUIRE(h.ok());
  CHECK(h->help);
}

TEST_CASE("--config: the webhook's fields apply, flags win, the rest is listed as ignored") {
  auto o = ParseOptions({"--config", kUpstreamConfig});
  REQUIRE(o.ok());
  CHECK(o->port == 9443);
  CHECK(o->frame.metrics_bind_address == ":8443");  // the file's
  CHECK(o->frame.metrics_secure_serving);
  CHECK(o->frame.health_probe_bind_address == ":8081");
  CHECK(o->frame.ignored_config_fields ==  // in the order upstream's decoder meets them
        std::vector<std::string>{
            "clientConnection.burst",
            "clientConnection.qps",
            "controller.groupKindConcurrency[ClusterTrainingRuntime.trainer.kubeflow.org]",
            "controller.groupKindConcurrency[TrainJob.trainer.kubeflow.org]",
            "controller.groupKindConcurrency[TrainingRuntime.trainer.kubeflow.org]",
            "health.livenessEndpointName",
            "health.readinessEndpointName",
            "leaderElection.leaderElect",
            "leaderElection.leaseDuration",
            "leaderElection.renewDeadline",
            "leaderElection.resourceName",
            "leaderElection.retryPeriod"
        });
  CHECK(o->status_server_port == 10443);
  CHECK(o->status_server_qps == 5);  // the file's, as upstream's status server client
  CHECK(o->status_server_burst == 10);
  CHECK_FALSE(o->feature_gates.Enabled(features::kTrainJobStatus));
  // certManagement as the file sets it: upstream's Service name, since the file names it.
  CHECK(o->cert_management);
  CHECK(o->webhook_service_name == "kubeflow-trainer-controller-manager");
  CHECK(o->webhook_secret_name == "kubeflow-trainer-webhook-cert");
  o = ParseOptions({"--config", kUpstreamConfig, "--port=10443", "--metrics-bind-address=:8080",
                    "--cert-management=false", "--webhook-service-name=trainer-webhook"});
  REQUIRE(o.ok());
  CHECK(o->port == 10443);
  CHECK(o->frame.metrics_bind_address == ":8080");
  CHECK_FALSE(o->cert_management);
  CHECK(o->webhook_service_name == "trainer-webhook");
}

TEST_CASE("certificate management: off by default (files in --cert-dir); its flags") {
  auto d = ParseOptions({});
  REQUIRE(d.ok());
  CHECK_FALSE(d->cert_management);
  CHECK(d->webhook_service_name == "trainer-webhook");
  CHECK(d->webhook_secret_name == "kubeflow-trainer-webhook-cert");
  CHECK(d->webhook_secret_namespace.empty());
  CHECK(d->mutating_webhook_configuration == "defaulter.trainer.kubeflow.org");
  CHECK(d->validating_webhook_configuration == "validator.trainer.kubeflow.org");
  CHECK(d->cert_propagation == std::chrono::seconds(60));
  CHECK(d->cert_report_interval == std::chrono::seconds(20));
  auto o =
      ParseOptions({"--cert-management", "--webhook-service-name=svc", "--webhook-secret-name=s",
                    "--webhook-secret-namespace=ns", "--mutating-webhook-configuration=m",
                    "--validating-webhook-configuration=v", "--cert-propagation-delay=2s",
                    "--cert-report-interval=1s"});
  REQUIRE(o.ok());
  CHECK(o->cert_management);
  CHECK(o->webhook_service_name == "svc");
  CHECK(o->webhook_secret_name == "s");
  CHECK(o->webhook_secret_namespace == "ns");
  CHECK(o->mutating_webhook_configuration == "m");
  CHECK(o->validating_webhook_configuration == "v");
  CHECK(o->cert_propagation == std::chrono::seconds(2));
  CHECK(o->cert_report_interval == std::chrono::seconds(1));
  CHECK(ParseOptions({"--cert-report-interval=100ms"}).status().message() ==
        "flag \"--cert-report-interval\": 100ms is shorter than 1s");
}

TEST_CASE("the status server: feature gate, port, write interval, pod binding") {
  auto o = ParseOptions({});
  REQUIRE(o.ok());
  CHECK_FALSE(o->feature_gates.Enabled(features::kTrainJobStatus));
  CHECK(o->status_server_port == 10443);
  CHECK(o->StatusServerAddress() == ":10443");
  CHECK(o->status_write_interval.count() == 0);
  CHECK_FALSE(o->status_server_require_pod_binding);
  CHECK(o->status_server_qps == 0);  // no file: no client-side limit
  o = ParseOptions({"--feature-gates=TrainJobStatus=true", "--status-server-port=20443",
                    "--status-write-interval=2s", "--status-server-require-pod-binding"});
  REQUIRE(o.ok());
  CHECK(o->feature_gates.Enabled(features::kTrainJobStatus));
  CHECK(o->status_server_port == 20443);
  CHECK(o->status_write_interval == std::chrono::seconds(2));
  CHECK(o->status_server_require_pod_binding);
  CHECK(ParseOptions({"--feature-gates=Nope=true"}).status().message() ==
        "flag \"--feature-gates\": unrecognized feature gate: Nope");
  CHECK(ParseOptions({"--status-write-interval=-1s"}).status().message() ==
        "flag \"--status-write-interval\": -1s is shorter than 0s");
  CHECK_FALSE(ParseOptions({"--status-write-interval=5"}).ok());
}

TEST_CASE("the file's featureGates, then --feature-gates over them") {
  std::string path = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                     "/webhook-options-test-" + std::to_string(getpid()) + ".yaml";
  {
    std::ofstream f(path);
    f << "apiVersion: config.trainer.kubeflow.org/v1alpha1\nkind: Configuration\n"
         "featureGates: {TrainJobStatus: true}\nstatusServer: {port: 11443}\n";
  }
  auto o = ParseOptions({"--config", path});
  REQUIRE(o.ok());
  CHECK(o->feature_gates.Enabled(features::kTrainJobStatus));
  CHECK(o->status_server_port == 11443);
  CHECK(o->frame.ignored_config_fields.empty());
  o = ParseOptions({"--config", path, "--feature-gates", "TrainJobStatus=false",
                    "--status-server-port", "12443"});
  REQUIRE(o.ok());
  CHECK_FALSE(o->feature_gates.Enabled(features::kTrainJobStatus));
  CHECK(o->status_server_port == 12443);
  {
    std::ofstream f(path);
    f << "apiVersion: config.trainer.kubeflow.org/v1alpha1\nkind: Configuration\n"
         "featureGates: {Unknown: true}\n";
  }
  CHECK(ParseOptions({"--config", path}).status().message() ==
        "featureGates: unrecognized feature gate: Unknown");
  std::remove(path.c_str());
}

TEST_CASE("webhook.host binds the server to one address") {
  Options o;
  o.host = "127.0.0.1";
  CHECK(o.Address() == "127.0.0.1:9443");
  o.host = "::1";
  CHECK(o.Address() == "[::1]:9443");
}

}  // namespace
}  // namespace trainer::webhook
