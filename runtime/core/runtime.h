// Runtime: the TrainJob pipeline for one runtime kind (upstream pkg/runtime/interface.go).
// Implementations: TrainingRuntime and ClusterTrainingRuntime (training_runtime.h), found by
// api::RuntimeRegistryKey in Runtimes (registry.h).
//
// The controller calls NewObjects and TrainJobStatus on every reconcile; the webhook calls
// ValidateObjects on CREATE (old_job == nullptr) and UPDATE. Everything reads the cluster
// through the framework::Reader given at construction; nothing here writes.
#pragma once

#include <optional>
#include <vector>

#include "common/json/json.h"
#include "common/status/status.h"
#include "runtime/api/types.h"
#include "runtime/field/field.h"
#include "runtime/framework/info.h"
#include "runtime/framework/interface.h"

namespace trainer::core {

class Runtime {
 public:
  virtual ~Runtime() = default;

  // The objects to apply for `job`, in apply order: the runtime snapshot ConfigMap
  // `<tj>-runtime-snapshot` first when it does not exist yet (the runtime is then read live and
  // frozen into it), then every plugin's objects (the JobSet ...). All carry a controller
  // ownerReference to the TrainJob. `job` is not modified (plugins edit a copy).
  virtual StatusOr<std::vector<json::Value>> NewObjects(const api::TrainJob& job) = 0;

  // Info for `job` on a runtime spec: newRuntimeInfo (runtime_info.h) then the EnforceMLPolicy,
  // EnforcePodGroupPolicy and PodNetwork phases. Plugins may rewrite `job` in memory
  // (torchtune command).
  virtual StatusOr<framework::Info> RuntimeInfo(api::TrainJob& job,
                                                const api::TrainingRuntimeSpec& spec) = 0;

  // The status the TrainJob should have now, or nullopt to keep the current one.
  virtual StatusOr<std::optional<api::TrainJobStatus>> TrainJobStatus(const api::TrainJob& job) = 0;

  // Kinds the controller must watch for this runtime (upstream EventHandlerRegistrars; the
  // ClusterTrainingRuntime returns none because TrainingRuntime already covers them), and the
  // indexes their mappings list by.
  virtual std::vector<framework::Watch> Watches() const = 0;
  virtual std::vector<framework::Index> Indexes() const { return {}; }

  // Admission of a TrainJob against the live runtime: warnings and field errors. A denial's
  // text is result.ErrorMessage().
  virtual field::ValidationResult ValidateObjects(const api::TrainJob* old_job,
                                                  const api::TrainJob& new_job) = 0;
};

}  // namespace trainer::core
