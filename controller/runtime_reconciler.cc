// Runtime finalizer handling.
#include "controller/runtime_reconciler.h"

#include <algorithm>
#include <initializer_list>

#include "common/kube/meta.h"
#include "common/kube/rest_mapper.h"
#include "runtime/api/kinds.h"
#include "runtime/api/labels.h"

namespace trainer::controller {
namespace {

// Object equality, members named in `ignored` left out.
bool SameExcept(const json::Value& a, const json::Value& b,
                std::initializer_list<std::string_view> ignored) {
  if (!a.IsObject() || !b.IsObject()) return a == b;
  auto is_ignored = [&](std::string_view k) {
    return std::find(ignored.begin(), ignored.end(), k) != ignored.end();
  };
  size_t compared = 0;
  for (const auto& [k, v] : a.members()) {
    if (is_ignored(k)) continue;
    const json::Value* w = b.Find(k);
    if (w == nullptr || *w != v) return false;
    ++compared;
  }
  size_t in_b = 0;
  for (const auto& [k, v] : b.members()) in_b += is_ignored(k) ? 0 : 1;
  return compared == in_b;
}

}  // namespace

bool RuntimeChangeReachesTrainJobs(const json::Value& before, const json::Value& after) {
  static const json::Value kNone = json::Value::Object();
  const json::Value* mb = before.Find("metadata");
  const json::Value* ma = after.Find("metadata");
  return !SameExcept(before, after, {"metadata"}) ||
         !SameExcept(mb != nullptr ? *mb : kNone, ma != nullptr ? *ma : kNone,
                     {"resourceVersion", "managedFields", "finalizers"});
}

ReconcileResult RuntimeReconciler::Reconcile(std::string_view ns, std::string_view name) {
  kube::GroupVersionKind gvk =
      cluster_ ? api::kClusterTrainingRuntimeGVK : api::kTrainingRuntimeGVK;
  StatusOr<json::Value> runtime = deps_.reader->Get(gvk, ns, name);
  if (!runtime.ok()) {
    return {IsNotFound(runtime.status()) ? OkStatus() : runtime.status()};
  }
  const json::Value& meta = *runtime->Find("metadata");
  std::vector<std::string> finalizers;
  bool has = false;
  if (const json::Value* f = meta.Find("finalizers"); f != nullptr && f->IsArray()) {
    for (const json::Value& v : f->elements()) {
      if (!v.IsString()) continue;
      if (v.AsString() == api::kFinalizerResourceInUse) {
        has = true;
      } else {
        finalizers.push_back(v.AsString());
      }
    }
  }
  bool deleting = meta.Has("deletionTimestamp");
  bool want = protect_ && deps_.in_use && deps_.in_use(ns, name);
  if (has == want || (want && deleting)) {
    // Nothing to do; and a finalizer cannot be added to an object being deleted.
    return {};
  }
  if (want) finalizers.push_back(api::kFinalizerResourceInUse);
  json::Value patch = json::Value::Object();
  json::Value& pm = patch["metadata"];
  pm.Set("finalizers", json::Value::StringArray(finalizers));
  pm.Set("resourceVersion", std::string(kube::ResourceVersion(*runtime)));
  StatusOr<json::Value> out =
      deps_.writer->Patch(cluster_ ? kube::kClusterTrainingRuntimes : kube::kTrainingRuntimes, ns,
                          name, kube::PatchType::kMerge, patch);
  if (!out.ok() && !IsNotFound(out.status())) {
    return {out.status().WithContext(std::string(want ? "adding" : "removing") + " finalizer of " +
                                     gvk.kind + " " + kube::ObjectKey(ns, name))};
  }
  return {};
}

}  // namespace trainer::controller
