// Status and StatusOr<T>: how every recoverable error travels in trainer-cpp.
//
// Codes are the ones a Kubernetes client and a reconciler need to branch on (NotFound,
// Conflict, Gone, Invalid, TooManyRequests ...). Messages are lower case with the outer
// context first: "applying JobSet ns/name: conflict ...". No exceptions cross our APIs.
//
//   StatusOr<Quantity> q = ParseQuantity("500m");
//   if (!q.ok()) return q.status().WithContext("spec.trainer.resourcesPerNode");
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace trainer {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // bad input from a user or a file (400-ish)
  kNotFound,            // 404
  kAlreadyExists,       // 409 AlreadyExists
  kConflict,            // 409 Conflict (resourceVersion, SSA field conflict)
  kGone,                // 410 (watch resourceVersion too old)
  kInvalid,             // 422 (apiserver validation)
  kTooManyRequests,     // 429
  kForbidden,           // 403
  kUnauthorized,        // 401
  kUnavailable,         // 5xx, connection errors: retry
  kDeadlineExceeded,    // timeouts
  kFailedPrecondition,  // state does not allow the operation
  kUnimplemented,
  kCancelled,
  kInternal,
  kUnknown,
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // HTTP status the error came from (0 when it did not come from HTTP).
  int http_code() const { return http_code_; }
  Status& set_http_code(int code) {
    http_code_ = code;
    return *this;
  }
  // Server-suggested delay before retrying (Retry-After), when known.
  std::optional<double> retry_after_seconds() const { return retry_after_seconds_; }
  Status& set_retry_after_seconds(double s) {
    retry_after_seconds_ = s;
    return *this;
  }

  // Returns a copy whose message is "<context>: <message>"; keeps code and extras.
  Status WithContext(std::string_view context) const;

  // "NotFound: message" (or "OK").
  std::string ToString() const;

  bool operator==(const Status& other) const {
    return code_ == other.code_ && message_ == other.message_;
  }

  // Marks an error as deliberately ignored.
  void IgnoreError() const {}

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  int http_code_ = 0;
  std::optional<double> retry_after_seconds_;
};

inline Status OkStatus() { return Status(); }
Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status AlreadyExistsError(std::string message);
Status ConflictError(std::string message);
Status GoneError(std::string message);
Status InvalidError(std::string message);
Status TooManyRequestsError(std::string message);
Status ForbiddenError(std::string message);
Status UnauthorizedError(std::string message);
Status UnavailableError(std::string message);
Status DeadlineExceededError(std::string message);
Status FailedPreconditionError(std::string message);
Status UnimplementedError(std::string message);
Status CancelledError(std::string message);
Status InternalError(std::string message);

inline bool IsNotFound(const Status& s) { return s.code() == StatusCode::kNotFound; }
inline bool IsConflict(const Status& s) { return s.code() == StatusCode::kConflict; }
inline bool IsAlreadyExists(const Status& s) { return s.code() == StatusCode::kAlreadyExists; }
inline bool IsGone(const Status& s) { return s.code() == StatusCode::kGone; }

// StatusOr<T> holds either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : rep_(status) {  // NOLINT: implicit by design
    if (status.ok()) {
      rep_ =
          Status(StatusCode::kInternal, "StatusOr constructed from an OK status without a value");
    }
  }
  StatusOr(Status&& status) : rep_(std::move(status)) {  // NOLINT
    if (std::get<Status>(rep_).ok()) {
      rep_ =
          Status(StatusCode::kInternal, "StatusOr constructed from an OK status without a value");
    }
  }
  StatusOr(const T& value) : rep_(value) {}        // NOLINT
  StatusOr(T&& value) : rep_(std::move(value)) {}  // NOLINT
  template <typename U>
  requires(std::is_constructible_v<T, U&&> && !std::is_same_v<std::decay_t<U>, T> &&
           !std::is_same_v<std::decay_t<U>, Status> && !std::is_same_v<std::decay_t<U>, StatusOr>)
      StatusOr(U&& value)
      : rep_(T(std::forward<U>(value))) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(rep_); }
  Status status() const { return ok() ? Status() : std::get<Status>(rep_); }

  // Precondition: ok(). Checked: calling on an error aborts with the error's message, which is
  // a programming bug, never input-dependent.
  const T& value() const& {
    CheckOk();
    return std::get<T>(rep_);
  }
  T& value() & {
    CheckOk();
    return std::get<T>(rep_);
  }
  T&& value() && {
    CheckOk();
    return std::get<T>(std::move(rep_));
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  T value_or(T fallback) const& { return ok() ? std::get<T>(rep_) : std::move(fallback); }

 private:
  void CheckOk() const;
  std::variant<Status, T> rep_;
};

[[noreturn]] void StatusOrValueOnError(const Status& status);

template <typename T>
void StatusOr<T>::CheckOk() const {
  if (!ok()) StatusOrValueOnError(std::get<Status>(rep_));
}

namespace internal {
inline Status AsStatus(const Status& s) { return s; }
template <typename T>
Status AsStatus(const StatusOr<T>& s) {
  return s.status();
}
}  // namespace internal

}  // namespace trainer

#define TRAINER_STATUS_CONCAT_INNER(a, b) a##b
#define TRAINER_STATUS_CONCAT(a, b) TRAINER_STATUS_CONCAT_INNER(a, b)

// RETURN_IF_ERROR(expr): returns the Status of `expr` (a Status or StatusOr) if it is not OK.
#define RETURN_IF_ERROR(expr)                                                  \
  do {                                                                         \
    ::trainer::Status _trainer_status = ::trainer::internal::AsStatus((expr)); \
    if (!_trainer_status.ok()) return _trainer_status;                         \
  } while (0)

// ASSIGN_OR_RETURN(lhs, expr): evaluates the StatusOr `expr`; on error returns its Status,
// otherwise moves the value into `lhs` (which may be a declaration: `auto x`).
#define ASSIGN_OR_RETURN(lhs, expr) \
  TRAINER_ASSIGN_OR_RETURN_IMPL(TRAINER_STATUS_CONCAT(_trainer_statusor_, __LINE__), lhs, expr)
#define TRAINER_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()
