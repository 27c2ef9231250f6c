// The cache indexes the controller lists TrainJobs and runtimes by (upstream
// pkg/runtime/indexer/indexer.go): TrainJobs by the runtime they reference, and runtimes by the
// runtimeClassNames of their pod templates (upstream registers those in the CoScheduling and
// Volcano plugins' New; here the plugins declare them through WatchExtensionPlugin::Indexes).
//
// Unlike upstream, a TrainJob's TrainingRuntime index value is "ns/name": upstream indexes the
// name alone, so a TrainingRuntime event also matched TrainJobs of other namespaces that
// reference a TrainingRuntime of the same name.
//
//   trainjobs.AddIndexer(kTrainJobRuntimeRefKey, TrainJobTrainingRuntimeRef);
//   for (const std::string& key : lister.KeysByIndex(TrainJobGVK, kTrainJobRuntimeRefKey, "ns/rt"))
#pragma once

#include <string>
#include <vector>

#include "common/json/json.h"

namespace trainer::framework {

inline constexpr char kTrainJobRuntimeRefKey[] = ".spec.runtimeRef.kind=trainingRuntime";
inline constexpr char kTrainJobClusterRuntimeRefKey[] =
    ".spec.runtimeRef.kind=clusterTrainingRuntime";
inline constexpr char kTrainingRuntimeRuntimeClassKey[] =
    ".trainingRuntimeSpec.jobSetTemplateSpec.replicatedJobs.podTemplateSpec.runtimeClassName";
inline constexpr char kClusterTrainingRuntimeRuntimeClassKey[] =
    ".clusterTrainingRuntimeSpec.jobSetTemplateSpec.replicatedJobs.podTemplateSpec."
    "runtimeClassName";

// ["ns/name"] of the TrainingRuntime a TrainJob references (apiGroup trainer.kubeflow.org, kind
// TrainingRuntime; the CRD defaults apply when they are unset), else [].
std::vector<std::string> TrainJobTrainingRuntimeRef(const json::Value& trainjob);
// [name] of the ClusterTrainingRuntime a TrainJob references, else [].
std::vector<std::string> TrainJobClusterTrainingRuntimeRef(const json::Value& trainjob);
// Every runtimeClassName of a runtime's pod templates (spec.template.spec.replicatedJobs[]
// .template.spec.template.spec.runtimeClassName), without duplicates.
std::vector<std::string> RuntimeClassNames(const json::Value& runtime);

}  // namespace trainer::framework
