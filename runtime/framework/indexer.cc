// The TrainJob and runtime cache indexes (see indexer.h).
#include "runtime/framework/indexer.h"

#include <algorithm>

#include "runtime/api/types.h"

namespace trainer::framework {
namespace {

std::string StringAt(const json::Value* obj, std::string_view key, std::string_view def) {
  const json::Value* v = obj != nullptr ? obj->Find(key) : nullptr;
  return v != nullptr && v->IsString() ? v->AsString() : std::string(def);
}

// The runtime a TrainJob references, if it is of `want_kind`.
std::string RuntimeRefName(const json::Value& trainjob, std::string_view want_kind) {
  const json::Value* spec = trainjob.Find("spec");
  const json::Value* ref = spec != nullptr ? spec->Find("runtimeRef") : nullptr;
  if (ref == nullptr || !ref->IsObject()) return "";
  // CRD defaults: apiGroup trainer.kubeflow.org, kind ClusterTrainingRuntime.
  if (StringAt(ref, "apiGroup", api::kGroup) != api::kGroup ||
      StringAt(ref, "kind", api::kClusterTrainingRuntimeKind) != want_kind) {
    return "";
  }
  return StringAt(ref, "name", "");
}

const json::Value* Path(const json::Value* v, std::initializer_list<std::string_view> keys) {
  for (std::string_view k : keys) {
    if (v == nullptr) return nullptr;
    v = v->Find(k);
  }
  return v;
}

}  // namespace

std::vector<std::string> TrainJobTrainingRuntimeRef(const json::Value& trainjob) {
  std::string name = RuntimeRefName(trainjob, api::kTrainingRuntimeKind);
  if (name.empty()) return {};
  return {StringAt(trainjob.Find("metadata"), "namespace", "") + "/" + name};
}

std::vector<std::string> TrainJobClusterTrainingRuntimeRef(const json::Value& trainjob) {
  std::string name = RuntimeRefName(trainjob, api::kClusterTrainingRuntimeKind);
  if (name.empty()) return {};
  return {name};
}

std::vector<std::string> RuntimeClassNames(const json::Value& runtime) {
  std::vector<std::string> out;
  const json::Value* rjobs = Path(&runtime, {"spec", "template", "spec", "replicatedJobs"});
  if (rjobs == nullptr || !rjobs->IsArray()) return out;
  for (const json::Value& rj : rjobs->elements()) {
    const json::Value* rc = Path(&rj, {"template", "spec", "template", "spec", "runtimeClassName"});
    if (rc != nullptr && rc->IsString() && !rc->AsString().empty() &&
        std::find(out.begin(), out.end(), rc->AsString()) == out.end()) {
      out.push_back(rc->AsString());
    }
  }
  return out;
}

}  // namespace trainer::framework
