// What the gang-scheduling plugins (CoScheduling, Volcano) share: the size of a TrainJob's
// pod group, the "build only while absent or suspended" rule of upstream's PodGroup builders,
// and their watches (plugins/coscheduling/coscheduling.go, plugins/volcano/volcano.go).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/json/json.h"
#include "common/status/status.h"
#include "runtime/api/types.h"
#include "runtime/framework/info.h"
#include "runtime/framework/interface.h"
#include "runtime/framework/reader.h"

namespace trainer::plugins::podgroup {

struct Size {
  int32_t min_member = 0;
  json::Value min_resources = json::Value::Object();  // ResourceList, keys sorted
};

// minMember = sum of every PodSet's count, initializers included (upstream's choice, kept);
// minResources = sum of SinglePodRequests x count (PodRequests already applied the
// init-container max rule, sidecars and overhead). A PodSet without a count counts as 1
// (upstream dereferences the nil pointer).
StatusOr<Size> SizeOf(const framework::Info& info);

// Whether to (re)build the PodGroup: when it does not exist, or while the TrainJob is
// suspended. A read error other than NotFound is returned.
StatusOr<bool> ShouldBuild(const framework::Reader& reader, const kube::GroupVersionKind& gvk,
                           const api::TrainJob& job);

// {apiVersion, kind, metadata: {name: <tj>, namespace, ownerReferences: [<TrainJob>]}}.
json::Value NewObject(const kube::GroupVersionKind& gvk, const api::TrainJob& job);

// Upstream's ReconcilerBuilders of both plugins, registered only while `pod_group` is served
// (else upstream logs "PodGroup CRDs must be installed in advance" and watches nothing):
//   PodGroups of that kind controlled by a TrainJob;
//   LimitRange events: the suspended TrainJobs of its namespace;
//   RuntimeClass events: the suspended TrainJobs whose runtime's pod templates use it.
// A suspended TrainJob's PodGroup is rebuilt on every pass (ShouldBuild), so these passes keep it
// current with what its pods will be admitted with.
std::vector<framework::Watch> Watches(const kube::GroupVersionKind& pod_group);
// The runtimeClassName indexes of both runtime kinds, which the RuntimeClass mapping lists by.
std::vector<framework::Index> Indexes();

// The mappings of those watches (upstream PodGroupLimitRangeHandler.queueSuspendedTrainJob and
// PodGroupRuntimeClassHandler.queueSuspendedTrainJobs), sorted keys "ns/name".
std::vector<std::string> SuspendedTrainJobsInNamespace(const json::Value& limit_range,
                                                       const framework::Lister& cache);
std::vector<std::string> SuspendedTrainJobsUsingRuntimeClass(const json::Value& runtime_class,
                                                             const framework::Lister& cache);

}  // namespace trainer::plugins::podgroup
