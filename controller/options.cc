// ParseOptions (see options.h).
#include "controller/options.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "common/flags/flags.h"
#include "common/service/options.h"

namespace trainer::controller {
namespace {

std::vector<flags::Flag> ControllerFlags(Options& o, std::string* gates) {
  const double kMaxQps = std::numeric_limits<double>::max();
  return {
      {"kubeconfig", "Kubeconfig file; default $KUBECONFIG, in-cluster, then ~/.kube/config.",
       flags::String(&o.kubeconfig, "FILE")},
      {"feature-gates",
       "Comma-separated Name=bool pairs over the file's featureGates. TrainJobStatus=true gives "
       "trainer pods the status server's URL, CA and a token (alpha, off by default).",
       flags::String(gates, "GATES")},
      {"webhook-service-name",
       "The Service of trainer-webhook, which serves the status server (TrainJobStatus).",
       flags::String(&o.webhook_service_name, "NAME")},
      {"webhook-secret-name",
       "The serving certificate Secret whose ca.crt trainer pods trust (TrainJobStatus).",
       flags::String(&o.webhook_secret_name, "NAME")},
      {"webhook-secret-namespace",
       "Namespace of that Secret and Service; default the pod's, or the kubeconfig context's, "
       "else kubeflow-system.",
       flags::String(&o.webhook_secret_namespace, "NAMESPACE")},
      {"status-server-port", "The status server's port (or the file's statusServer.port).",
       flags::Int(&o.status_server_port, 1, 65535)},
      {"progress-stale-after",
       "A running TrainJob whose last progress report is older than this counts as stale "
       "(trainer_trainjob_progress_stale; TrainJobStatus).",
       flags::Duration(&o.progress_stale_after, std::chrono::seconds(1))},
      {"trainjob-workers",
       "Concurrent TrainJob reconciles (or the file's groupKindConcurrency of TrainJobs).",
       flags::Int(&o.trainjob_workers, 1, kMaxTrainJobWorkers)},
      {"kube-api-qps", "Client-side QPS limit; 0 turns it off (or the file's clientConnection).",
       flags::Double(&o.kube_api_qps, 0, kMaxQps)},
      {"kube-api-burst", "Client-side burst.", flags::Int(&o.kube_api_burst, 0, INT32_MAX)},
      {"leader-elect", "Elect a leader (a Lease) before reconciling.",
       flags::Bool(&o.leader_elect)},
      {"leader-election-id", "Lease name.", flags::String(&o.leader_election_id, "NAME")},
      {"leader-election-namespace",
       "Lease namespace; default the pod's, or the kubeconfig context's, else kubeflow-system.",
       flags::String(&o.leader_election_namespace, "NAMESPACE")},
      {"lifecycle-conditions",
       "Add Created and Running conditions to TrainJobs. Off by default: the Kubeflow SDK (0.5.0) "
       "shows a TrainJob with any condition as Created until it completes.",
       flags::Bool(&o.lifecycle_conditions)},
      {"protect-runtimes-in-use",
       "Keep the trainer.kubeflow.org/resource-in-use finalizer on runtimes while TrainJobs "
       "reference them (v2.2 behaviour). Off: the finalizer is removed (v2.3.0).",
       flags::Bool(&o.protect_runtimes_in_use)},
  };
}

// `gates` receives --feature-gates, applied over the file's featureGates once it is read.
flags::FlagSet Flags(Options& o, std::string* gates) {
  return flags::FlagSet("trainer-controller",
                        "Reconciles TrainJobs into JobSets and their status back, from informer "
                        "caches, with leader election, probes and Prometheus metrics.",
                        service::ServiceFlags(o.frame, ControllerFlags(o, gates)));
}

// The file's TrainJob concurrency, capped at the flag's maximum. Upstream ignores the key (one
// worker whatever it says), so any value its validation accepts (>= 1) must start us too.
void ApplyTrainJobConcurrency(const service::Configuration& cfg, const flags::FlagSet& fs,
                              Options& o) {
  auto it = cfg.group_kind_concurrency.find(kTrainJobGroupKind);
  if (it == cfg.group_kind_concurrency.end() || fs.Given("trainjob-workers")) {
    return;
  }
  o.trainjob_workers = std::min(it->second, kMaxTrainJobWorkers);
  if (it->second > kMaxTrainJobWorkers) {
    o.frame.capped_config_values.push_back(
        "controller.groupKindConcurrency[" + std::string(kTrainJobGroupKind) +
        "]: " + std::to_string(it->second) + ", " + std::to_string(kMaxTrainJobWorkers) +
        " TrainJob workers run");
  }
}

void ApplyConfiguration(const service::Configuration& cfg, const flags::FlagSet& fs, Options& o) {
  ApplyTrainJobConcurrency(cfg, fs, o);
  if (cfg.Has("certManagement.webhookServiceName") && !fs.Given("webhook-service-name")) {
    o.webhook_service_name = cfg.webhook_service_name;
  }
  if (cfg.Has("certManagement.webhookSecretName") && !fs.Given("webhook-secret-name")) {
    o.webhook_secret_name = cfg.webhook_secret_name;
  }
  if (!fs.Given("status-server-port")) o.status_server_port = cfg.status_server_port;
  if (!fs.Given("kube-api-qps")) o.kube_api_qps = cfg.qps.value_or(0);
  if (!fs.Given("kube-api-burst")) o.kube_api_burst = cfg.burst.value_or(0);
  if (cfg.leader_election) {
    const service::Configuration::LeaderElection& le = *cfg.leader_election;
    if (!fs.Given("leader-elect")) o.leader_elect = le.leader_elect;
    if (!le.resource_name.empty() && !fs.Given("leader-election-id")) {
      o.leader_election_id = le.resource_name;
    }
    if (!fs.Given("leader-election-namespace")) {
      o.leader_election_namespace = le.resource_namespace;
    }
    o.lease_duration = le.lease_duration;
    o.renew_deadline = le.renew_deadline;
    o.retry_period = le.retry_period;
  }
}

// client-go's NewLeaderElector refuses timings that let a standby take the Lease while the leader
// still believes it leads; upstream's manager exits on them, so must we.
Status CheckLeaderElection(const Options& o) {
  if (!o.leader_elect) return OkStatus();
  if (o.lease_duration <= o.renew_deadline) {
    return InvalidArgumentError("leaderElection: leaseDuration must be greater than renewDeadline");
  }
  if (o.renew_deadline.count() <= 1.2 * static_cast<double>(o.retry_period.count())) {
    return InvalidArgumentError(
        "leaderElection: renewDeadline must be greater than retryPeriod*JitterFactor (1.2)");
  }
  for (auto [name, d] : {std::pair{"leaseDuration", o.lease_duration},
                         std::pair{"renewDeadline", o.renew_deadline},
                         std::pair{"retryPeriod", o.retry_period}}) {
    if (d.count() < 1) {
      return InvalidArgumentError("leaderElection: " + std::string(name) +
                                  " must be greater than zero");
    }
  }
  return OkStatus();
}

// What follows the parse: the Configuration file under the flags given, then the checks of the
// values together.
Status Settle(const flags::FlagSet& fs, const std::string& gates, Options& o) {
  ASSIGN_OR_RETURN(
      std::optional<service::Configuration> cfg,
      service::LoadConfiguration(fs,
                                 {"leaderElection", "clientConnection",
                                  "controller.groupKindConcurrency[TrainJob.trainer.kubeflow.org]",
                                  "featureGates", "certManagement.webhookServiceName",
                                  "certManagement.webhookSecretName", "statusServer.port"},
                                 o.frame));
  if (cfg) ApplyConfiguration(*cfg, fs, o);
  RETURN_IF_ERROR(CheckLeaderElection(o));
  ASSIGN_OR_RETURN(
      o.feature_gates,
      features::FromConfigAndFlag(cfg ? cfg->feature_gates : std::map<std::string, bool>{}, gates));
  return OkStatus();
}

}  // namespace

std::string Usage() { return service::ServiceUsage<Options>(Flags); }

StatusOr<Options> ParseOptions(const std::vector<std::string>& args) {
  return service::ParseServiceOptions<Options>(args, Flags, Settle);
}

}  // namespace trainer::controller
