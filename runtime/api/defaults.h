// Defaulting of the trainer.kubeflow.org/v1alpha1 kinds, shared by the mutating webhook (online)
// and trainer-render (offline), so that what we render offline equals what the cluster stores.
//
//   - DefaultRuntimePatchTimes: the only mutation of upstream's TrainJob defaulter
//     (pkg/webhooks/trainjob_webhook.go, TrainJobDefaulter.Default): spec.runtimePatches[].time.
//   - ApplySchemaDefaults / ApplyRuntimeSchemaDefaults: the structural defaults of the CRD schemas
//     (manifests/base/crds/*.yaml `default:` markers), which the apiserver applies online before
//     any webhook; the offline renderer calls them to see the same objects.
//
//   api::ApplySchemaDefaults(job);
//   api::DefaultRuntimePatchTimes(job, is_update ? &old_job : nullptr, "2026-01-02T03:04:05Z");
#pragma once

#include <string>
#include <string_view>

#include "runtime/api/types.h"

namespace trainer::api {

// Sets spec.runtimePatches[].time exactly as upstream's defaulter does:
//   CREATE (old == nullptr): time = now where unset; a client-supplied time is kept.
//   UPDATE, old has a patch with the same manager:
//     semantically equal to it ignoring time -> old time (overriding any client-supplied time);
//     different                               -> now (overriding any client-supplied time).
//   UPDATE, manager new                       -> now only where unset.
// "Semantically equal" compares manager and trainingRuntimeSpec as JSON, numbers by value, object
// member order ignored, and null / empty lists / empty label maps treated as absent (Go's
// equality.Semantic.DeepEqual on the decoded structs, where nil and empty slices/maps are equal).
// `now_rfc3339` is the caller's clock at second precision ("2026-01-02T03:04:05Z").
void DefaultRuntimePatchTimes(TrainJob& job, const TrainJob* old, std::string_view now_rfc3339);

// The TrainJob CRD's structural defaults: spec.suspend=false,
// spec.managedBy=trainer.kubeflow.org/trainjob-controller, spec.runtimeRef.apiGroup=
// trainer.kubeflow.org, spec.runtimeRef.kind=ClusterTrainingRuntime. (initializer.*.secretRef.name
// defaults to "", which the typed secret_ref already represents.) Only unset fields change.
void ApplySchemaDefaults(TrainJob& job);

// The (Cluster)TrainingRuntime CRD's structural defaults, applied where the parent object exists:
//   mlPolicy.mpi: numProcPerNode=1, mpiImplementation=OpenMPI, sshAuthMountPath=/root/.ssh,
//                 runLauncherAsNode=false
//   mlPolicy.flux.numProcPerNode=1; podGroupPolicy.coscheduling.scheduleTimeoutSeconds=60;
//   podGroupPolicy.volcano.networkTopology: mode=hard, highestTierAllowed=1
//   template.spec: replicatedJobs[].groupName=default, replicatedJobs[].replicas=1,
//                  failurePolicy.restartStrategy=Recreate,
//                  volumeClaimPolicies[].retentionPolicy.whenDeleted=Delete,
//                  and in every pod template, containers[]/initContainers[].ports[].protocol=TCP.
void ApplyRuntimeSchemaDefaults(TrainingRuntime& runtime);

// The key of the runtime registry for a runtimeRef: schema.GroupKind{Group, Kind}.String() of
// upstream's RuntimeRefToRuntimeRegistryKey, e.g. "ClusterTrainingRuntime.trainer.kubeflow.org";
// an empty (or unset) group gives just the kind.
std::string RuntimeRegistryKey(const RuntimeRef& ref);

}  // namespace trainer::api
