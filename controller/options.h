// Options of trainer-controller: command-line flags and upstream's Configuration file
// (config.trainer.kubeflow.org/v1alpha1, kind Configuration; upstream pkg/apis/config/v1alpha1
// and pkg/config/{config.go,validation.go}, v2.3.0).
//
// The file is decoded strictly, as upstream's UniversalDecoder with EnableStrict: unknown fields,
// a wrong apiVersion or kind, and wrongly typed values are errors. Every field upstream's file may
// hold is accepted (webhook, certManagement, statusServer and tls are for the webhook binary and
// are only validated here). Defaults and validation messages are upstream's
// ("invalid configuration: webhook.port: Invalid value: 70000: must be between 1 and 65535").
//
// Precedence: an explicitly given flag, then the file, then the default.
//
//   ASSIGN_OR_RETURN(Options opts, ParseOptions(argc, argv));
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json/json.h"
#include "common/status/status.h"

namespace trainer::controller {

inline constexpr char kConfigAPIVersion[] = "config.trainer.kubeflow.org/v1alpha1";
inline constexpr char kTrainJobGroupKind[] = "TrainJob.trainer.kubeflow.org";

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
};

// Parses and validates a Configuration document (YAML or JSON text). `source` names it in errors.
StatusOr<Configuration> ParseConfiguration(std::string_view text);
// Reads the file: "failed to read config file: ..." / "failed to decode config file: ..." /
// "invalid configuration: ...".
StatusOr<Configuration> LoadConfiguration(const std::string& path);

struct Options {
  std::string config_file;
  std::string kubeconfig;
  std::string feature_gates;  // accepted for drop-in compatibility; no gate affects this binary
  int trainjob_workers = 5;
  int runtime_workers = 1;
  // Client-side rate limit: 0 = off (the apiserver's priority and fairness limits us; see
  // common/kube/curl/client.h). Upstream's file sets 50/100 and is honoured when given.
  double kube_api_qps = 0;
  int kube_api_burst = 0;
  bool leader_elect = false;
  std::string leader_election_id = "trainer.kubeflow.org";
  std::string leader_election_namespace;  // "" = the pod's namespace (in-cluster) or "default"
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
  std::string health_probe_bind_address = ":8081";
  std::string metrics_bind_address = ":8443";  // "0" disables
  bool metrics_secure_serving = true;
  std::string metrics_cert_dir;  // TLS for /metrics when set (and secure serving on)
  bool lifecycle_conditions = false;
  bool protect_runtimes_in_use = false;
  int verbosity = 0;
  std::string log_format = "text";  // text | json
  bool help = false;
};

// Parses flags (--name=value, --name value, bare --bool), loads --config when given, and merges
// them. Unknown flags are errors.
StatusOr<Options> ParseOptions(int argc, const char* const* argv);

// The --help text.
std::string Usage();

// Go time.ParseDuration for the forms configs use ("15s", "1m30s", "500ms", "2h").
StatusOr<std::chrono::milliseconds> ParseGoDuration(std::string_view text);

}  // namespace trainer::controller
