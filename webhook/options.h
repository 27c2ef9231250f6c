// Options of trainer-webhook: command-line flags (common/flags) and, with --config, upstream's
// Configuration file (common/service/configuration.h). Names follow upstream's manager and
// controller-runtime (--metrics-bind-address, --health-probe-bind-address, --kubeconfig) and klog
// (-v); `trainer-webhook --help` lists them. Of the file, the webhook uses webhook.port,
// webhook.host, metrics, health.healthProbeBindAddress, the certManagement fields it sets
// (their defaults are upstream's Service name, not ours), featureGates and statusServer (port,
// and qps/burst of the status writer: upstream's 5/10 whenever a file is given); the rest is
// logged as ignored (its
// client is not rate-limited by clientConnection: APF protects the apiserver, and a client-side
// limit would slow admissions that read PriorityClasses or JobSets).
//
// Precedence: an explicitly given flag, then the file, then the default.
//
//   StatusOr<Options> o = ParseOptions({"--port=9443", "--cert-dir", "/certs"});
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "common/http/server.h"
#include "common/service/frame.h"
#include "common/status/status.h"
#include "runtime/features/features.h"

namespace trainer::webhook {

struct Options {
  int port = 9443;
  std::string host;  // webhook.host of the file; "" = every interface
  std::string cert_dir = "/tmp/k8s-webhook-server/serving-certs";
  // Built-in certificate management (upstream's certManagement; certs/rotator.h): the serving
  // certificate is issued, renewed and rotated in-process through the Secret, and caBundle of
  // both configurations kept, instead of read from cert_dir.
  bool cert_management = false;
  std::string webhook_service_name = "trainer-webhook";
  std::string webhook_secret_name = "kubeflow-trainer-webhook-cert";
  std::string webhook_secret_namespace;  // "" = the pod's namespace
  std::string mutating_webhook_configuration = "defaulter.trainer.kubeflow.org";
  std::string validating_webhook_configuration = "validator.trainer.kubeflow.org";
  std::chrono::milliseconds cert_propagation{60000};
  std::chrono::milliseconds cert_report_interval{20000};
  std::string kubeconfig;
  size_t threads = 16;
  // The webhook server's busy poll after each response (http::ServerOptions::busy_poll).
  std::chrono::microseconds busy_poll = http::kDefaultBusyPoll;
  std::vector<std::string> offline_runtimes;
  // --feature-gates over the file's featureGates. TrainJobStatus serves the status server.
  features::FeatureGates feature_gates;
  int status_server_port = 10443;
  std::chrono::milliseconds status_write_interval{0};
  bool status_server_require_pod_binding = false;
  double status_server_qps = 0;  // 0: no client-side limit (no file given)
  int status_server_burst = 0;
  service::FrameOptions frame = {.program = "trainer-webhook",
                                 .health_probe_bind_address = ":8081",
                                 .metrics_bind_address = ":8080"};
  bool help = false;

  // The webhook server's bind address: "host:port", "[v6]:port" or ":port".
  std::string Address() const;
  // The status server's, on the same host.
  std::string StatusServerAddress() const;
};

// `args` without the program name. Errors name the flag as written (common/flags/flags.h).
StatusOr<Options> ParseOptions(const std::vector<std::string>& args);
std::string Usage();

}  // namespace trainer::webhook
