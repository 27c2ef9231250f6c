// TrainJobDefaulter and TrainJobValidator (see trainjob_webhook.h).
#include "webhook/trainjob_webhook.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "common/http/server.h"
#include "common/json/patch.h"
#include "runtime/api/codec.h"
#include "runtime/api/defaults.h"
#include "runtime/api/kinds.h"
#include "runtime/api/podtemplateoverrides.h"
#include "runtime/field/field.h"

namespace trainer::webhook {
namespace {

constexpr char kDelete[] = "DELETE";
constexpr char kUpdate[] = "UPDATE";
constexpr char kCreate[] = "CREATE";

// The object of the request, decoded (the document moves into TrainJob::raw); a failure is
// controller-runtime's decode error (400).
StatusOr<api::TrainJob> Decode(json::Value&& doc, std::string_view what) {
  if (!doc.IsObject()) {
    return InvalidArgumentError(std::string("there is no content to decode in ") +
                                std::string(what));
  }
  return api::DecodeTrainJob(std::move(doc));
}

// The old object of an UPDATE; nullopt for other operations.
StatusOr<std::optional<api::TrainJob>> DecodeOld(AdmissionRequest& req) {
  if (req.operation != kUpdate) {
    return std::optional<api::TrainJob>();
  }
  ASSIGN_OR_RETURN(api::TrainJob old, Decode(std::move(req.old_object), "oldObject"));
  return std::optional<api::TrainJob>(std::move(old));
}

const json::Value* SpecOf(const json::Value& doc) {
  const json::Value* spec = doc.Find("spec");
  return spec != nullptr && spec->IsObject() ? spec : nullptr;
}

// The decode (DecodeTrainJob(json::Value&&)) moved each received runtimePatches entry's
// trainingRuntimeSpec into job.spec.runtime_patches[i], leaving null in job.raw. Puts a copy of
// entry i's back into raw, for the answers that diff or copy whole received entries.
void RestoreReceivedSpec(api::TrainJob& job, size_t i) {
  json::Value* spec = job.raw.IsObject() ? job.raw.Find("spec") : nullptr;
  json::Value* list = spec != nullptr && spec->IsObject() ? spec->Find("runtimePatches") : nullptr;
  if (list == nullptr || !list->IsArray() || i >= list->size() ||
      i >= job.spec.runtime_patches.size() || !list->at(i).IsObject()) {
    return;
  }
  json::Value* slot = list->at(i).Find("trainingRuntimeSpec");
  const json::Value& typed = job.spec.runtime_patches[i].training_runtime_spec;
  if (slot != nullptr && slot->IsNull() && !typed.IsNull()) {
    *slot = typed.Clone();
  }
}

// Translates the received spec.podTemplateOverrides into job.spec.runtime_patches (replacing a
// previous translation in place) and appends the warnings. Returns the index of the translated
// entry (nullopt when nothing was translated); an error is the denial.
StatusOr<std::optional<size_t>> TranslateOverrides(api::TrainJob& job,
                                                   std::vector<std::string>& warnings) {
  const json::Value* spec = SpecOf(job.raw);
  if (spec == nullptr || !spec->Has("podTemplateOverrides")) {
    return std::optional<size_t>();
  }
  ASSIGN_OR_RETURN(api::TranslationResult tr, api::TranslatePodTemplateOverrides(*spec));
  std::optional<size_t> translated_index;
  if (!tr.runtime_patches.empty()) {
    const json::Value& entry = tr.runtime_patches.at(0);
    api::RuntimePatch patch;
    patch.manager = api::kPodTemplateOverridesManager;
    if (const json::Value* s = entry.Find("trainingRuntimeSpec")) {
      patch.training_runtime_spec = s->Clone();
    }
    auto& patches = job.spec.runtime_patches;
    translated_index = std::min(tr.index, patches.size());
    if (*translated_index < patches.size()) {
      RestoreReceivedSpec(job, *translated_index);  // the received entry, for the diff
      patches[*translated_index] = std::move(patch);
    } else {
      patches.push_back(std::move(patch));
    }
  }
  for (std::string& w : tr.warnings) {
    warnings.push_back(std::move(w));
  }
  return translated_index;
}

// spec.runtimePatches as the defaulter answers it: each received entry keeps every field it has
// (known or not) and gets its time; the translated entry is ours and written whole.
json::Value RuntimePatchesAfterDefaulting(const api::TrainJob& job, const json::Value* received,
                                          std::optional<size_t> translated_index) {
  json::Value patches = json::Value::Array();
  for (size_t i = 0; i < job.spec.runtime_patches.size(); ++i) {
    const api::RuntimePatch& typed = job.spec.runtime_patches[i];
    json::Value entry;
    if (translated_index && i == *translated_index) {
      entry = api::EncodeRuntimePatch(typed);
    } else if (received != nullptr && received->IsArray() && i < received->size() &&
               received->at(i).IsObject()) {
      entry = received->at(i).Clone();
    } else {
      entry = api::EncodeRuntimePatch(typed);
    }
    if (typed.time) {
      entry.Set("time", json::Value(*typed.time));
    }
    patches.PushBack(std::move(entry));
  }
  return patches;
}

// Whether each received entry is an object decoded into the entry of the same index: then
// defaulting changed no entry but its time.
bool OnlyTimesChanged(const api::TrainJob& job, const json::Value* received,
                      std::optional<size_t> translated_index) {
  return !translated_index && received != nullptr && received->IsArray() &&
         received->size() == job.spec.runtime_patches.size() &&
         std::all_of(received->elements().begin(), received->elements().end(),
                     [](const json::Value& e) { return e.IsObject(); });
}

// The patch when OnlyTimesChanged: entry by entry, the diff of the time member alone. The same
// operations as diffing the whole list against RuntimePatchesAfterDefaulting (tested), without
// copying and comparing every entry's trainingRuntimeSpec on each admission.
StatusOr<json::Value> TimesPatch(const api::TrainJob& job, const json::Value& received) {
  json::Value ops = json::Value::Array();
  for (size_t i = 0; i < job.spec.runtime_patches.size(); ++i) {
    const std::optional<std::string>& time = job.spec.runtime_patches[i].time;
    if (!time) {
      continue;  // the entry is kept as received
    }
    json::Value before = json::Value::Object();
    if (const json::Value* t = received.at(i).Find("time")) {
      before.Set("time", t->Clone());
    }
    json::Value after = json::Value::Object();
    after.Set("time", json::Value(*time));
    ASSIGN_OR_RETURN(
        json::Value entry_ops,
        json::CreateJsonPatchAt("/spec/runtimePatches/" + std::to_string(i), &before, after));
    for (json::Value& op : entry_ops.elements()) {
      ops.PushBack(std::move(op));
    }
  }
  return ops;
}

// `job` and `old` (their decode moved the documents out of the request) are freed once the answer
// is out.
void FreeAfterAnswer(api::TrainJob& job, StatusOr<std::optional<api::TrainJob>>& old) {
  http::DestroyAfterResponse(std::move(job));
  if (old.ok() && old->has_value()) {
    http::DestroyAfterResponse(std::move(**old));
  }
}

// The defaulter's answer for a decoded `job` (`old`: its old object on UPDATE).
// `now` is read only when there are runtimePatches to time: formatting the clock was a visible
// share of a cold mutate call for the TrainJobs that have none.
AdmissionResponse Default(api::TrainJob& job, const api::TrainJob* old,
                          const std::function<std::string()>& now) {
  // podTemplateOverrides -> one runtimePatches entry (at `translated_index`).
  std::vector<std::string> warnings;
  StatusOr<std::optional<size_t>> translated_index = TranslateOverrides(job, warnings);
  if (!translated_index.ok()) {
    return AdmissionResponse::Denied(translated_index.status().message());
  }

  if (!job.spec.runtime_patches.empty()) {
    api::DefaultRuntimePatchTimes(job, old, now());
  }

  // Our only edits are to spec.runtimePatches: each received entry keeps every field it has
  // (known or not) and gets its time; the translated entry is ours and written whole. The patch
  // is the diff of that member alone (the rest of the document is untouched).
  if (job.spec.runtime_patches.empty()) {
    return AdmissionResponse::Allowed().WithWarnings(std::move(warnings));
  }
  const json::Value* spec = SpecOf(job.raw);
  const json::Value* received = spec != nullptr ? spec->Find("runtimePatches") : nullptr;
  const bool only_times = OnlyTimesChanged(job, received, *translated_index);
  if (!only_times) {
    // The diff of the whole list: the received entries as they came.
    for (size_t i = 0; i < job.spec.runtime_patches.size(); ++i) {
      if (i != *translated_index) RestoreReceivedSpec(job, i);
    }
  }
  StatusOr<json::Value> ops =
      only_times ? TimesPatch(job, *received)
                 : json::CreateJsonPatchAt(
                       "/spec/runtimePatches", received,
                       RuntimePatchesAfterDefaulting(job, received, *translated_index));
  if (!ops.ok()) {
    return AdmissionResponse::Errored(500, "creating the patch: " + ops.status().message());
  }
  return AdmissionResponse::Patched(std::move(ops).value()).WithWarnings(std::move(warnings));
}

}  // namespace

AdmissionResponse TrainJobDefaulter::Consume(AdmissionRequest&& req) {
  if (req.operation == kDelete) {
    return AdmissionResponse::Allowed();
  }
  StatusOr<api::TrainJob> job = Decode(std::move(req.object), "object");
  if (!job.ok()) {
    return AdmissionResponse::Errored(400, job.status().message());
  }
  // Upstream unmarshals the old object inside Default(): its error is a denial.
  StatusOr<std::optional<api::TrainJob>> old = DecodeOld(req);
  AdmissionResponse resp = old.ok() ? Default(*job, old->has_value() ? &**old : nullptr, now_)
                                    : AdmissionResponse::Denied(old.status().message());
  FreeAfterAnswer(*job, old);
  return resp;
}

AdmissionResponse TrainJobValidator::Consume(AdmissionRequest&& req) {
  if (req.operation == kDelete || req.operation == "CONNECT") {
    return AdmissionResponse::Allowed();  // not validated upstream
  }
  if (req.operation != kCreate && req.operation != kUpdate) {
    // controller-runtime's validator answers anything else so (a hand-made review).
    return AdmissionResponse::Errored(400, "unknown operation \"" + req.operation + "\"");
  }
  StatusOr<api::TrainJob> job = Decode(std::move(req.object), "object");
  if (!job.ok()) {
    return AdmissionResponse::Errored(400, job.status().message());
  }
  StatusOr<std::optional<api::TrainJob>> old = DecodeOld(req);
  AdmissionResponse resp = old.ok() ? Validate(*job, old->has_value() ? &**old : nullptr)
                                    : AdmissionResponse::Errored(400, old.status().message());
  FreeAfterAnswer(*job, old);
  return resp;
}

AdmissionResponse TrainJobValidator::Validate(const api::TrainJob& job,
                                              const api::TrainJob* old) const {
  core::Runtime* runtime = runtimes_->ForTrainJob(job);
  if (runtime == nullptr) {
    return AdmissionResponse::Denied("unsupported runtime: " +
                                     api::RuntimeRegistryKey(job.spec.runtime_ref));
  }
  field::ValidationResult result = runtime->ValidateObjects(old, job);
  if (!result.ok()) {
    return AdmissionResponse::Denied(result.ErrorMessage())
        .WithWarnings(std::move(result.warnings));
  }
  return AdmissionResponse::Allowed().WithWarnings(std::move(result.warnings));
}

}  // namespace trainer::webhook
