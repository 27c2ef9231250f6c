// Volcano plugin: gang scheduling with Volcano. Annotates every pod template
// `scheduling.k8s.io/group-name: <tj>`, builds the PodGroup (scheduling.volcano.sh/v1beta1)
// with the queue from the JobSet-level annotation `scheduling.volcano.sh/queue-name` and the
// pods' priorityClassName, and checks both at admission. Mirrors upstream
// plugins/volcano/volcano.go (v2.3.0).
#pragma once

#include <memory>
#include <string_view>

#include "runtime/framework/interface.h"

namespace trainer::plugins {

class Volcano final : public framework::Plugin,
                      public framework::EnforcePodGroupPolicyPlugin,
                      public framework::ComponentBuilderPlugin,
                      public framework::CustomValidationPlugin,
                      public framework::WatchExtensionPlugin {
 public:
  static constexpr std::string_view kName = "Volcano";
  static StatusOr<std::unique_ptr<framework::Plugin>> New(const framework::PluginContext& ctx);
  explicit Volcano(const framework::Reader* reader) : reader_(reader) {}

  std::string_view Name() const override { return kName; }
  // framework::EnforcePodGroupPolicyPlugin
  Status EnforcePodGroupPolicy(framework::Info* info, const api::TrainJob& job) override;
  // framework::ComponentBuilderPlugin: the PodGroup, or nothing when it exists and the TrainJob
  // is not suspended.
  Status SyncParallelCount(framework::Info*) override { return OkStatus(); }
  StatusOr<std::vector<json::Value>> Build(framework::Info* info,
                                           const api::TrainJob& job) override;
  // framework::CustomValidationPlugin: a non-empty queue annotation, and existing
  // PriorityClasses.
  field::ValidationResult Validate(const framework::Info* info, const api::TrainJob* old_job,
                                   const api::TrainJob& new_job) override;
  // framework::WatchExtensionPlugin: as CoScheduling's, with the Volcano PodGroup kind
  // (podgroup::Watches).
  std::vector<framework::Watch> Watches() const override;
  std::vector<framework::Index> Indexes() const override;

 private:
  const framework::Reader* reader_;
};

namespace volcano {
inline constexpr char kGroupNameAnnotation[] = "scheduling.k8s.io/group-name";
inline constexpr char kQueueNameAnnotation[] = "scheduling.volcano.sh/queue-name";
}  // namespace volcano

}  // namespace trainer::plugins
