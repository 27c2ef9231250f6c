// WebhookService (see service.h).
#include "webhook/service.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "common/files/files.h"
#include "common/kube/curl/config.h"
#include "common/kube/meta.h"
#include "common/log/log.h"
#include "runtime/api/codec.h"
#include "runtime/api/defaults.h"
#include "runtime/api/manifests.h"
#include "webhook/webhooks.h"

namespace trainer::webhook {

StatusOr<std::unique_ptr<ClusterReader>> OfflineReader(const std::vector<std::string>& files) {
  api::Manifests manifests;
  for (const std::string& f : files) {
    StatusOr<std::string> text = files::ReadFile(f);
    if (!text.ok()) {
      return text.status().WithContext("--offline-runtimes");
    }
    RETURN_IF_ERROR(api::DecodeManifestsInto(*text, &manifests).WithContext(f));
  }
  std::vector<json::Value> objects;
  for (api::TrainingRuntime& rt : manifests.runtimes) {
    if (rt.kind == api::kTrainingRuntimeKind && rt.metadata.namespace_.empty()) {
      rt.metadata.namespace_ = "default";
    }
    api::ApplyRuntimeSchemaDefaults(rt);
    objects.push_back(api::EncodeTrainingRuntime(rt));
  }
  for (json::Value& o : manifests.others) {
    objects.push_back(std::move(o));
  }
  return NewStaticClusterReader(std::move(objects));
}

StatusOr<std::unique_ptr<service::Runnable>> WebhookService::New(const Options& options,
                                                                 service::Frame& frame) {
  std::unique_ptr<WebhookService> s(new WebhookService(frame.registry()));
  RETURN_IF_ERROR(s->Init(options, frame));
  return std::unique_ptr<service::Runnable>(std::move(s));
}

Status WebhookService::NewReader(const Options& options) {
  if (!options.offline_runtimes.empty()) {
    StatusOr<std::unique_ptr<ClusterReader>> r = OfflineReader(options.offline_runtimes);
    if (!r.ok()) {
      return r.status().WithContext("loading offline runtimes");
    }
    reader_ = std::move(r).value();
    log::Info("serving runtimes from files, not from a cluster");
    return OkStatus();
  }
  StatusOr<kube::RestConfig> cfg = kube::LoadConfig(options.kubeconfig);
  if (!cfg.ok()) {
    return cfg.status().WithContext("loading kubeconfig");
  }
  namespace_ = kube::OperatorNamespace(*cfg);  // before the config moves into the client
  StatusOr<std::unique_ptr<kube::CurlClient>> c = kube::CurlClient::New(std::move(cfg).value());
  if (!c.ok()) {
    return c.status().WithContext("creating the Kubernetes client");
  }
  client_ = std::move(c).value();
  reader_ = NewInformerClusterReader(client_.get());
  return OkStatus();
}

namespace {

// This replica's name in the certificate Secret's reports: the pod (POD_NAME from the downward
// API), else this host and process.
std::string ReplicaName() {
  if (const char* pod = std::getenv("POD_NAME"); pod != nullptr && *pod != '\0') {
    return pod;
  }
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return std::string(host) + "-" + std::to_string(getpid());
}

}  // namespace

Status WebhookService::StartCertManagement(const Options& options, http::CertWatcher& certs,
                                           metrics::Registry& registry) {
  if (client_ == nullptr) {
    return InvalidArgumentError("--cert-management needs a cluster, not --offline-runtimes");
  }
  certs::RotatorOptions ro;
  ro.ns = options.webhook_secret_namespace.empty() ? namespace_ : options.webhook_secret_namespace;
  ro.secret_name = options.webhook_secret_name;
  ro.mutating_configuration = options.mutating_webhook_configuration;
  ro.validating_configuration = options.validating_webhook_configuration;
  ro.replica = ReplicaName();
  // Upstream names <service>.<namespace>.svc, what the apiserver dials; the cluster-local form
  // serves clients that use it.
  std::string svc = options.webhook_service_name + "." + ro.ns + ".svc";
  ro.policy.dns_names = {svc, svc + ".cluster.local"};
  ro.policy.propagation =
      std::chrono::duration_cast<std::chrono::seconds>(options.cert_propagation);
  ro.policy.report_interval =
      std::chrono::duration_cast<std::chrono::seconds>(options.cert_report_interval);
  ro.serve = [&certs](const certs::KeyPair& pair, const std::string& ca) {
    return certs.Use(pair.cert_pem, pair.key_pem, ca);
  };
  RETURN_IF_ERROR(certs::ValidateRotatorOptions(ro));
  // Upstream's cert-controller is a controller-runtime controller of this name, one worker.
  rotator_metrics_ = std::make_unique<metrics::ReconcileMetrics>(registry, "cert-rotator", 1);
  ro.metrics = rotator_metrics_.get();
  rotator_queue_metrics_ = std::make_unique<metrics::PrometheusWorkqueueMetrics>(registry);
  ro.queue_metrics = rotator_queue_metrics_.get();
  log::Info("managing the serving certificate",
            {{"secret", ro.ns + "/" + ro.secret_name}, {"dnsName", svc}, {"replica", ro.replica}});
  rotator_ = std::make_unique<certs::Rotator>(*client_, std::move(ro));
  rotator_->Start();
  return OkStatus();
}

Status WebhookService::Run(std::stop_token stop) {
  if (status_server_ != nullptr) {
    status_server_->Start();
  }
  Status s = service::ServeUntilStopped().Run(stop);
  if (status_server_ != nullptr) {
    status_server_->Stop();
  }
  if (rotator_ != nullptr) {
    rotator_->Stop();
  }
  return s;
}

Status WebhookService::Init(const Options& options, service::Frame& frame) {
  // With cert management the pair comes from the rotator (CertWatcher::Use), not a directory.
  http::CertWatcher& certs = frame.AddCertificates(
      {.cert_dir = options.cert_management ? "" : options.cert_dir, .registry = &frame.registry()});
  RETURN_IF_ERROR(NewReader(options));
  if (options.cert_management) {
    RETURN_IF_ERROR(StartCertManagement(options, certs, frame.registry()));
  }
  StatusOr<std::unique_ptr<core::Runtimes>> runtimes = core::Runtimes::New(*reader_, kube::NowTime);
  if (!runtimes.ok()) {
    return runtimes.status().WithContext("building the runtime registry");
  }
  runtimes_ = std::move(runtimes).value();
  RegisterWebhooks(mux_, {.runtimes = runtimes_.get(), .reader = reader_.get()});

  http::ServerOptions server_options = mux_.ServerOptions(options.Address(), &certs);
  server_options.threads = options.threads;
  server_options.busy_poll = options.busy_poll;
  http::Server& server = frame.AddServer("webhook", std::move(server_options));
  mux_.Mount(server);
  frame.probes().AddReadyz("readyz", [this, &certs, &server] {
    // Managed: also both configurations trust the CA of what is served (upstream's rotator is
    // ready once the CA is injected).
    if (!certs.ready() || (rotator_ != nullptr && !rotator_->ready())) {
      return UnavailableError("certificates are not ready");
    }
    return server.running() ? OkStatus() : UnavailableError("webhook server not started");
  });
  frame.probes().AddReadyz("runtime-caches", [this] {
    return reader_->HasSynced() ? OkStatus() : UnavailableError("runtime caches not synced");
  });
  if (options.feature_gates.Enabled(features::kTrainJobStatus)) {
    RETURN_IF_ERROR(NewStatusServer(options, certs, frame));
  }
  return OkStatus();
}

Status WebhookService::NewStatusServer(const Options& options, http::CertWatcher& certs,
                                       service::Frame& frame) {
  if (client_ == nullptr) {
    return FailedPreconditionError(
        "the TrainJobStatus feature gate needs a cluster: the status server cannot run with "
        "--offline-runtimes");
  }
  ASSIGN_OR_RETURN(status_server_,
                   statusserver::StatusServer::New(
                       {.address = options.StatusServerAddress(),
                        .write_interval = options.status_write_interval,
                        .require_pod_binding = options.status_server_require_pod_binding,
                        .qps = options.status_server_qps,
                        .burst = options.status_server_burst},
                       client_->config(), &certs, frame));
  // Readiness does not wait for the token issuer: admission must not depend on it.
  const http::Server* server = frame.server("status-server");
  frame.probes().AddReadyz("status-server", [server] {
    return server != nullptr && server->running() ? OkStatus()
                                                  : UnavailableError("status server not started");
  });
  return OkStatus();
}

}  // namespace trainer::webhook
