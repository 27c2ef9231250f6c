// RuntimeReconciler: the TrainingRuntime and ClusterTrainingRuntime controllers
// (upstream pkg/controller/{trainingruntime,clustertrainingruntime}_controller.go).
//
// v2.3.0 removed runtime protection (#3716): the legacy finalizer
// `trainer.kubeflow.org/resource-in-use` is removed wherever it is found, and runtimes may be
// deleted while TrainJobs use them (their snapshots keep them running). With
// --protect-runtimes-in-use the v2.2 design comes back: the finalizer is kept on a runtime while
// any TrainJob references it (added when the first one appears, removed when the last one goes,
// so a deleted runtime disappears once unused).
//
// Finalizer edits are JSON merge patches of metadata.finalizers carrying the resourceVersion, so
// a concurrent change of someone else's finalizer fails with a conflict (and is retried) instead
// of being overwritten (upstream patches without that precondition).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "common/json/json.h"
#include "common/kube/client.h"
#include "controller/reconcile.h"
#include "runtime/framework/reader.h"

namespace trainer::controller {

inline constexpr char kTrainingRuntimeControllerName[] = "trainingruntime_controller";
inline constexpr char kClusterTrainingRuntimeControllerName[] = "clustertrainingruntime_controller";

// Whether a runtime's update can change what its TrainJobs get: false when only its bookkeeping
// moved (resourceVersion, managedFields, finalizers: the in-use finalizer above, or a relist
// that found it unchanged), so TrainJobs still waiting for a snapshot are not confirmed again.
bool RuntimeChangeReachesTrainJobs(const json::Value& before, const json::Value& after);

class RuntimeReconciler {
 public:
  struct Deps {
    const framework::Reader* reader = nullptr;
    kube::Writer* writer = nullptr;
    // Whether any TrainJob references the runtime ns/name ("" ns for a cluster runtime).
    std::function<bool(std::string_view ns, std::string_view name)> in_use;
  };
  // `cluster`: ClusterTrainingRuntime when true, TrainingRuntime otherwise.
  RuntimeReconciler(Deps deps, bool cluster, bool protect_in_use)
      : deps_(std::move(deps)), cluster_(cluster), protect_(protect_in_use) {}

  ReconcileResult Reconcile(std::string_view ns, std::string_view name);

 private:
  Deps deps_;
  const bool cluster_;
  const bool protect_;
};

}  // namespace trainer::controller
