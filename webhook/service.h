// WebhookService: trainer-webhook in its service frame (common/service/frame.h). Upstream serves
// the webhooks from cmd/trainer-controller-manager; here they are a service of their own, so
// admission scales and restarts apart from the controller. New wires:
//   the serving certificate (reloaded from --cert-dir, or with --cert-management kept by the
//   certificate rotator, certs/rotator.h, and handed over in-process) -> the HTTPS server on --port
//   with the four webhooks (webhook/webhooks.h), reading runtimes from informer caches (or from
//   manifest files with --offline-runtimes); readiness: certificate loaded (and, managed, its CA
//   in both configurations), server started, runtime caches synced. With the feature gate
//   TrainJobStatus, the status server (webhook/statusserver/server.h) on --status-server-port with
//   the same certificate. Run waits for the stop, then stops the rotator and the status server's
//   background work.
//
//   service::Frame frame(options.frame);
//   return frame.Run([&](service::Frame& f) { return WebhookService::New(options, f); });
#pragma once

#include <memory>
#include <stop_token>

#include "certs/rotator.h"
#include "common/kube/curl/client.h"
#include "common/metrics/workqueue.h"
#include "common/service/frame.h"
#include "runtime/core/registry.h"
#include "webhook/cluster_reader.h"
#include "webhook/mux.h"
#include "webhook/options.h"
#include "webhook/statusserver/server.h"

namespace trainer::webhook {

class WebhookService final : public service::Runnable {
 public:
  static StatusOr<std::unique_ptr<service::Runnable>> New(const Options& options,
                                                          service::Frame& frame);
  // Serves until stopped, then stops the certificate rotator and the status server (if any).
  Status Run(std::stop_token stop) override;

 private:
  explicit WebhookService(metrics::Registry& registry) : mux_(&registry) {}
  Status Init(const Options& options, service::Frame& frame);
  // The cluster reader: informer caches through a client, or --offline-runtimes files.
  Status NewReader(const Options& options);
  // --cert-management: the rotator keeps the Secret and caBundle and hands pairs to `certs`.
  Status StartCertManagement(const Options& options, http::CertWatcher& certs,
                             metrics::Registry& registry);
  Status NewStatusServer(const Options& options, http::CertWatcher& certs, service::Frame& frame);

  std::unique_ptr<kube::CurlClient> client_;
  std::string namespace_;  // the client's default: in-cluster, the pod's
  // Before the rotator using them.
  std::unique_ptr<metrics::ReconcileMetrics> rotator_metrics_;
  std::unique_ptr<metrics::PrometheusWorkqueueMetrics> rotator_queue_metrics_;
  std::unique_ptr<certs::Rotator> rotator_;
  std::unique_ptr<ClusterReader> reader_;
  std::unique_ptr<core::Runtimes> runtimes_;
  AdmissionMux mux_;
  std::unique_ptr<statusserver::StatusServer> status_server_;  // null: gate off
};

// A reader over the runtimes in manifest files, defaulted as the apiserver would store them.
StatusOr<std::unique_ptr<ClusterReader>> OfflineReader(const std::vector<std::string>& files);

}  // namespace trainer::webhook
