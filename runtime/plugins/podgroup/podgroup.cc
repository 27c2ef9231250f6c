// PodGroup sizing and the build gate shared by CoScheduling and Volcano.
#include "runtime/plugins/podgroup/podgroup.h"

#include <map>
#include <string>

#include "common/quantity/quantity.h"
#include "runtime/framework/apply.h"

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
  json::Value pg = json::Value::Object();
  pg.Set("apiVersion", json::Value(gvk.ApiVersion()));
  pg.Set("kind", json::Value(gvk.kind));
  json::Value& meta = pg["metadata"];
  meta.Set("name", json::Value(job.metadata.name));
  meta.Set("namespace", json::Value(job.metadata.namespace_));
  json::Value owners = json::Value::Array();
  owners.PushBack(framework::TrainJobOwnerReference(job));
  meta.Set("ownerReferences", std::move(owners));
  return pg;
}

}  // namespace trainer::plugins::podgroup
