// Runtimes: the runtime registry, keyed by api::RuntimeRegistryKey
// ("TrainingRuntime.trainer.kubeflow.org", "ClusterTrainingRuntime.trainer.kubeflow.org"),
// upstream pkg/runtime/core/{registry.go,core.go}. Both kinds share one plugin Framework.
//
//   ASSIGN_OR_RETURN(auto runtimes, core::Runtimes::New(reader, clock));
//   core::Runtime* rt = runtimes->ForTrainJob(job);
//   if (rt == nullptr) deny("unsupported runtime: " +
//   api::RuntimeRegistryKey(job.spec.runtime_ref));
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/runtime.h"
#include "runtime/framework/reader.h"
#include "runtime/plugins/registry.h"

namespace trainer::core {

class Runtimes {
 public:
  // `reader` must outlive the registry. `now` returns RFC 3339 time (for status conditions
  // without a lastTransitionTime); `plugins` defaults to plugins::Registry(), of which those
  // `config` enables run (feature gates).
  static StatusOr<std::unique_ptr<Runtimes>> New(
      const framework::Reader& reader, std::function<std::string()> now,
      const std::vector<plugins::PluginFactory>& plugins = plugins::Registry(),
      const framework::Config& config = {});

  // nullptr for an unknown key.
  Runtime* Find(std::string_view key) const;
  // The runtime of job.spec.runtimeRef; nullptr when unsupported.
  Runtime* ForTrainJob(const api::TrainJob& job) const;
  std::vector<std::string> Keys() const;
  // Every watch of every runtime, and every index they list by, without duplicates.
  std::vector<framework::Watch> Watches() const;
  std::vector<framework::Index> Indexes() const;

 private:
  std::map<std::string, std::unique_ptr<Runtime>, std::less<>> runtimes_;
};

inline constexpr char kTrainingRuntimeKey[] = "TrainingRuntime.trainer.kubeflow.org";
inline constexpr char kClusterTrainingRuntimeKey[] = "ClusterTrainingRuntime.trainer.kubeflow.org";

}  // namespace trainer::core
