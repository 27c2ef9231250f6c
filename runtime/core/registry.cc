// The runtime registry.
#include "runtime/core/registry.h"

#include <algorithm>

#include "runtime/api/defaults.h"
#include "runtime/core/training_runtime.h"

namespace trainer::core {

StatusOr<std::unique_ptr<Runtimes>> Runtimes::New(
    const framework::Reader& reader, std::function<std::string()> now,
    const std::vector<plugins::PluginFactory>& factories, const framework::Config& config) {
  framework::PluginContext ctx{&reader, now, config};
  ASSIGN_OR_RETURN(std::vector<std::unique_ptr<framework::Plugin>> list,
                   plugins::NewPlugins(ctx, factories));
  auto pipeline = std::make_shared<Pipeline>();
  pipeline->reader = &reader;
  pipeline->now = std::move(now);
  ASSIGN_OR_RETURN(pipeline->framework, framework::Framework::New(std::move(list)));
  std::unique_ptr<Runtimes> r(new Runtimes());
  r->runtimes_.emplace(kTrainingRuntimeKey, std::make_unique<TrainingRuntime>(pipeline));
  r->runtimes_.emplace(kClusterTrainingRuntimeKey,
                       std::make_unique<ClusterTrainingRuntime>(pipeline));
  return r;
}

Runtime* Runtimes::Find(std::string_view key) const {
  auto it = runtimes_.find(key);
  return it == runtimes_.end() ? nullptr : it->second.get();
}

Runtime* Runtimes::ForTrainJob(const api::TrainJob& job) const {
  return Find(api::RuntimeRegistryKey(job.spec.runtime_ref));
}

std::vector<std::string> Runtimes::Keys() const {
  std::vector<std::string> keys;
  for (const auto& [k, v] : runtimes_) {
    keys.push_back(k);
  }
  return keys;
}

namespace {

template <typename T>
void AppendNew(std::vector<T>& out, std::vector<T> more) {
  for (T& x : more) {
    if (std::find(out.begin(), out.end(), x) == out.end()) {
      out.push_back(std::move(x));
    }
  }
}

}  // namespace

std::vector<framework::Watch> Runtimes::Watches() const {
  std::vector<framework::Watch> out;
  for (const auto& [k, rt] : runtimes_) {
    AppendNew(out, rt->Watches());
  }
  return out;
}

std::vector<framework::Index> Runtimes::Indexes() const {
  std::vector<framework::Index> out;
  for (const auto& [k, rt] : runtimes_) {
    AppendNew(out, rt->Indexes());
  }
  return out;
}

}  // namespace trainer::core
