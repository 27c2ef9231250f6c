// Runtime finalizer handling.
#include "controller/runtime_reconciler.h"

#include "common/kube/meta.h"
#include "common/kube/rest_mapper.h"
#include "runtime/api/kinds.h"
#include "runtime/api/labels.h"

namespace trainer::controller {

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
