// ApiError implementation: metav1.Status body -> trainer::Status.
#include "common/kube/api_error.h"

#include <charconv>

namespace trainer::kube {
namespace {

StatusCode CodeFromReason(std::string_view reason) {
  if (reason == "NotFound") return StatusCode::kNotFound;
  if (reason == "AlreadyExists") return StatusCode::kAlreadyExists;
  if (reason == "Conflict") return StatusCode::kConflict;
  if (reason == "Invalid") return StatusCode::kInvalid;
  if (reason == "Gone" || reason == "Expired") return StatusCode::kGone;
  if (reason == "TooManyRequests") return StatusCode::kTooManyRequests;
  if (reason == "Forbidden") return StatusCode::kForbidden;
  if (reason == "Unauthorized") return StatusCode::kUnauthorized;
  if (reason == "BadRequest") return StatusCode::kInvalidArgument;
  if (reason == "MethodNotAllowed" || reason == "NotAcceptable" ||
      reason == "UnsupportedMediaType") {
    return StatusCode::kUnimplemented;
  }
  if (reason == "ServerTimeout" || reason == "Timeout") return StatusCode::kDeadlineExceeded;
  if (reason == "ServiceUnavailable") return StatusCode::kUnavailable;
  if (reason == "InternalError") return StatusCode::kInternal;
  if (reason == "RequestEntityTooLarge") return StatusCode::kInvalidArgument;
  return StatusCode::kOk;  // unknown: decide by HTTP code
}

StatusCode CodeFromHttp(int code) {
  switch (code) {
    case 400:
      return StatusCode::kInvalidArgument;
    case 401:
      return StatusCode::kUnauthorized;
    case 403:
      return StatusCode::kForbidden;
    case 404:
      return StatusCode::kNotFound;
    case 405:
    case 406:
    case 415:
      return StatusCode::kUnimplemented;
    case 409:
      return StatusCode::kConflict;
    case 410:
      return StatusCode::kGone;
    case 422:
      return StatusCode::kInvalid;
    case 429:
      return StatusCode::kTooManyRequests;
    case 504:
      return StatusCode::kDeadlineExceeded;
    default:
      break;
  }
  if (code >= 500) return StatusCode::kUnavailable;
  return StatusCode::kUnknown;
}

std::string StringField(const json::Value& obj, std::string_view key) {
  const json::Value* v = obj.Find(key);
  return v != nullptr && v->IsString() ? v->AsString() : std::string();
}

}  // namespace

std::vector<StatusCause> CausesOf(const json::Value& status) {
  std::vector<StatusCause> out;
  const json::Value* details = status.Find("details");
  const json::Value* causes = details != nullptr ? details->Find("causes") : nullptr;
  if (causes == nullptr || !causes->IsArray()) return out;
  for (const json::Value& c : causes->elements()) {
    out.push_back({StringField(c, "reason"), StringField(c, "message"), StringField(c, "field")});
  }
  return out;
}

namespace {

void FillFromStatusObject(const json::Value& status, ApiError& e) {
  e.reason = StringField(status, "reason");
  e.message = StringField(status, "message");
  if (const json::Value* code = status.Find("code");
      code != nullptr && code->IsNumber() && e.http_code == 0) {
    e.http_code = static_cast<int>(code->AsInt());
  }
  if (const json::Value* details = status.Find("details"); details != nullptr) {
    e.group = StringField(*details, "group");
    e.kind = StringField(*details, "kind");
    e.name = StringField(*details, "name");
    if (const json::Value* ra = details->Find("retryAfterSeconds");
        ra != nullptr && ra->IsNumber() && !e.retry_after_seconds) {
      e.retry_after_seconds = ra->AsDouble();
    }
  }
  e.causes = CausesOf(status);
}

}  // namespace

ApiError ParseApiError(int http_code, std::string_view body,
                       std::optional<double> retry_after_header) {
  ApiError e;
  e.http_code = http_code;
  e.retry_after_seconds = retry_after_header;
  auto parsed = json::Parse(body);
  if (parsed.ok() && parsed->IsObject() && StringField(*parsed, "kind") == "Status") {
    FillFromStatusObject(*parsed, e);
  }
  if (e.message.empty()) {
    // Not a Status: say what we got, briefly (a proxy's error page can be long).
    std::string_view snippet = body.substr(0, 200);
    e.message = "the server responded with HTTP " + std::to_string(http_code) +
                (snippet.empty() ? std::string() : ": " + std::string(snippet));
  }
  return e;
}

Status ApiError::ToStatus() const {
  StatusCode code = CodeFromReason(reason);
  if (code == StatusCode::kOk) code = CodeFromHttp(http_code);
  Status s(code, message);
  s.set_http_code(http_code);
  if (retry_after_seconds) s.set_retry_after_seconds(*retry_after_seconds);
  return s;
}

Status StatusFromResponse(int http_code, std::string_view body,
                          std::optional<double> retry_after_header) {
  return ParseApiError(http_code, body, retry_after_header).ToStatus();
}

Status StatusFromStatusObject(const json::Value& status) {
  ApiError e;
  FillFromStatusObject(status, e);
  if (e.message.empty()) e.message = "watch error event without a message";
  return e.ToStatus();
}

std::optional<double> ParseRetryAfter(std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\r' || value.back() == '\n')) {
    value.remove_suffix(1);
  }
  if (value.empty()) return std::nullopt;
  int64_t seconds = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec == std::errc() && ptr == value.data() + value.size() && seconds >= 0) {
    return static_cast<double>(seconds);
  }
  return 1.0;  // an HTTP-date: the apiserver never sends one; retry soon
}

}  // namespace trainer::kube
