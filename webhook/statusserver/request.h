// UpdateTrainJobStatusRequest: the body training code POSTs to the status server, decoded,
// re-encoded and turned into the status apply exactly as upstream does it (the type in
// pkg/apis/trainer/v1alpha1/trainjob_types.go, decoded by Go's encoding/json in
// pkg/statusserver/server.go and written through its apply configuration).
//
// Go's decoder is the contract, so DecodeUpdateRequest reproduces what it accepts:
//   - the first JSON value of the body is read, anything after it is ignored; an empty body or
//     a syntax error inside that value is an error;
//   - object keys match field names exactly or case-insensitively (Go's folding), unknown keys
//     are skipped, a repeated key decodes again into what the first one left (Go's merge);
//   - progressPercentage / estimatedRemainingSeconds are int32 literals (no fraction, no
//     exponent), metric names and values JSON strings, lastUpdatedTime null or an RFC 3339
//     string (time.Parse(time.RFC3339, ...)); any type mismatch is an error;
//   - invalid UTF-8 in strings becomes U+FFFD; nesting deeper than 10000 is an error.
// EncodeUpdateRequest writes what json.NewEncoder(w).Encode writes for the decoded value: field
// order, omitempty rules, lastUpdatedTime in UTC whole seconds (null when zero), HTML-safe
// escapes and the trailing newline.
//
//   ASSIGN_OR_RETURN(UpdateRequest req, DecodeUpdateRequest(body));   // error -> 422
//   if (!req.trainer_status) reply(200, EncodeUpdateRequest(req));
//   json::Value apply = StatusApplyConfiguration("ns", "job", *req.trainer_status);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json/json.h"
#include "common/status/status.h"

namespace trainer::statusserver {

// A metav1.Time as Go holds it after time.Parse: seconds since the Unix epoch (UTC) and the
// fraction, which metav1.Time drops when it is written.
struct Time {
  int64_t unix_seconds = 0;
  int32_t nanos = 0;

  // Go's zero time.Time (0001-01-01T00:00:00Z): written as null.
  bool IsZero() const;
  // "2006-01-02T15:04:05Z" (RFC 3339 in UTC, whole seconds, as metav1.Time marshals).
  std::string Format() const;
  static Time Zero();
};

// time.Parse(time.RFC3339, text); nullopt when Go would return an error.
std::optional<Time> ParseRfc3339(std::string_view text);

struct Metric {
  std::string name;
  std::string value;
};

struct TrainerStatus {
  std::optional<int32_t> progress_percentage;
  std::optional<int32_t> estimated_remaining_seconds;
  std::vector<Metric> metrics;  // nil and empty are the same to every reader
  Time last_updated_time = Time::Zero();
};

struct UpdateRequest {
  std::optional<TrainerStatus> trainer_status;
};

// Decodes `body` as Go's json.Decoder.Decode would into an UpdateTrainJobStatusRequest.
// The error's message says what Go would complain about (for logs; the client sees
// "Invalid payload").
StatusOr<UpdateRequest> DecodeUpdateRequest(std::string_view body);

// json.Encoder.Encode of the request: compact JSON and "\n".
std::string EncodeUpdateRequest(const UpdateRequest& request);

// The server-side apply body of TrainJob ns/name's status with only status.trainerStatus
// (upstream toApplyConfig): progressPercentage and estimatedRemainingSeconds when set, each
// metric's name and value, lastUpdatedTime (null when zero, as Go's apply configuration
// serializes it).
json::Value StatusApplyConfiguration(std::string_view ns, std::string_view name,
                                     const TrainerStatus& status);

// What the TrainJob CRD's schema says of status.trainerStatus (progressPercentage 0..100,
// estimatedRemainingSeconds >= 0, at most 256 metrics with name and value of 1..64 characters,
// lastUpdatedTime required and a date-time the apiserver accepts). OK when the apiserver would
// accept the apply; otherwise the first rule broken, for logs (the reply then comes from the
// apiserver itself, so its text is the apiserver's).
Status ValidateAsCrd(const TrainerStatus& status);

// Go's encoding/json string encoding (quotes included): \" \\ \b \f \n \r \t, other control
// bytes and the HTML-sensitive < > & as \u00XX, U+2028/U+2029 as \u2028/\u2029, invalid UTF-8
// as \ufffd.
std::string GoJsonString(std::string_view s);

}  // namespace trainer::statusserver
