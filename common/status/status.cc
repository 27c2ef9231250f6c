// Status helpers: names, constructors and the StatusOr misuse trap.
#include "common/status/status.h"

#include <cstdio>
#include <cstdlib>

namespace trainer {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "InvalidArgument";
    case StatusCode::kNotFound:
      return "NotFound";
    case StatusCode::kAlreadyExists:
      return "AlreadyExists";
    case StatusCode::kConflict:
      return "Conflict";
    case StatusCode::kGone:
      return "Gone";
    case StatusCode::kInvalid:
      return "Invalid";
    case StatusCode::kTooManyRequests:
      return "TooManyRequests";
    case StatusCode::kForbidden:
      return "Forbidden";
    case StatusCode::kUnauthorized:
      return "Unauthorized";
    case StatusCode::kUnavailable:
      return "Unavailable";
    case StatusCode::kDeadlineExceeded:
      return "DeadlineExceeded";
    case StatusCode::kFailedPrecondition:
      return "FailedPrecondition";
    case StatusCode::kUnimplemented:
      return "Unimplemented";
    case StatusCode::kCancelled:
      return "Cancelled";
    case StatusCode::kInternal:
      return "Internal";
    case StatusCode::kUnknown:
      return "Unknown";
  }
  return "Unknown";
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  Status out = *this;
  out.message_ = std::string(context) + ": " + message_;
  return out;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

Status InvalidArgumentError(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
Status NotFoundError(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
Status AlreadyExistsError(std::string m) {
  return Status(StatusCode::kAlreadyExists, std::move(m));
}
Status ConflictError(std::string m) { return Status(StatusCode::kConflict, std::move(m)); }
Status GoneError(std::string m) { return Status(StatusCode::kGone, std::move(m)); }
Status InvalidError(std::string m) { return Status(StatusCode::kInvalid, std::move(m)); }
Status TooManyRequestsError(std::string m) {
  return Status(StatusCode::kTooManyRequests, std::move(m));
}
Status ForbiddenError(std::string m) { return Status(StatusCode::kForbidden, std::move(m)); }
Status UnauthorizedError(std::string m) { return Status(StatusCode::kUnauthorized, std::move(m)); }
Status UnavailableError(std::string m) { return Status(StatusCode::kUnavailable, std::move(m)); }
Status DeadlineExceededError(std::string m) {
  return Status(StatusCode::kDeadlineExceeded, std::move(m));
}
Status FailedPreconditionError(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
Status UnimplementedError(std::string m) {
  return Status(StatusCode::kUnimplemented, std::move(m));
}
Status CancelledError(std::string m) { return Status(StatusCode::kCancelled, std::move(m)); }
Status InternalError(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }

void StatusOrValueOnError(const Status& status) {
  std::fprintf(stderr, "fatal: StatusOr::value() on error: %s\n", status.ToString().c_str());
  std::abort();
}

}  // namespace trainer
