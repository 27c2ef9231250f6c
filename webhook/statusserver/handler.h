// StatusHandler: one status report in, one reply out, as upstream's status server answers
// (pkg/statusserver/server.go handleTrainJobRuntimeStatus and its middleware). No sockets:
// Serve() is unit-tested directly; server.h puts it on an HTTPS listener.
//
//   request                                              reply (metav1.Status JSON unless 200)
//   body over 64 KiB                                     413 Payload too large /
//   RequestEntityTooLarge not POST .../namespaces/{ns}/trainjobs/{name}/status 404 Not found /
//   NotFound token issuer or pod cache not loaded                 500 Internal error /
//   InternalError token refused (auth.h)                               403 Forbidden / Forbidden
//   body not an UpdateTrainJobStatusRequest (request.h)  422 Invalid payload / Invalid
//   no trainerStatus                                     200, the request echoed, nothing written
//   write refused as Invalid or BadRequest               422, the apiserver's message / Invalid
//   TrainJob not found                                   404 Train job not found / NotFound
//   any other write error                                500 Internal error / InternalError
//   written (or held by the Coalescer)                   200, the request echoed as decoded
//   an exception (a bug)                                 500 Internal Server Error / InternalError
// Every reply is application/json; metav1.Status bodies are Go's encoding ({"metadata":{},
// "status":"Failure",...} and a newline). Requests are counted by code, with their latency.
//
//   StatusHandler h({.authorizer = &auth, .writer = &writer});
//   StatusReply r = h.Serve({.method = "POST", .path = p, .authorization = a, .body = b});
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/metrics/metrics.h"
#include "webhook/statusserver/auth.h"
#include "webhook/statusserver/coalescer.h"

namespace trainer::statusserver {

// Upstream's maxBodySize.
inline constexpr size_t kMaxBodyBytes = 1 << 16;

struct StatusRequest {
  std::string_view method;
  std::string_view path;
  std::string_view authorization;
  std::string_view body;
};

struct StatusReply {
  int status = 200;
  std::string body;
};

// The metav1.Status body of a failure, as Go's json.Encoder writes it.
std::string StatusBody(std::string_view message, std::string_view reason, int code);

struct StatusHandlerOptions {
  Authorizer* authorizer = nullptr;
  StatusWriter* writer = nullptr;
  Coalescer* coalescer = nullptr;         // null: one write per report (upstream)
  metrics::Registry* registry = nullptr;  // null: no metrics
};

class StatusHandler {
 public:
  explicit StatusHandler(StatusHandlerOptions options);

  StatusReply Serve(const StatusRequest& request);

  // Counts a reply made elsewhere (the HTTP layer's 404 for other methods, 413).
  void Count(int status, double seconds);

 private:
  StatusReply Route(const StatusRequest& request);
  StatusReply Write(std::string_view ns, std::string_view name, const UpdateRequest& request);

  const StatusHandlerOptions options_;
  prometheus::Family<prometheus::Counter>* requests_ = nullptr;
  prometheus::Histogram* latency_ = nullptr;
  prometheus::Counter* held_ = nullptr;
};

// Splits ".../namespaces/{ns}/trainjobs/{name}/status" (one non-empty segment each).
bool ParseStatusPath(std::string_view path, std::string* ns, std::string* name);

}  // namespace trainer::statusserver
