// TrainingRuntime and ClusterTrainingRuntime: the Runtime implementations (upstream
// pkg/runtime/core/{trainingruntime.go,clustertrainingruntime.go}). Both share one Pipeline —
// the plugin Framework, the Reader and the clock — as upstream's ClusterTrainingRuntime embeds
// the TrainingRuntime.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "runtime/core/runtime.h"
#include "runtime/core/runtime_info.h"
#include "runtime/framework/framework.h"

namespace trainer::core {

// What both runtime kinds share.
struct Pipeline {
  const framework::Reader* reader = nullptr;
  std::unique_ptr<framework::Framework> framework;
  std::function<std::string()> now;
  // Admission's Info per runtime version (ValidateObjects).
  RuntimeInfoCache infos;
};

class TrainingRuntime : public Runtime {
 public:
  explicit TrainingRuntime(std::shared_ptr<Pipeline> pipeline) : pipeline_(std::move(pipeline)) {}

  StatusOr<std::vector<json::Value>> NewObjects(const api::TrainJob& job) override;
  StatusOr<framework::Info> RuntimeInfo(api::TrainJob& job,
                                        const api::TrainingRuntimeSpec& spec) override;
  StatusOr<std::optional<api::TrainJobStatus>> TrainJobStatus(const api::TrainJob& job) override;
  std::vector<framework::Watch> Watches() const override;
  std::vector<framework::Index> Indexes() const override;
  field::ValidationResult ValidateObjects(const api::TrainJob* old_job,
                                          const api::TrainJob& new_job) override;

 protected:
  // The kind-specific parts.
  virtual kube::GroupVersionKind Kind() const;
  virtual std::string Namespace(const api::TrainJob& job) const { return job.metadata.namespace_; }
  // Wrap of a failed live GET in NewObjects.
  virtual std::string NotFoundContext() const {
    return "TrainingRuntime specified in TrainJob is not found";
  }
  virtual std::string SnapshotContext() const { return "unable to get runtime snapshot"; }
  // The error of a failed live GET in ValidateObjects.
  virtual field::Error RuntimeMissing(const api::TrainJob& job, const Status& err) const;

  // Builds the objects from an already loaded runtime.
  StatusOr<std::vector<json::Value>> BuildObjects(api::TrainJob& job,
                                                  const api::TrainingRuntime& runtime);
  // Reads the live runtime of `job` and decodes it; `raw` receives the document.
  StatusOr<api::TrainingRuntime> GetLive(const api::TrainJob& job, json::Value* raw) const;
  // The decoded runtime of `job` as the reader shares it (admission: no copy, no decode when
  // the reader caches decoded runtimes).
  StatusOr<std::shared_ptr<const api::TrainingRuntime>> GetShared(const api::TrainJob& job) const;
  field::ValidationResult RunValidation(const api::TrainJob* old_job, const api::TrainJob& new_job,
                                        const std::shared_ptr<const api::TrainingRuntime>& runtime);

  std::shared_ptr<Pipeline> pipeline_;
};

class ClusterTrainingRuntime final : public TrainingRuntime {
 public:
  using TrainingRuntime::TrainingRuntime;

  std::vector<framework::Watch> Watches() const override { return {}; }
  field::ValidationResult ValidateObjects(const api::TrainJob* old_job,
                                          const api::TrainJob& new_job) override;

 protected:
  kube::GroupVersionKind Kind() const override;
  std::string Namespace(const api::TrainJob&) const override { return ""; }
  std::string NotFoundContext() const override {
    return "not found ClusterTrainingRuntime specified in TrainJob";
  }
  std::string SnapshotContext() const override { return "getting runtime snapshot"; }
  field::Error RuntimeMissing(const api::TrainJob& job, const Status& err) const override;
};

}  // namespace trainer::core
