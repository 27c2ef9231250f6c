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

#include <optional>

#include "common/json/json.h"
#include "common/status/status.h"
#include "runtime/api/types.h"
#include "runtime/framework/info.h"

namespace trainer::core {

// `jobset_template` is the runtime's spec.template ({metadata, spec}).
StatusOr<framework::Info> NewRuntimeInfo(
    const api::TrainJob& job, const json::Value& jobset_template,
    const std::optional<api::MLPolicy>& ml_policy,
    const std::optional<api::PodGroupPolicy>& pod_group_policy);

// Overlays a TrainJob's resourcesPerNode on a container's resources: limits and requests merge
// per key (the TrainJob wins, a null deletes); the result holds only limits and requests.
json::Value MergeResourceRequirements(const json::Value& base, const json::Value& override_res);

// k8s.io/component-helpers/resource.PodRequests of a pod spec: the sum of container requests,
// raised to the largest init container (plus the sidecars started before it), sidecar
// (restartPolicy: Always) init containers added, plus spec.overhead. A ResourceList JSON with
// canonical quantity strings; unparsable quantities are an error naming the container.
StatusOr<json::Value> PodRequests(const json::Value& pod_spec);

}  // namespace trainer::core
