// StatusServer: upstream's runtime status server (pkg/statusserver/server.go, setup.go) as a
// part of trainer-webhook, wired into its service frame (docs/design/status-server.md says why
// it lives there). It adds one HTTPS listener ("status-server", upstream's port 10443) that
// serves with the webhook's CertWatcher, so both present the same hot-reloaded certificate, and
// it runs on every replica (no leader election).
//
// Upstream's timeouts: a request must be read within 10 s, a response written within 10 s,
// idle keep-alive connections close after 120 s, a stop waits 5 s for in-flight reports. Its
// own clients: the status writer's (statusServer.qps/burst when given, like upstream's separate
// client; writes time out in 8 s so the reply beats the write deadline), and the token issuer's
// (short timeouts: a fetch never holds a stop).
//
// Background work (Start/Stop): the issuer's keys (loaded with backoff; reports get 500 until
// then while admission is unaffected), the Coalescer's flusher (with --status-write-interval),
// the pod cache (with --status-server-require-pod-binding).
//
//   ASSIGN_OR_RETURN(auto status, StatusServer::New(options, rest, &certs, frame));
//   status->Start();   ...   status->Stop();
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/http/cert_watcher.h"
#include "common/jwt/issuer.h"
#include "common/kube/curl/client.h"
#include "common/service/frame.h"
#include "webhook/statusserver/coalescer.h"
#include "webhook/statusserver/handler.h"
#include "webhook/statusserver/pods.h"

namespace trainer::statusserver {

struct StatusServerOptions {
  std::string address = ":10443";  // "host:port"
  // 0: one status write per report (upstream). Otherwise at most one write per TrainJob per
  // interval (Coalescer).
  std::chrono::milliseconds write_interval{0};
  bool require_pod_binding = false;
  // The status writer's client-side rate limit (statusServer.qps/burst); qps 0 = none.
  double qps = 0;
  int burst = 0;
};

class StatusServer {
 public:
  static StatusOr<std::unique_ptr<StatusServer>> New(const StatusServerOptions& options,
                                                     const kube::RestConfig& rest,
                                                     http::CertWatcher* certs,
                                                     service::Frame& frame);
  ~StatusServer();

  void Start();
  // Returns promptly: at most the issuer fetch in flight (a few seconds), then held reports
  // are written.
  void Stop();

 private:
  StatusServer() = default;
  Status Init(const StatusServerOptions& options, const kube::RestConfig& rest,
              http::CertWatcher* certs, service::Frame& frame);

  std::unique_ptr<kube::CurlClient> write_client_, issuer_client_, pods_client_;
  std::unique_ptr<jwt::Issuer> issuer_;
  std::unique_ptr<InformerPodDirectory> pods_;
  std::unique_ptr<Authorizer> authorizer_;
  std::unique_ptr<StatusWriter> writer_;
  std::unique_ptr<Coalescer> coalescer_;
  std::unique_ptr<StatusHandler> handler_;
};

}  // namespace trainer::statusserver
