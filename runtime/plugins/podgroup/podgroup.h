// What the gang-scheduling plugins (CoScheduling, Volcano) share: the size of a TrainJob's
// pod group and the "build only while absent or suspended" rule of upstream's PodGroup
// builders (plugins/coscheduling/coscheduling.go, plugins/volcano/volcano.go).
#pragma once

#include <cstdint>

#include "common/json/json.h"
#include "common/status/status.h"
#include "runtime/api/types.h"
#include "runtime/framework/info.h"
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

}  // namespace trainer::plugins::podgroup
