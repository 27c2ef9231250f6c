// PodGroup sizing and the build gate shared by CoScheduling and Volcano.
#include "runtime/plugins/podgroup/podgroup.h"

#include <algorithm>
#include <map>
#include <string>

#include "common/quantity/quantity.h"
#include "runtime/api/kinds.h"
#include "runtime/framework/apply.h"
#include "runtime/framework/indexer.h"

namespace trainer::plugins::podgroup {

StatusOr<Size> SizeOf(const framework::Info& info) {
  Size size;
  std::map<std::string, quantity::Quantity> total;
  for (const framework::PodSet& ps : info.template_spec.pod_sets) {
    int32_t count = ps.count.value_or(1);
    size.min_member += count;
    if (!ps.single_pod_requests.IsObject()) {
      continue;
    }
    for (const auto& [name, q] : ps.single_pod_requests.members()) {
      StatusOr<quantity::Quantity> parsed = quantity::Quantity::FromJson(q);
      if (!parsed.ok()) {
        return parsed.status().WithContext("podSet " + ps.name + " requests " + name);
      }
      total[name] += *parsed * count;
    }
  }
  for (const auto& [name, q] : total) {
    size.min_resources.Set(name, json::Value(q.ToString()));
  }
  return size;
}

StatusOr<bool> ShouldBuild(const framework::Reader& reader, const kube::GroupVersionKind& gvk,
                           const api::TrainJob& job) {
  StatusOr<json::Value> old = reader.Get(gvk, job.metadata.namespace_, job.metadata.name);
  if (!old.ok()) {
    if (IsNotFound(old.status())) {
      return true;
    }
    return old.status();
  }
  return job.spec.suspend.value_or(false);
}

json::Value NewObject(const kube::GroupVersionKind& gvk, const api::TrainJob& job) {
  return framework::NewOwnedObject(gvk, job.metadata.name, job);
}

std::vector<framework::Watch> Watches(const kube::GroupVersionKind& pod_group) {
  return {
      {.gvk = pod_group, .only_if_installed = pod_group},
      {.gvk = api::kLimitRangeGVK,
       .owned_by_trainjob = false,
       .trainjobs_for = SuspendedTrainJobsInNamespace,
       .only_if_installed = pod_group},
      {.gvk = api::kRuntimeClassGVK,
       .owned_by_trainjob = false,
       .trainjobs_for = SuspendedTrainJobsUsingRuntimeClass,
       .only_if_installed = pod_group},
  };
}

std::vector<framework::Index> Indexes() {
  return {{api::kTrainingRuntimeGVK, framework::kTrainingRuntimeRuntimeClassKey,
           framework::RuntimeClassNames},
          {api::kClusterTrainingRuntimeGVK, framework::kClusterTrainingRuntimeRuntimeClassKey,
           framework::RuntimeClassNames}};
}

namespace {

// `keys` of cached TrainJobs that are suspended, sorted, without duplicates.
std::vector<std::string> Suspended(std::vector<std::string> keys, const framework::Lister& cache) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::erase_if(keys, [&](const std::string& key) {
    std::shared_ptr<const json::Value> tj = cache.Get(api::kTrainJobGVK, key);
    const json::Value* spec = tj != nullptr ? tj->Find("spec") : nullptr;
    const json::Value* suspend = spec != nullptr ? spec->Find("suspend") : nullptr;
    return suspend == nullptr || !suspend->IsBool() || !suspend->AsBool();
  });
  return keys;
}

std::string NameOf(const json::Value& obj, std::string_view field) {
  const json::Value* meta = obj.Find("metadata");
  const json::Value* v = meta != nullptr ? meta->Find(field) : nullptr;
  return v != nullptr && v->IsString() ? v->AsString() : "";
}

}  // namespace

std::vector<std::string> SuspendedTrainJobsInNamespace(const json::Value& limit_range,
                                                       const framework::Lister& cache) {
  return Suspended(cache.Keys(api::kTrainJobGVK, NameOf(limit_range, "namespace")), cache);
}

std::vector<std::string> SuspendedTrainJobsUsingRuntimeClass(const json::Value& runtime_class,
                                                             const framework::Lister& cache) {
  const std::string name = NameOf(runtime_class, "name");
  std::vector<std::string> trainjobs;
  auto add = [&](std::vector<std::string> keys) {
    trainjobs.insert(trainjobs.end(), keys.begin(), keys.end());
  };
  for (const std::string& rt : cache.KeysByIndex(
           api::kTrainingRuntimeGVK, framework::kTrainingRuntimeRuntimeClassKey, name)) {
    add(cache.KeysByIndex(api::kTrainJobGVK, framework::kTrainJobRuntimeRefKey, rt));
  }
  for (const std::string& ctr :
       cache.KeysByIndex(api::kClusterTrainingRuntimeGVK,
                         framework::kClusterTrainingRuntimeRuntimeClassKey, name)) {
    add(cache.KeysByIndex(api::kTrainJobGVK, framework::kTrainJobClusterRuntimeRefKey, ctr));
  }
  return Suspended(std::move(trainjobs), cache);
}

}  // namespace trainer::plugins::podgroup
