// Command-line flags of trainer-webhook. Names follow upstream's manager and controller-runtime
// (--metrics-bind-address, --health-probe-bind-address, --kubeconfig) and klog (-v).
//
//   --port=9443                          webhook HTTPS port
//   --cert-dir=/tmp/k8s-webhook-server/serving-certs   tls.crt / tls.key, reloaded on change
//   --metrics-bind-address=:8080         "0" disables the metrics server
//   --health-probe-bind-address=:8081    "0" disables the probe server
//   --kubeconfig=PATH                    else $KUBECONFIG, else in-cluster
//   -v=N / --v=N                         log verbosity
//   --log-format=text|json
//   --webhook-threads=16                 HTTPS threads kept when idle; one per open connection,
//                                        more start on demand (up to 1,024 connections)
//   --offline-runtimes=FILE              (repeatable) serve runtimes from manifests, no cluster:
//                                        development and benchmarks only
// Both "--flag=value" and "--flag value" are accepted.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/status/status.h"

namespace trainer::webhook {

struct Options {
  int port = 9443;
  std::string cert_dir = "/tmp/k8s-webhook-server/serving-certs";
  std::string metrics_bind_address = ":8080";
  std::string health_probe_bind_address = ":8081";
  std::string kubeconfig;
  int verbosity = 0;
  std::string log_format = "text";
  size_t threads = 16;
  std::vector<std::string> offline_runtimes;
  bool help = false;
};

// `args` without the program name. Errors name the flag: "--port: expected an integer, got \"x\"".
StatusOr<Options> ParseOptions(const std::vector<std::string>& args);
std::string Usage();

}  // namespace trainer::webhook
