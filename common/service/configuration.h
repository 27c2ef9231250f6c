// Upstream's Configuration file (config.trainer.kubeflow.org/v1alpha1, kind Configuration;
// upstream pkg/apis/config/v1alpha1 and pkg/config/{config.go,validation.go}, v2.3.0), which
// both services accept with --config.
//
// The file is decoded strictly, as upstream's UniversalDecoder with EnableStrict: unknown fields,
// a wrong apiVersion or kind, and wrongly typed values are errors. Every field upstream's file
// may hold is accepted and validated with upstream's messages ("invalid configuration:
// webhook.port: Invalid value: 70000: must be between 1 and 65535"); each service applies the
// fields that concern it and reports the others, once at start-up, as ignored (`fields` lists
// what the file sets, IgnoredFields picks the rest).
//
//   ASSIGN_OR_RETURN(Configuration cfg, LoadConfiguration(path));
//   frame.ignored_config_fields = IgnoredFields(cfg, {"metrics", "health.healthProbeBindAddress"});
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status/status.h"

namespace trainer::service {

inline constexpr char kConfigAPIVersion[] = "config.trainer.kubeflow.org/v1alpha1";

// The decoded Configuration with upstream's defaults applied (SetDefaults_Configuration).
struct Configuration {
  int32_t webhook_port = 9443;
  std::string webhook_host;
  struct LeaderElection {
    bool leader_elect = false;
    std::string resource_lock;
    std::string resource_name;
    std::string resource_namespace;
    std::chrono::milliseconds lease_duration{15000};
    std::chrono::milliseconds renew_deadline{10000};
    std::chrono::milliseconds retry_period{2000};
  };
  std::optional<LeaderElection> leader_election;  // absent: election off
  std::string metrics_bind_address = ":8443";
  bool metrics_secure_serving = true;
  std::string health_probe_bind_address = ":8081";
  std::map<std::string, int32_t> group_kind_concurrency;
  std::optional<double> qps;     // clientConnection.qps (default 50 when the file sets none)
  std::optional<int32_t> burst;  // clientConnection.burst (default 100)
  std::map<std::string, bool> feature_gates;
  // certManagement: upstream's built-in certificate rotation.
  bool cert_management_enable = true;
  std::string webhook_service_name = "kubeflow-trainer-controller-manager";
  std::string webhook_secret_name = "kubeflow-trainer-webhook-cert";
  // statusServer (feature gate TrainJobStatus).
  int32_t status_server_port = 10443;
  std::optional<double> status_server_qps;     // default 5 when the file sets none
  std::optional<int32_t> status_server_burst;  // default 10

  // Every field the file sets (not null, not ""), as a path: "metrics.bindAddress",
  // "controller.groupKindConcurrency[TrainJob.trainer.kubeflow.org]", "featureGates[X]".
  std::vector<std::string> fields;
  bool Has(std::string_view path) const;
};

// Parses and validates a Configuration document (YAML or JSON text).
StatusOr<Configuration> ParseConfiguration(std::string_view text);
// Reads the file: "failed to read config file: ..." / "failed to decode config file: ..." /
// "invalid configuration: ...".
StatusOr<Configuration> LoadConfiguration(const std::string& path);

// The fields `cfg` sets that none of `applicable` covers (a path covers itself and everything
// under it: "metrics" covers "metrics.bindAddress"). apiVersion and kind always apply.
std::vector<std::string> IgnoredFields(const Configuration& cfg,
                                       const std::vector<std::string_view>& applicable);

}  // namespace trainer::service
