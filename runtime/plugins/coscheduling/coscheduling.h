// CoScheduling plugin: gang scheduling with the scheduler-plugins coscheduling plugin. Labels
// every pod template `scheduling.x-k8s.io/pod-group: <tj>` and builds the PodGroup
// (scheduling.x-k8s.io/v1alpha1) sized over all PodSets. Mirrors upstream
// plugins/coscheduling/coscheduling.go (v2.3.0).
#pragma once

#include <memory>
#include <string_view>

#include "runtime/framework/interface.h"

namespace trainer::plugins {

class CoScheduling final : public framework::Plugin,
                           public framework::EnforcePodGroupPolicyPlugin,
                           public framework::ComponentBuilderPlugin,
                           public framework::WatchExtensionPlugin {
 public:
  static constexpr std::string_view kName = "CoScheduling";
  static StatusOr<std::unique_ptr<framework::Plugin>> New(const framework::PluginContext& ctx);
  explicit CoScheduling(const framework::Reader* reader) : reader_(reader) {}

  std::string_view Name() const override { return kName; }
  // framework::EnforcePodGroupPolicyPlugin
  Status EnforcePodGroupPolicy(framework::Info* info, const api::TrainJob& job) override;
  // framework::ComponentBuilderPlugin: the PodGroup, or nothing when it exists and the TrainJob
  // is not suspended (PodGroups are not resized while a TrainJob runs).
  Status SyncParallelCount(framework::Info*) override { return OkStatus(); }
  StatusOr<std::vector<json::Value>> Build(framework::Info* info,
                                           const api::TrainJob& job) override;
  // framework::WatchExtensionPlugin, while the PodGroup CRD is installed: PodGroups controlled
  // by a TrainJob; LimitRange and RuntimeClass events re-enqueue suspended TrainJobs
  // (podgroup::Watches).
  std::vector<framework::Watch> Watches() const override;
  std::vector<framework::Index> Indexes() const override;

 private:
  const framework::Reader* reader_;
};

namespace coscheduling {
inline constexpr char kPodGroupLabel[] = "scheduling.x-k8s.io/pod-group";
inline constexpr int32_t kDefaultScheduleTimeoutSeconds = 60;  // CRD default
}  // namespace coscheduling

}  // namespace trainer::plugins
