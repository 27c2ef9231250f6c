// AdmissionMux (see mux.h). Its metrics are in webhook/metrics.h.
#include "webhook/mux.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include "common/log/log.h"
#include "common/strings/ascii.h"

namespace trainer::webhook {
namespace {

constexpr char kJson[] = "application/json";

// Whether the media type, without parameters and in any case, is application/json:
// "Application/JSON; charset=utf-8" is.
bool IsJson(std::string_view content_type) {
  std::string_view t = content_type.substr(0, content_type.find(';'));
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) {
    t.remove_suffix(1);
  }
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) {
    t.remove_prefix(1);
  }
  constexpr std::string_view kWant = kJson;
  return strings::AsciiEqualFold(t, kWant);
}

// httplib takes header names and values as std::string: made once, not per request.
const std::string& ContentTypeHeader() {
  static const std::string kName = "Content-Type";
  return kName;
}
const std::string& JsonMediaType() {
  static const std::string kValue = kJson;
  return kValue;
}

// The first Content-Type header as get_header_value reads it (up to a NUL), without the copy.
std::string_view ContentType(const http::Request& req) {
  auto range = req.headers.equal_range(ContentTypeHeader());
  return range.first == range.second ? std::string_view()
                                     : std::string_view(range.first->second.c_str());
}

HttpReply ErrorReply(int http_status, std::string_view uid, std::string message,
                     std::string_view api_version = kAdmissionApiVersion) {
  AdmissionResponse r = AdmissionResponse::Errored(http_status, std::move(message));
  return {http_status, EncodeAdmissionReview(uid, r, api_version)};
}

std::string TooLargeMessage() {
  return "request entity is too large; limit is " + std::to_string(kMaxRequestBytes) + " bytes";
}

}  // namespace

AdmissionMux::AdmissionMux(metrics::Registry* registry)
    : metrics_(registry != nullptr ? std::make_unique<AdmissionMetrics>(*registry) : nullptr) {}

void AdmissionMux::Register(const std::string& path, std::shared_ptr<AdmissionHandler> handler) {
  Endpoint ep;
  ep.handler = std::move(handler);
  if (metrics_ != nullptr) {
    ep.metrics = metrics_->ForPath(path);
  }
  endpoints_[path] = std::move(ep);
}

HttpReply AdmissionMux::Serve(std::string_view path, std::string_view content_type,
                              std::string_view body) {
  auto it = endpoints_.find(path);
  if (it == endpoints_.end()) {
    return ErrorReply(404, "", "no webhook is registered for path \"" + std::string(path) + "\"");
  }
  return ServeEndpoint(it->first, it->second, content_type, body);
}

HttpReply AdmissionMux::ServeEndpoint(const std::string& path, Endpoint& ep,
                                      std::string_view content_type, std::string_view body) {
  const auto start = std::chrono::steady_clock::now();
  if (ep.metrics.in_flight != nullptr) {
    ep.metrics.in_flight->Increment();
  }
  HttpReply reply;
  std::string reason;
  if (body.size() > kMaxRequestBytes) {
    reply = ErrorReply(413, "", TooLargeMessage());
    reason = ReasonForCode(413);
  } else if (!IsJson(content_type)) {
    reply = ErrorReply(415, "",
                       "contentType=" + std::string(content_type) + ", expected application/json");
    reason = ReasonForCode(415);
  } else {
    StatusOr<AdmissionRequest> req = DecodeAdmissionReview(body);
    if (!req.ok()) {
      reply = ErrorReply(400, "", req.status().message());
      reason = ReasonForCode(400);
    } else {
      AdmissionResponse resp = Invoke(ep, std::move(*req));
      if (log::V(5)) {
        log::Debug(5, "admission response",
                   {{"webhook", path},
                    {"uid", req->uid},
                    {"operation", req->operation},
                    {"namespace", req->namespace_},
                    {"name", req->name},
                    {"allowed", resp.allowed ? "true" : "false"},
                    {"code", std::to_string(resp.code)},
                    {"patched", resp.patch.IsArray() ? "true" : "false"}});
      }
      if (!resp.allowed) {
        reason = resp.reason.empty() ? ReasonForCode(resp.code) : resp.reason;
        log::Info("admission denied", {{"webhook", path},
                                       {"uid", req->uid},
                                       {"operation", req->operation},
                                       {"kind", req->kind},
                                       {"namespace", req->namespace_},
                                       {"name", req->name},
                                       {"dryRun", req->dry_run ? "true" : "false"},
                                       {"code", std::to_string(resp.code)},
                                       {"reason", reason},
                                       {"message", resp.message}});
      }
      reply = {200, EncodeAdmissionReview(req->uid, resp, req->review_api_version)};
      // Objects the handler only read (a runtime's) are freed once the answer is out too.
      for (json::Value* object : {&req->object, &req->old_object}) {
        if (!object->IsNull()) {
          http::DestroyAfterResponse(std::move(*object));
        }
      }
    }
  }
  if (reply.status != 200 && reply.status != 500) {
    log::Warn("bad admission request", {{"webhook", path}, {"code", std::to_string(reply.status)}});
  }
  if (!reason.empty()) {
    CountDenial(path, reason);
  }
  CountRequest(path, ep, reply.status);
  if (ep.metrics.latency != nullptr) {
    ep.metrics.latency->Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    ep.metrics.in_flight->Decrement();
  }
  return reply;
}

