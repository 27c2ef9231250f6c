// TrainJobDefaulter and TrainJobValidator (see trainjob_webhook.h).
#include "webhook/trainjob_webhook.h"

#include <ctime>
#include <optional>
#include <utility>
#include <vector>

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

const json::Value* SpecOf(const json::Value& doc) {
  const json::Value* spec = doc.Find("spec");
  return spec != nullptr && spec->IsObject() ? spec : nullptr;
}

}  // namespace

std::string NowRfc3339() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

AdmissionResponse TrainJobDefaulter::Consume(AdmissionRequest&& req) {
  if (req.operation == kDelete) {
    return AdmissionResponse::Allowed();
  }
  StatusOr<api::TrainJob> job = Decode(std::move(req.object), "object");
  if (!job.ok()) {
    return AdmissionResponse::Errored(400, job.status().message());
  }
  std::optional<api::TrainJob> old;
  if (req.operation == kUpdate) {
    // Upstream unmarshals the old object inside Default(): its error is a denial.
    StatusOr<api::TrainJob> o = Decode(std::move(req.old_object), "oldObject");
    if (!o.ok()) {
      return AdmissionResponse::Denied(o.status().message());
    }
    old = std::move(o).value();
  }

  // podTemplateOverrides -> one runtimePatches entry (at `translated_index`).
  std::vector<std::string> warnings;
  std::optional<size_t> translated_index;
  const json::Value& object = job->raw;  // the received document
  if (const json::Value* spec = SpecOf(object);
      spec != nullptr && spec->Has("podTemplateOverrides")) {
    StatusOr<api::TranslationResult> tr = api::TranslatePodTemplateOverrides(*spec);
    if (!tr.ok()) {
      return AdmissionResponse::Denied(tr.status().message());
    }
    if (!tr->runtime_patches.empty()) {
      const json::Value& entry = tr->runtime_patches.at(0);
      api::RuntimePatch patch;
      patch.manager = api::kPodTemplateOverridesManager;
      if (const json::Value* s = entry.Find("trainingRuntimeSpec")) {
        patch.training_runtime_spec = s->Clone();
      }
      auto& patches = job->spec.runtime_patches;
      translated_index = std::min(tr->index, patches.size());
      if (*translated_index < patches.size()) {
        patches[*translated_index] = std::move(patch);
      } else {
        patches.push_back(std::move(patch));
      }
    }
    warnings = std::move(tr->warnings);
  }

  api::DefaultRuntimePatchTimes(*job, old ? &*old : nullptr, now_());

  // Our only edits are to spec.runtimePatches: each received entry keeps every field it has
  // (known or not) and gets its time; the translated entry is ours and written whole. The patch
  // is the diff of that member alone (the rest of the document is untouched).
  if (job->spec.runtime_patches.empty()) {
    return AdmissionResponse::Allowed().WithWarnings(std::move(warnings));
  }
  const json::Value* received = nullptr;
  if (const json::Value* spec = SpecOf(object)) {
    received = spec->Find("runtimePatches");
  }
  json::Value patches = json::Value::Array();
  for (size_t i = 0; i < job->spec.runtime_patches.size(); ++i) {
    const api::RuntimePatch& typed = job->spec.runtime_patches[i];
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
  StatusOr<json::Value> ops = json::CreateJsonPatchAt("/spec/runtimePatches", received, patches);
  if (!ops.ok()) {
    return AdmissionResponse::Errored(500, "creating the patch: " + ops.status().message());
  }
  return AdmissionResponse::Patched(std::move(ops).value()).WithWarnings(std::move(warnings));
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
  std::optional<api::TrainJob> old;
  if (req.operation == kUpdate) {
    StatusOr<api::TrainJob> o = Decode(std::move(req.old_object), "oldObject");
    if (!o.ok()) {
      return AdmissionResponse::Errored(400, o.status().message());
    }
    old = std::move(o).value();
  }
  core::Runtime* runtime = runtimes_->ForTrainJob(*job);
  if (runtime == nullptr) {
    return AdmissionResponse::Denied("unsupported runtime: " +
                                     api::RuntimeRegistryKey(job->spec.runtime_ref));
  }
  field::ValidationResult result = runtime->ValidateObjects(old ? &*old : nullptr, *job);

  if (!result.ok()) {
    return AdmissionResponse::Denied(result.ErrorMessage())
        .WithWarnings(std::move(result.warnings));
  }
  return AdmissionResponse::Allowed().WithWarnings(std::move(result.warnings));
}

}  // namespace trainer::webhook
