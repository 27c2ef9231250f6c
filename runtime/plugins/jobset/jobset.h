// JobSet plugin: builds the JobSet of a TrainJob, computes pod endpoints, syncs parallelism,
// validates initializer jobs and runtimePatches, and maps JobSet status to TrainJob status.
// Mirrors upstream plugins/jobset/jobset.go (v2.3.0).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/framework/interface.h"

namespace trainer::plugins {

class JobSet final : public framework::Plugin,
                     public framework::PodNetworkPlugin,
                     public framework::ComponentBuilderPlugin,
                     public framework::CustomValidationPlugin,
                     public framework::WatchExtensionPlugin,
                     public framework::TrainJobStatusPlugin {
 public:
  static constexpr std::string_view kName = "JobSet";
  static StatusOr<std::unique_ptr<framework::Plugin>> New(const framework::PluginContext& ctx);
  explicit JobSet(const framework::PluginContext& ctx) : reader_(ctx.reader), now_(ctx.now) {}

  std::string_view Name() const override { return kName; }
  // framework::PodNetworkPlugin: endpoints "<tj>-<rJob>-<replica>-<pod>.<subdomain>" where the
  // subdomain is spec.network.subdomain or the TrainJob name. PodSets match replicatedJobs by
  // index.
  trainer::Status IdentifyPodNetwork(framework::Info* info, const api::TrainJob& job) override;
  // framework::ComponentBuilderPlugin
  trainer::Status SyncParallelCount(framework::Info* info) override;
  // One JobSet, or nothing when the JobSet exists and neither it nor the TrainJob is suspended
  // (running JobSets are never re-applied).
  StatusOr<std::vector<json::Value>> Build(framework::Info* info,
                                           const api::TrainJob& job) override;
  // framework::CustomValidationPlugin: initializer jobs, containers and volume mounts the
  // TrainJob's initializer needs; runtimePatches only while suspended and no job is active;
  // runtimePatches managers, job and container names, and no env on node/initializer containers.
  field::ValidationResult Validate(const framework::Info* info, const api::TrainJob* old_job,
                                   const api::TrainJob& new_job) override;
  // framework::WatchExtensionPlugin: JobSets controlled by a TrainJob.
  std::vector<framework::Watch> Watches() const override;
  // framework::TrainJobStatusPlugin: Complete/Failed conditions and jobsStatus from the JobSet.
  StatusOr<std::optional<api::TrainJobStatus>> Status(const api::TrainJob& job) override;

 private:
  field::ErrorList CheckRuntimePatchesImmutability(const api::TrainJob* old_job,
                                                   const api::TrainJob& new_job) const;

  const framework::Reader* reader_;
  std::function<std::string()> now_;
};

}  // namespace trainer::plugins