AdmissionResponse AdmissionMux::Invoke(Endpoint& ep, AdmissionRequest&& req) {
  std::string what;
  try {
    return ep.handler->Consume(std::move(req));
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "unknown exception";
  }
  if (metrics_ != nullptr) {
    metrics_->CountPanic();
  }
  log::Error("admission handler threw",
             {{"uid", req.uid}, {"kind", req.kind}, {"name", req.name}, {"error", what}});
  return AdmissionResponse::Errored(500, "panic: " + what + " [recovered]");
}

void AdmissionMux::CountRequest(const std::string& path, Endpoint& ep, int http_status) {
  if (metrics_ != nullptr) {
    metrics_->CountRequest(path, ep.metrics, http_status);
  }
}

void AdmissionMux::CountDenial(const std::string& path, const std::string& reason) {
  if (metrics_ != nullptr) {
    metrics_->CountDenial(path, reason);
  }
}

http::ServerOptions AdmissionMux::ServerOptions(std::string address, http::CertWatcher* certs) {
  http::ServerOptions o;
  o.address = std::move(address);
  o.tls = certs;
  o.max_body_bytes = kMaxRequestBytes;
  // A rolling update: the apiserver keeps using its pooled connections to a replica whose
  // endpoint is gone; each gets its last answer with "Connection: close" rather than being
  // closed under a request the apiserver would not retry (tests/chaos/cert_rollover.py).
  o.stop_idle_grace = std::chrono::seconds(3);
  // Errors httplib answers itself (unknown path, body over the limit before it is read).
  o.error_body = [this](const http::Request& req, http::Response& res) {
    std::string message = res.status == 413 ? TooLargeMessage()
                          : res.status == 404
                              ? "no webhook is registered for path \"" + req.path + "\""
                              : ReasonForCode(res.status);
    auto it = endpoints_.find(req.path);
    if (it != endpoints_.end()) {
      CountRequest(it->first, it->second, res.status);
      CountDenial(it->first, ReasonForCode(res.status));
    }
    res.body = ErrorReply(res.status, "", std::move(message)).body;
    res.set_header(ContentTypeHeader(), JsonMediaType());
  };
  return o;
}

void AdmissionMux::Mount(http::Server& server) {
  for (auto& [path, ep] : endpoints_) {
    server.Post(path,
                [this, &path = path, &ep = ep](const http::Request& req, http::Response& res) {
                  HttpReply reply = ServeEndpoint(path, ep, ContentType(req), req.body);
                  res.status = reply.status;
                  res.body = std::move(reply.body);
                  res.set_header(ContentTypeHeader(), JsonMediaType());
                });
  }
}

}  // namespace trainer::webhook
