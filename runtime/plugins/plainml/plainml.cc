// PlainML: TrainJob numNodes -> trainer PodSet count; trainer env -> node container.
#include "runtime/plugins/plainml/plainml.h"

#include "runtime/framework/apply.h"
#include "runtime/framework/constants.h"

namespace trainer::plugins {

StatusOr<std::unique_ptr<framework::Plugin>> PlainML::New(const framework::PluginContext&) {
  return std::unique_ptr<framework::Plugin>(new PlainML());
}

Status PlainML::EnforceMLPolicy(framework::Info* info, api::TrainJob& job) {
  if (info == nullptr) {
    return OkStatus();
  }
  if (const auto& ml = info->runtime_policy.ml_policy; ml && (ml->torch || ml->mpi || ml->jax)) {
    return OkStatus();
  }
  if (!job.spec.trainer) {
    return OkStatus();
  }
  info->ApplyTrainerNumNodes(job);
  if (framework::Container* node = info->TrainerNode()) {
    framework::UpsertEnvVars(node->env, framework::NormalizeEnvVars(job.spec.trainer->env));
  }
  return OkStatus();
}

}  // namespace trainer::plugins
