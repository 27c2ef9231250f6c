// Fuzz target: the status server's request decoder (webhook/statusserver/request.h), which reads
// whatever body training code (or anyone holding a token) POSTs. Properties:
//   - DecodeUpdateRequest never crashes; what it decodes encodes (Go's json.Encoder output) to
//     a body that decodes again, and that second encoding is the same text: the 200 echo is
//     stable;
//   - the encoding is one JSON document (parses with our JSON reader) ending in "\n";
//   - the apply body names only status.trainerStatus of the TrainJob, and serializes;
//   - ValidateAsCrd accepts only what the CRD's rules allow (progress 0..100, ETA >= 0, at most
//     256 metrics with names and values of 1..64 characters, a lastUpdatedTime);
//   - ParseRfc3339 of the input, when it parses, formats to text that parses to the same second;
//   - GoJsonString of the input is a JSON string our reader accepts.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/json/json.h"
#include "tests/fuzz/fuzz_check.h"
#include "webhook/statusserver/request.h"

namespace trainer::fuzz {
namespace {

using statusserver::DecodeUpdateRequest;
using statusserver::EncodeUpdateRequest;

// Characters as the apiserver counts a string's length (code points).
size_t CodePoints(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

void CheckCrdRules(const statusserver::TrainerStatus& s, const std::string& body) {
  if (!statusserver::ValidateAsCrd(s).ok()) return;
  if (s.progress_percentage) {
    FUZZ_CHECK(*s.progress_percentage >= 0 && *s.progress_percentage <= 100,
               "progress out of range accepted: " + body);
  }
  if (s.estimated_remaining_seconds) {
    FUZZ_CHECK(*s.estimated_remaining_seconds >= 0, "negative ETA accepted: " + body);
  }
  FUZZ_CHECK(s.metrics.size() <= 256, "more than 256 metrics accepted: " + body);
  for (const statusserver::Metric& m : s.metrics) {
    FUZZ_CHECK(CodePoints(m.name) >= 1 && CodePoints(m.name) <= 64 && CodePoints(m.value) >= 1 &&
                   CodePoints(m.value) <= 64,
               "a metric name or value of a refused length accepted: " + body);
  }
  FUZZ_CHECK(!s.last_updated_time.IsZero(), "a report without lastUpdatedTime accepted: " + body);
}

void CheckRequest(std::string_view body) {
  StatusOr<statusserver::UpdateRequest> req = DecodeUpdateRequest(body);
  if (!req.ok()) return;
  const std::string echo = EncodeUpdateRequest(*req);
  FUZZ_CHECK(!echo.empty() && echo.back() == '\n', "the echo does not end in a newline");
  FUZZ_CHECK(json::Parse(echo).ok(), "the echo is not JSON: " + echo);
  StatusOr<statusserver::UpdateRequest> again = DecodeUpdateRequest(echo);
  FUZZ_CHECK(again.ok(), "the echo does not decode: " + echo + again.status().ToString());
  FUZZ_CHECK(EncodeUpdateRequest(*again) == echo,
             "the echo changes when decoded again: " + echo + " -> " + EncodeUpdateRequest(*again));
  if (!req->trainer_status) return;
  json::Value apply = statusserver::StatusApplyConfiguration("ns", "job", *req->trainer_status);
  const json::Value* status = apply.Find("status");
  FUZZ_CHECK(status != nullptr && status->IsObject() && status->size() == 1 &&
                 status->Find("trainerStatus") != nullptr,
             "the apply body touches more than status.trainerStatus: " + json::Write(apply));
  FUZZ_CHECK(json::Parse(json::Write(apply)).ok(), "the apply body does not serialize");
  CheckCrdRules(*req->trainer_status, std::string(body));
}

void CheckTime(std::string_view text) {
  std::optional<statusserver::Time> t = statusserver::ParseRfc3339(text);
  if (!t) return;
  const std::string formatted = t->Format();
  std::optional<statusserver::Time> back = statusserver::ParseRfc3339(formatted);
  FUZZ_CHECK(back && back->unix_seconds == t->unix_seconds && back->nanos == 0,
             std::string(text) + " formats as " + formatted + ", which parses differently");
}

}  // namespace
}  // namespace trainer::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainer;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  fuzz::CheckRequest(input);
  fuzz::CheckTime(input);
  const std::string quoted = statusserver::GoJsonString(input);
  StatusOr<json::Value> s = json::Parse(quoted);
  FUZZ_CHECK(s.ok() && s->IsString(), "GoJsonString is not a JSON string: " + quoted);
  return 0;
}
