// Fuzz target: the JobSet -> TrainJob status mapping (runtime/plugins/jobset, the
// TrainJobStatusPlugin). The input is YAML: a JobSet (its `status` is used) or a bare JobSet
// status, optionally with `trainJobStatus:` (the TrainJob's status before the mapping). The
// JobSet is served from an in-memory reader, the clock is fixed. Properties of an answer:
//   - one jobsStatus entry per replicatedJobsStatus item, and at most one condition per type;
//   - a JobSet whose first Completed/Failed condition is True gets Complete/Failed True;
//   - the status encodes and decodes stably (EncodeTrainJobStatus / DecodeTrainJobStatus);
//   - the mapping is idempotent: mapping again from the answered status gives the same status.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "common/json/json.h"
#include "common/yaml/yaml.h"
#include "runtime/api/codec.h"
#include "runtime/framework/map_reader.h"
#include "runtime/plugins/jobset/jobset.h"
#include "tests/fuzz/fuzz_check.h"

namespace trainer::fuzz {
namespace {

constexpr char kNow[] = "2026-01-02T03:04:05Z";

bool HasTrueCondition(const json::Value& status, std::string_view type) {
  const json::Value* conds = status.Find("conditions");
  if (conds == nullptr || !conds->IsArray()) {
    return false;
  }
  for (const json::Value& c : conds->elements()) {
    const json::Value* t = c.Find("type");
    const json::Value* s = c.Find("status");
    // The first condition of a type counts, as meta.FindStatusCondition (upstream's lookup).
    if (t != nullptr && t->IsString() && t->AsString() == type) {
      return s != nullptr && s->IsString() && s->AsString() == "True";
    }
  }
  return false;
}

bool HasCondition(const api::TrainJobStatus& status, std::string_view type,
                  std::string_view value) {
  for (const api::Condition& c : status.conditions) {
    if (c.type == type && c.status == value) {
      return true;
    }
  }
  return false;
}

void Check(const json::Value& doc) {
  const json::Value* found = doc.Find("status");
  json::Value status = (found != nullptr ? *found : doc).Clone();
  json::Value jobset = json::Value::Object();
  jobset.Set("apiVersion", "jobset.x-k8s.io/v1alpha2");
  jobset.Set("kind", "JobSet");
  jobset["metadata"].Set("name", "test-job");
  jobset["metadata"].Set("namespace", "default");
  jobset.Set("status", status.Clone());
  framework::MapReader reader;
  FUZZ_CHECK(reader.Add(std::move(jobset)).ok(), "MapReader rejected the JobSet");
  plugins::JobSet plugin{framework::PluginContext{&reader, [] { return std::string(kNow); }}};

  json::Value job_doc = json::Value::Object();
  job_doc["metadata"].Set("name", "test-job");
  job_doc["metadata"].Set("namespace", "default");
  job_doc["spec"]["runtimeRef"].Set("name", "rt");
  StatusOr<api::TrainJob> job = api::DecodeTrainJob(job_doc);
  FUZZ_CHECK(job.ok(), job.status().ToString());
  if (const json::Value* before = doc.Find("trainJobStatus")) {
    StatusOr<api::TrainJobStatus> s = api::DecodeTrainJobStatus(*before);
    if (!s.ok()) {
      return;
    }
    // The CRD makes conditions a list map keyed by type: a stored status never repeats a type.
    std::set<std::string> before_types;
    for (const api::Condition& c : s->conditions) {
      if (!before_types.insert(c.type).second) return;
    }
    job->status = std::move(*s);
  }

  auto first = plugin.Status(*job);
  if (!first.ok() || !first->has_value()) {
    return;
  }
  const api::TrainJobStatus& got = **first;
  const json::Value* rjobs = status.Find("replicatedJobsStatus");
  size_t want_jobs = rjobs != nullptr && rjobs->IsArray() ? rjobs->size() : 0;
  FUZZ_CHECK(got.jobs_status.size() == want_jobs,
             "jobsStatus has " + std::to_string(got.jobs_status.size()) + " entries, want " +
                 std::to_string(want_jobs));
  std::set<std::string> types;
  for (const api::Condition& c : got.conditions) {
    FUZZ_CHECK(types.insert(c.type).second, "condition type " + c.type + " appears twice");
  }
  if (HasTrueCondition(status, "Completed")) {
    FUZZ_CHECK(HasCondition(got, "Complete", "True"), "JobSet Completed but TrainJob not Complete");
  }
  if (HasTrueCondition(status, "Failed")) {
    FUZZ_CHECK(HasCondition(got, "Failed", "True"), "JobSet Failed but TrainJob not Failed");
  }

  json::Value encoded = api::EncodeTrainJobStatus(got);
  StatusOr<api::TrainJobStatus> decoded = api::DecodeTrainJobStatus(encoded);
  FUZZ_CHECK(decoded.ok(), "the mapped status does not decode: " + decoded.status().ToString() +
                               "\n  " + json::Write(encoded));
  FUZZ_CHECK(api::EncodeTrainJobStatus(*decoded) == encoded,
             "the mapped status does not round-trip: " + json::Write(encoded));

  job->status = std::move(decoded).value();
  auto second = plugin.Status(*job);
  FUZZ_CHECK(second.ok() && second->has_value(), "mapping again failed");
  FUZZ_CHECK(api::EncodeTrainJobStatus(**second) == encoded,
             "the mapping is not idempotent:\n  first:  " + json::Write(encoded) +
                 "\n  second: " + json::Write(api::EncodeTrainJobStatus(**second)));
}

}  // namespace
}  // namespace trainer::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainer;
  StatusOr<json::Value> doc =
      yaml::ParseYaml(std::string_view(reinterpret_cast<const char*>(data), size));
  if (doc.ok() && doc->IsObject()) {
    fuzz::Check(*doc);
  }
  return 0;
}
