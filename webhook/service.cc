// WebhookService (see service.h).
#include "webhook/service.h"

#include "common/files/files.h"
#include "common/kube/curl/config.h"
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
  StatusOr<std::unique_ptr<kube::CurlClient>> c = kube::CurlClient::New(std::move(cfg).value());
  if (!c.ok()) {
    return c.status().WithContext("creating the Kubernetes client");
  }
  client_ = std::move(c).value();
  reader_ = NewInformerClusterReader(client_.get());
  return OkStatus();
}

Status WebhookService::Init(const Options& options, service::Frame& frame) {
  http::CertWatcher& certs =
      frame.AddCertificates({.cert_dir = options.cert_dir, .registry = &frame.registry()});
  RETURN_IF_ERROR(NewReader(options));
  StatusOr<std::unique_ptr<core::Runtimes>> runtimes = core::Runtimes::New(*reader_, NowRfc3339);
  if (!runtimes.ok()) {
    return runtimes.status().WithContext("building the runtime registry");
  }
  runtimes_ = std::move(runtimes).value();
  RegisterWebhooks(mux_, {.runtimes = runtimes_.get(), .reader = reader_.get()});

  http::ServerOptions server_options = mux_.ServerOptions(options.Address(), &certs);
  server_options.threads = options.threads;
  http::Server& server = frame.AddServer("webhook", std::move(server_options));
  mux_.Mount(server);
  frame.probes().AddReadyz("readyz", [&certs, &server] {
    if (!certs.ready()) {
      return UnavailableError("certificates are not ready");
    }
    return server.running() ? OkStatus() : UnavailableError("webhook server not started");
  });
  frame.probes().AddReadyz("runtime-caches", [this] {
    return reader_->HasSynced() ? OkStatus() : UnavailableError("runtime caches not synced");
  });
  return OkStatus();
}

}  // namespace trainer::webhook
