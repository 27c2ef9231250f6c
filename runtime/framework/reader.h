// Reader: how the runtime pipeline reads the cluster. runtime/ does no network I/O; the
// controller and the webhook pass an implementation backed by their informer caches, tests and
// trainer-render pass a MapReader (runtime/framework/map_reader.h).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/json/json.h"
#include "common/kube/types.h"
#include "common/status/status.h"
#include "runtime/api/kinds.h"
#include "runtime/api/types.h"

namespace trainer::framework {

using kube::GroupVersionKind;

// Transitional: the names controller/manager.cc, controller/trainjob_reconciler.cc and
// tools/trainer-render still use; the kinds themselves are in runtime/api/kinds.h.
inline GroupVersionKind ConfigMapGVK() { return api::kConfigMapGVK; }
inline GroupVersionKind JobSetGVK() { return api::kJobSetGVK; }
inline GroupVersionKind TrainingRuntimeGVK() { return api::kTrainingRuntimeGVK; }
inline GroupVersionKind ClusterTrainingRuntimeGVK() { return api::kClusterTrainingRuntimeGVK; }

class Reader {
 public:
  virtual ~Reader() = default;
  // Returns the object (a full JSON document), or a NotFound Status when it does not exist.
  // `ns` is empty for cluster-scoped kinds. NotFound messages read as the apiserver's:
  // `trainingruntimes.trainer.kubeflow.org "name" not found`.
  virtual StatusOr<json::Value> Get(const GroupVersionKind& gvk, std::string_view ns,
                                    std::string_view name) const = 0;

  // A TrainingRuntime or ClusterTrainingRuntime (`gvk` is one of them), decoded; Get()'s error
  // or the decode error otherwise. Immutable, so it may be shared between threads. This default
  // decodes Get()'s document on every call; the webhook's readers override it to keep one
  // decoded copy per object version, since every TrainJob admission reads its runtime and
  // runtimes rarely change.
  virtual StatusOr<std::shared_ptr<const api::TrainingRuntime>> GetTrainingRuntime(
      const GroupVersionKind& gvk, std::string_view ns, std::string_view name) const;
};

// The apiserver's NotFound text for a kind: `<plural>.<group> "<name>" not found`
// (`configmaps "name" not found` for the core group). The plural is the lower-cased kind with
// the apiserver's default English plural (`priorityclasses`).
std::string NotFoundMessage(const GroupVersionKind& gvk, std::string_view name);

}  // namespace trainer::framework
