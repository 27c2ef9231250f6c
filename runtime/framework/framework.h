// Framework: owns the plugins and runs the pipeline phases over them (upstream
// pkg/runtime/framework/core/framework.go). Plugins are sorted into per-phase lists once, in the
// order given (runtime/plugins/registry.cc), so every phase runs in a deterministic order.
//
//   ASSIGN_OR_RETURN(auto fw, Framework::New(std::move(plugins)));
//   RETURN_IF_ERROR(fw->RunEnforceMLPolicyPlugins(&info, job));
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "runtime/framework/interface.h"

namespace trainer::framework {

class Framework {
 public:
  // Fails with "too many TrainJobStatus plugins are registered" if more than one plugin
  // implements TrainJobStatusPlugin.
  static StatusOr<std::unique_ptr<Framework>> New(std::vector<std::unique_ptr<Plugin>> plugins);

  // The first error aborts the phase.
  Status RunEnforceMLPolicyPlugins(Info* info, api::TrainJob& job);
  Status RunEnforcePodGroupPolicyPlugins(Info* info, const api::TrainJob& job);
  Status RunPodNetworkPlugins(Info* info, const api::TrainJob& job);
  // SyncParallelCount on every builder, then Build on each; objects concatenated in order.
  StatusOr<std::vector<json::Value>> RunComponentBuilderPlugins(Info* info,
                                                                const api::TrainJob& job);
  // Warnings and errors of every validator, aggregated in plugin order.
  field::ValidationResult RunCustomValidationPlugins(const Info* info, const api::TrainJob* old_job,
                                                     const api::TrainJob& new_job);
  // nullopt when no plugin reports status or the plugin keeps the current status.
  StatusOr<std::optional<api::TrainJobStatus>> RunTrainJobStatusPlugin(const api::TrainJob& job);
  // Every kind any plugin watches, in plugin order.
  std::vector<Watch> Watches() const;
  // Every index those watches list by, in plugin order.
  std::vector<Index> Indexes() const;

  const std::vector<std::unique_ptr<Plugin>>& plugins() const { return plugins_; }

 private:
  Framework() = default;

  std::vector<std::unique_ptr<Plugin>> plugins_;
  std::vector<EnforceMLPolicyPlugin*> enforce_ml_;
  std::vector<EnforcePodGroupPolicyPlugin*> enforce_pod_group_;
  std::vector<CustomValidationPlugin*> custom_validation_;
  std::vector<WatchExtensionPlugin*> watch_extension_;
  std::vector<PodNetworkPlugin*> pod_network_;
  std::vector<ComponentBuilderPlugin*> component_builder_;
  TrainJobStatusPlugin* trainjob_status_ = nullptr;
};

}  // namespace trainer::framework
