// AdmissionMux: serves AdmissionHandlers on their webhook paths over HTTP, with the
// controller-runtime webhook metrics, denial logs and the error policy below. Serve() is the
// whole request → reply function (no sockets), so it is unit-tested directly; Mount() puts it on
// an http::Server.
//
// Error policy (the apiserver only ever sends well-formed v1 reviews; these guard the rest):
//   body over the limit (7 MiB, as controller-runtime)  -> HTTP 413
//   Content-Type not application/json                   -> HTTP 415
//   empty body, not JSON, not an AdmissionReview         -> HTTP 400
//   a path with no handler                               -> HTTP 404
//   the handler throws                                   -> HTTP 200, allowed=false, code 500
// Every body, errors included, is a well-formed AdmissionReview (kind, apiVersion, response with
// status.code and a message; the uid when the request could be decoded). Handler answers,
// denials included, are HTTP 200 as in controller-runtime.
//
//   webhook::AdmissionMux mux(&metrics::DefaultRegistry());
//   mux.Register("/validate-trainer-kubeflow-org-v1alpha1-trainjob", validator);
//   http::Server server(mux.ServerOptions(":9443", &certs));
//   mux.Mount(server);
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/http/server.h"
#include "common/metrics/metrics.h"
#include "webhook/admission.h"
#include "webhook/metrics.h"

namespace trainer::webhook {

inline constexpr size_t kMaxRequestBytes = 7 * 1024 * 1024;

struct HttpReply {
  int status = 200;
  std::string body;
};

class AdmissionMux {
 public:
  // `registry` may be null (no metrics).
  explicit AdmissionMux(metrics::Registry* registry);
  AdmissionMux(const AdmissionMux&) = delete;
  AdmissionMux& operator=(const AdmissionMux&) = delete;

  // Registers `handler` for POSTs to `path`. Call before serving.
  void Register(const std::string& path, std::shared_ptr<AdmissionHandler> handler);

  // One request, end to end: checks, decoding, the handler, encoding, metrics, logs.
  HttpReply Serve(std::string_view path, std::string_view content_type, std::string_view body);

  // http::ServerOptions for a webhook server: TLS with `certs`, the body limit, and error bodies
  // (404, 413) written as AdmissionReviews.
  http::ServerOptions ServerOptions(std::string address, http::CertWatcher* certs);
  // Registers every path on `server` (the mux must outlive it).
  void Mount(http::Server& server);

 private:
  struct Endpoint {
    std::shared_ptr<AdmissionHandler> handler;
    AdmissionMetrics::Endpoint metrics;
  };

  HttpReply ServeEndpoint(const std::string& path, Endpoint& ep, std::string_view content_type,
                          std::string_view body);
  // `req` is moved into the handler; its strings stay readable afterwards.
  AdmissionResponse Invoke(Endpoint& ep, AdmissionRequest&& req);
  void CountRequest(const std::string& path, Endpoint& ep, int http_status);
  void CountDenial(const std::string& path, const std::string& reason);

  std::unique_ptr<AdmissionMetrics> metrics_;  // null: no metrics
  std::map<std::string, Endpoint, std::less<>> endpoints_;
};

}  // namespace trainer::webhook
