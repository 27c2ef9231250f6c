// newRuntimeInfo (upstream TrainingRuntime.newRuntimeInfo, pkg/runtime/core/trainingruntime.go):
// the Info of a TrainJob on a JobSet template before any plugin ran.
//   1. JobSet labels/annotations = template metadata, overlaid by every runtimePatch's
//      template metadata in list order;
//   2. the runtimePatches' template.spec strategic-merged over the JobSet spec in list order,
//      then replicatedJobs re-sorted (stably) into the template's order;
//   3. resourcesPerNode merged per resource key into the trainer `node` container (only with an
//      mlPolicy, or the MPI `node` job with runLauncherAsNode);
//   4. one PodSet per replicatedJob: count = parallelism (or mlPolicy.numNodes for the trainer
//      ancestor), containers/volumes, and SinglePodRequests.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/json/json.h"
#include "common/status/status.h"
#include "runtime/api/types.h"
#include "runtime/framework/info.h"

namespace trainer::core {

// `jobset_template` is the runtime's spec.template ({metadata, spec}). Of the TrainJob it reads
// spec.runtimePatches and spec.trainer.resourcesPerNode only (RuntimeInfoCache relies on it).
StatusOr<framework::Info> NewRuntimeInfo(
    const api::TrainJob& job, const json::Value& jobset_template,
    const std::optional<api::MLPolicy>& ml_policy,
    const std::optional<api::PodGroupPolicy>& pod_group_policy);

// The runtime-only Info of each runtime version, computed once. A TrainJob without
// runtimePatches whose resourcesPerNode is unset or goes to no pod set contributes nothing to
// NewRuntimeInfo, so every admission of such a TrainJob can share one Info per runtime version
// (read-only, as the validation plugins take it).
//
// An entry is keyed by the runtime's kind, namespace and name, and serves only the decoded
// runtime object it was computed from (held weakly: the same object, still alive) at the same
// metadata.uid and resourceVersion. The decoded runtimes are immutable and a new version is a
// new object, so a changed runtime (updated, or deleted and re-created) is computed afresh and
// never answered from an older version. Thread-safe.
class RuntimeInfoCache {
 public:
  using SharedInfo = std::shared_ptr<const framework::Info>;

  // NewRuntimeInfo(job, template, mlPolicy, podGroupPolicy of `runtime`, a `kind`) shared, when
  // `job` contributes nothing to it; nullopt when it does (the caller computes that one).
  std::optional<StatusOr<SharedInfo>> Shared(
      std::string_view kind, const api::TrainJob& job,
      const std::shared_ptr<const api::TrainingRuntime>& runtime);

  // NewRuntimeInfo of `job` on `runtime` (as above), shared: Shared's Info when the job adds
  // nothing, else one computed on this runtime version for a TrainJob with identical
  // runtimePatches[].trainingRuntimeSpec and resourcesPerNode (the same JSON: types, member
  // order and values), the only parts of a TrainJob NewRuntimeInfo reads. Jobs admitted in
  // batches (one queue's patches, one sweep's resources) share those; the last kJobVariants
  // per runtime version are kept.
  StatusOr<SharedInfo> ForJob(std::string_view kind, const api::TrainJob& job,
                              const std::shared_ptr<const api::TrainingRuntime>& runtime);
  static constexpr size_t kJobVariants = 8;

  // Infos computed so far (cache misses: runtime-only and per job), for tests.
  int computed() const;

 private:
  struct RuntimeOnly {
    StatusOr<SharedInfo> info;
    bool takes_resources;  // some pod set would take a TrainJob's resourcesPerNode
  };
  // What NewRuntimeInfo read of a TrainJob, and the Info it computed from it.
  struct JobVariant {
    std::vector<json::Value> patches;  // runtimePatches[].trainingRuntimeSpec
    json::Value resources;             // spec.trainer.resourcesPerNode, null when unset
    StatusOr<SharedInfo> info;
  };
  // Whether `v` was computed for a TrainJob NewRuntimeInfo cannot tell from `job`.
  static bool SameInputs(const JobVariant& v, const api::TrainJob& job);
  struct Entry {
    std::string uid;
    std::string resource_version;
    std::weak_ptr<const api::TrainingRuntime> source;
    std::shared_ptr<const RuntimeOnly> runtime_only;
    std::vector<std::shared_ptr<const JobVariant>> variants;  // oldest first
  };
  // The entry of `runtime` when it holds that very version; nullptr otherwise. Under mu_.
  Entry* EntryOfLocked(std::string_view kind,
                       const std::shared_ptr<const api::TrainingRuntime>& runtime);
  std::shared_ptr<const RuntimeOnly> RuntimeOnlyOf(
      std::string_view kind, const std::shared_ptr<const api::TrainingRuntime>& runtime);

  mutable std::mutex mu_;
  // kind, namespace, name; looked up without copying them.
  using Key = std::tuple<std::string, std::string, std::string>;
  using KeyView = std::tuple<std::string_view, std::string_view, std::string_view>;
  struct KeyLess {
    using is_transparent = void;
    static KeyView View(const Key& k) { return {std::get<0>(k), std::get<1>(k), std::get<2>(k)}; }
    static const KeyView& View(const KeyView& k) { return k; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return View(a) < View(b);
    }
  };
  std::map<Key, Entry, KeyLess> entries_;
  int computed_ = 0;
};

// Overlays a TrainJob's resourcesPerNode on a container's resources: limits and requests merge
// per key (the TrainJob wins, a null deletes); the result holds only limits and requests.
json::Value MergeResourceRequirements(const json::Value& base, const json::Value& override_res);

// k8s.io/component-helpers/resource.PodRequests of a pod spec: the sum of container requests,
// raised to the largest init container (plus the sidecars started before it), sidecar
// (restartPolicy: Always) init containers added, plus spec.overhead. A ResourceList JSON with
// canonical quantity strings; unparsable quantities are an error naming the container.
StatusOr<json::Value> PodRequests(const json::Value& pod_spec);

}  // namespace trainer::core
