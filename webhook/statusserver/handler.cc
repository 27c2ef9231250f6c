// StatusHandler (handler.h).
#include "webhook/statusserver/handler.h"

#include <chrono>
#include <exception>

#include "common/log/log.h"

namespace trainer::statusserver {
namespace {

constexpr std::string_view kPrefix = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/";

StatusReply Failure(std::string_view message, std::string_view reason, int code) {
  return {code, StatusBody(message, reason, code)};
}

StatusReply Echo(const UpdateRequest& request) { return {200, EncodeUpdateRequest(request)}; }

}  // namespace

std::string StatusBody(std::string_view message, std::string_view reason, int code) {
  return R"({"metadata":{},"status":"Failure","message":)" + GoJsonString(message) +
         R"(,"reason":)" + GoJsonString(reason) + R"(,"code":)" + std::to_string(code) + "}\n";
}

bool ParseStatusPath(std::string_view path, std::string* ns, std::string* name) {
  if (path.substr(0, kPrefix.size()) != kPrefix) return false;
  path.remove_prefix(kPrefix.size());
  const size_t slash = path.find('/');
  if (slash == 0 || slash == std::string_view::npos) return false;
  std::string_view n = path.substr(0, slash);
  path.remove_prefix(slash);
  constexpr std::string_view kMiddle = "/trainjobs/";
  constexpr std::string_view kSuffix = "/status";
  if (path.substr(0, kMiddle.size()) != kMiddle || path.size() <= kMiddle.size() + kSuffix.size() ||
      path.substr(path.size() - kSuffix.size()) != kSuffix) {
    return false;
  }
  std::string_view job = path.substr(kMiddle.size(), path.size() - kMiddle.size() - kSuffix.size());
  if (job.find('/') != std::string_view::npos) return false;
  *ns = std::string(n);
  *name = std::string(job);
  return true;
}

StatusHandler::StatusHandler(StatusHandlerOptions options) : options_(options) {
  if (options_.registry != nullptr) {
    requests_ = &options_.registry->Counter("trainer_status_server_requests_total",
                                            "Status reports answered, by HTTP code.");
    latency_ = &options_.registry
                    ->Histogram("trainer_status_server_request_duration_seconds",
                                "Time to answer a status report, including its status write.")
                    .Add({}, metrics::DefBuckets());
    for (const char* code : {"200", "403", "500"}) requests_->Add({{"code", code}});
    held_ = &options_.registry
                 ->Counter("trainer_status_server_reports_held_total",
                           "Reports answered 200 and held for the TrainJob's next write "
                           "(--status-write-interval).")
                 .Add({});
  }
}

void StatusHandler::Count(int status, double seconds) {
  if (requests_ == nullptr) return;
  requests_->Add({{"code", std::to_string(status)}}).Increment();
  latency_->Observe(seconds);
}

StatusReply StatusHandler::Serve(const StatusRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  StatusReply reply;
  try {
    reply = Route(request);
  } catch (const std::exception& e) {
    log::Error("status report handler threw", {{"path", request.path}, {"error", e.what()}});
    reply = Failure("Internal Server Error", "InternalError", 500);
  } catch (...) {
    log::Error("status report handler threw", {{"path", request.path}});
    reply = Failure("Internal Server Error", "InternalError", 500);
  }
  Count(reply.status,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return reply;
}

StatusReply StatusHandler::Route(const StatusRequest& request) {
  if (request.body.size() > kMaxBodyBytes) {
    return Failure("Payload too large", "RequestEntityTooLarge", 413);
  }
  std::string ns, name;
  if (request.method != "POST" || !ParseStatusPath(request.path, &ns, &name)) {
    return Failure("Not found", "NotFound", 404);
  }
  AuthResult auth = options_.authorizer->Authorize(request.authorization, ns, name);
  if (auth.kind == AuthResult::kUnavailable) {
    log::Warn("status report not authorized: cannot verify tokens yet",
              {{"trainjob", ns + "/" + name}, {"reason", auth.reason}});
    return Failure("Internal error", "InternalError", 500);
  }
  if (auth.kind != AuthResult::kAllowed) {
    if (log::V(2)) {
      log::Debug(2, "status report forbidden",
                 {{"trainjob", ns + "/" + name}, {"reason", auth.reason}});
    }
    return Failure("Forbidden", "Forbidden", 403);
  }
  StatusOr<UpdateRequest> decoded = DecodeUpdateRequest(request.body);
  if (!decoded.ok()) {
    if (log::V(5)) {
      log::Debug(5, "status report not decodable",
                 {{"trainjob", ns + "/" + name}, {"error", decoded.status().message()}});
    }
    return Failure("Invalid payload", "Invalid", 422);
  }
  if (!decoded->trainer_status) return Echo(*decoded);
  return Write(ns, name, *decoded);
}

StatusReply StatusHandler::Write(std::string_view ns, std::string_view name,
                                 const UpdateRequest& request) {
  const TrainerStatus& ts = *request.trainer_status;
  Status s;
  if (options_.coalescer != nullptr && ValidateAsCrd(ts).ok()) {
    Coalescer::Outcome o = options_.coalescer->Submit(ns, name, ts);
    if (o.deferred) {
      if (held_ != nullptr) held_->Increment();
      return Echo(request);
    }
    s = o.status;
  } else {
    s = options_.writer->Apply(ns, name, ts);
  }
  if (s.ok()) return Echo(request);
  if (s.code() == StatusCode::kInvalid || s.http_code() == 400) {
    // upstream: the apiserver's message, or "Validation failed: " and the error when it has none.
    return Failure(s.message().empty() ? "Validation failed: " : s.message(), "Invalid", 422);
  }
  if (IsNotFound(s)) return Failure("Train job not found", "NotFound", 404);
  log::Error("writing TrainJob status",
             {{"trainjob", std::string(ns) + "/" + std::string(name)}, {"error", s.message()}});
  return Failure("Internal error", "InternalError", 500);
}

}  // namespace trainer::statusserver
