// ApiError: the apiserver's metav1.Status error body, and its mapping to trainer::Status.
// Mirrors k8s.io/apimachinery/pkg/api/errors: the reason decides the code (NotFound,
// AlreadyExists, Conflict, Invalid, Gone/Expired, TooManyRequests, Forbidden, ...), the HTTP code
// decides when the reason is absent or unknown, and the message is kept verbatim: for Invalid it
// already lists the causes exactly as kubectl prints them.
//
//   Status s = kube::StatusFromResponse(422, body, std::nullopt);
//   s.code() == StatusCode::kInvalid; s.http_code() == 422;
//   s.message() == R"(TrainJob.trainer.kubeflow.org "x" is invalid: spec.a: Invalid value: ...)"
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json/json.h"
#include "common/status/status.h"

namespace trainer::kube {

struct StatusCause {
  std::string type;  // "FieldValueInvalid", "FieldValueRequired", "FieldManagerConflict", ...
  std::string message;
  std::string field;
};

struct ApiError {
  int http_code = 0;
  std::string reason;  // metav1.StatusReason: "NotFound", "Invalid", ...
  std::string message;
  std::string group, kind, name;  // from details
  std::vector<StatusCause> causes;
  std::optional<double> retry_after_seconds;  // header, else details.retryAfterSeconds

  Status ToStatus() const;
};

// Parses an error response. A body that is not a Status (a proxy's HTML page, an empty body)
// still yields an error named after the HTTP code.
ApiError ParseApiError(int http_code, std::string_view body,
                       std::optional<double> retry_after_header = std::nullopt);

// ParseApiError(...).ToStatus().
Status StatusFromResponse(int http_code, std::string_view body,
                          std::optional<double> retry_after_header = std::nullopt);

// The Status carried by a watch ERROR event (its object is a metav1.Status).
Status StatusFromStatusObject(const json::Value& status);

// The causes of an error Status body, e.g. to report which fields an SSA conflict names.
std::vector<StatusCause> CausesOf(const json::Value& status);

// Parses a Retry-After header value (delta-seconds; HTTP dates are treated as 1 s).
std::optional<double> ParseRetryAfter(std::string_view value);

}  // namespace trainer::kube
