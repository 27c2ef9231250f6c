// CoScheduling EnforcePodGroupPolicy, Build and watches (upstream
// plugins/coscheduling/coscheduling.go).
#include "runtime/plugins/coscheduling/coscheduling.h"

#include "runtime/api/kinds.h"
#include "runtime/plugins/podgroup/podgroup.h"

namespace trainer::plugins {

StatusOr<std::unique_ptr<framework::Plugin>> CoScheduling::New(
    const framework::PluginContext& ctx) {
  if (ctx.reader == nullptr) {
    return InvalidArgumentError("coscheduling plugin: a reader is required");
  }
  return std::unique_ptr<framework::Plugin>(new CoScheduling(ctx.reader));
}

namespace {
bool HasCoScheduling(const framework::Info* info) {
  return info != nullptr && info->runtime_policy.pod_group_policy &&
         info->runtime_policy.pod_group_policy->coscheduling;
}
}  // namespace

Status CoScheduling::EnforcePodGroupPolicy(framework::Info* info, const api::TrainJob& job) {
  if (HasCoScheduling(info)) {
    info->scheduler.pod_labels[coscheduling::kPodGroupLabel] = job.metadata.name;
  }
  return OkStatus();
}

StatusOr<std::vector<json::Value>> CoScheduling::Build(framework::Info* info,
                                                       const api::TrainJob& job) {
  std::vector<json::Value> out;
  if (!HasCoScheduling(info)) {
    return out;
  }
  ASSIGN_OR_RETURN(bool build,
                   podgroup::ShouldBuild(*reader_, api::kSchedulerPluginsPodGroupGVK, job));
  if (!build) {
    return out;
  }
  ASSIGN_OR_RETURN(podgroup::Size size, podgroup::SizeOf(*info));
  json::Value pg = podgroup::NewObject(api::kSchedulerPluginsPodGroupGVK, job);
  json::Value& spec = pg["spec"];
  spec.Set("minMember", json::Value(size.min_member));
  spec.Set("minResources", std::move(size.min_resources));
  spec.Set("scheduleTimeoutSeconds",
           json::Value(info->runtime_policy.pod_group_policy->coscheduling->schedule_timeout_seconds
                           .value_or(coscheduling::kDefaultScheduleTimeoutSeconds)));
  out.push_back(std::move(pg));
  return out;
}

std::vector<framework::Watch> CoScheduling::Watches() const {
  return podgroup::Watches(api::kSchedulerPluginsPodGroupGVK);
}

std::vector<framework::Index> CoScheduling::Indexes() const { return podgroup::Indexes(); }

}  // namespace trainer::plugins
