// Options of trainer-controller: command-line flags (common/flags) and, with --config, upstream's
// Configuration file (common/service/configuration.h). `trainer-controller --help` lists the
// flags. Of the file, the controller uses leaderElection, metrics, health.healthProbeBindAddress,
// clientConnection (qps/burst; upstream's defaults 50/100 apply whenever a file is given),
// controller.groupKindConcurrency of TrainJobs, featureGates, and what the TrainJobStatus plugin
// reads: certManagement's Service and Secret names (as the file sets them; without a file, ours)
// and statusServer.port; the rest (webhook, certManagement.enable, tls, ...) is logged as
// ignored. Upstream's --zap-* flags are taken as both services take them
// (common/service/options.h).
//
// Precedence: an explicitly given flag, then the file, then the default.
//
//   ASSIGN_OR_RETURN(Options opts, ParseOptions({"--leader-elect", "--config=/etc/cfg.yaml"}));
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/service/frame.h"
#include "common/status/status.h"
#include "runtime/features/features.h"

namespace trainer::controller {

inline constexpr char kTrainJobGroupKind[] = "TrainJob.trainer.kubeflow.org";
// --trainjob-workers' maximum; a larger groupKindConcurrency in the file is capped to it.
inline constexpr int kMaxTrainJobWorkers = 1000;

struct Options {
  std::string kubeconfig;
  // --feature-gates over the file's featureGates. TrainJobStatus runs the TrainJobStatus plugin.
  features::FeatureGates feature_gates;
  // The status server the TrainJobStatus plugin points trainer pods at: the webhook Service
  // (trainer-webhook.<namespace>.svc), its port, and the certificate Secret whose ca.crt the
  // pods trust; the namespace of both ("" = kube::OperatorNamespace).
  std::string webhook_service_name = "trainer-webhook";
  std::string webhook_secret_name = "kubeflow-trainer-webhook-cert";
  std::string webhook_secret_namespace;
  int status_server_port = 10443;
  // A running TrainJob whose last progress report is older than this is stale
  // (trainer_trainjob_progress_stale).
  std::chrono::milliseconds progress_stale_after{std::chrono::minutes(10)};
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
  bool lifecycle_conditions = false;
  bool protect_runtimes_in_use = false;
  service::FrameOptions frame = {.program = "trainer-controller",
                                 .health_probe_bind_address = ":8081",
                                 .metrics_bind_address = ":8443",
                                 .metrics_secure_serving = true};
  bool help = false;
};

// `args` without the program name: flags, then --config when given, merged.
StatusOr<Options> ParseOptions(const std::vector<std::string>& args);

// The --help text.
std::string Usage();

}  // namespace trainer::controller
