// Options of trainer-webhook: command-line flags (common/flags) and, with --config, upstream's
// Configuration file (common/service/configuration.h). Names follow upstream's manager and
// controller-runtime (--metrics-bind-address, --health-probe-bind-address, --kubeconfig) and klog
// (-v); `trainer-webhook --help` lists them. Of the file, the webhook uses webhook.port,
// webhook.host, metrics and health.healthProbeBindAddress; the rest is logged as ignored (its
// client is not rate-limited by clientConnection: APF protects the apiserver, and a client-side
// limit would slow admissions that read PriorityClasses or JobSets).
//
// Precedence: an explicitly given flag, then the file, then the default.
//
//   StatusOr<Options> o = ParseOptions({"--port=9443", "--cert-dir", "/certs"});
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/service/frame.h"
#include "common/status/status.h"

namespace trainer::webhook {

struct Options {
  int port = 9443;
  std::string host;  // webhook.host of the file; "" = every interface
  std::string cert_dir = "/tmp/k8s-webhook-server/serving-certs";
  std::string kubeconfig;
  size_t threads = 16;
  std::vector<std::string> offline_runtimes;
  service::FrameOptions frame = {.program = "trainer-webhook",
                                 .health_probe_bind_address = ":8081",
                                 .metrics_bind_address = ":8080"};
  bool help = false;

  // The webhook server's bind address: "host:port", "[v6]:port" or ":port".
  std::string Address() const;
};

// `args` without the program name. Errors name the flag as written (common/flags/flags.h).
StatusOr<Options> ParseOptions(const std::vector<std::string>& args);
std::string Usage();

}  // namespace trainer::webhook
