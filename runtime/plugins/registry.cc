// The ordered plugin list. Order is the order of every phase:
//   CoScheduling, Volcano            pod-group policy
//   MPI, PlainML, Torch, JAX,        ML policies: PlainML before XGBoost so the trainer env
//   XGBoost, Flux                    precedes DMLC_* as it precedes PET_* for Torch
//   TrainJobStatus                   feature gate TrainJobStatus: its env follows the ML env
//   JobSet                           last: it builds the JobSet from everything above
// This list is the only one: the build links every plugin folder on its own. Adding a plugin is
// its folder, its include and one line here, plus what docs/design/adding-a-plugin.md lists for
// the extension points it implements.
#include "runtime/plugins/registry.h"

#include "runtime/plugins/coscheduling/coscheduling.h"
#include "runtime/plugins/flux/flux.h"
#include "runtime/plugins/jax/jax.h"
#include "runtime/plugins/jobset/jobset.h"
#include "runtime/plugins/mpi/mpi.h"
#include "runtime/plugins/plainml/plainml.h"
#include "runtime/plugins/torch/torch.h"
#include "runtime/plugins/trainjobstatus/trainjobstatus.h"
#include "runtime/plugins/volcano/volcano.h"
#include "runtime/plugins/xgboost/xgboost.h"

namespace trainer::plugins {

const std::vector<PluginFactory>& Registry() {
  static const std::vector<PluginFactory> kRegistry = {
      {CoScheduling::kName, &CoScheduling::New},
      {Volcano::kName, &Volcano::New},
      {MPI::kName, &MPI::New},
      {PlainML::kName, &PlainML::New},
      {Torch::kName, &Torch::New},
      {JAX::kName, &JAX::New},
      {XGBoost::kName, &XGBoost::New},
      {Flux::kName, &Flux::New},
      {TrainJobStatus::kName, &TrainJobStatus::New, &TrainJobStatus::Enabled},
      {JobSet::kName, &JobSet::New},
  };
  return kRegistry;
}

StatusOr<std::vector<std::unique_ptr<framework::Plugin>>> NewPlugins(
    const framework::PluginContext& ctx, const std::vector<PluginFactory>& factories) {
  std::vector<std::unique_ptr<framework::Plugin>> plugins;
  for (const PluginFactory& f : factories) {
    if (f.enabled && !f.enabled(ctx.config)) {
      continue;
    }
    StatusOr<std::unique_ptr<framework::Plugin>> p = f.make(ctx);
    if (!p.ok()) {
      return p.status().WithContext("initializing plugin " + std::string(f.name));
    }
    plugins.push_back(std::move(p).value());
  }
  return plugins;
}

}  // namespace trainer::plugins
