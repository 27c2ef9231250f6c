// JAX EnforceMLPolicy (upstream plugins/jax/jax.go).
#include "runtime/plugins/jax/jax.h"

#include "runtime/framework/apply.h"
#include "runtime/framework/constants.h"
#include "runtime/framework/trainjob.h"

namespace trainer::plugins {

StatusOr<std::unique_ptr<framework::Plugin>> JAX::New(const framework::PluginContext&) {
  return std::unique_ptr<framework::Plugin>(new JAX());
}

Status JAX::EnforceMLPolicy(framework::Info* info, api::TrainJob& job) {
  if (info == nullptr || !info->runtime_policy.ml_policy || !info->runtime_policy.ml_policy->jax) {
    return OkStatus();
  }
  framework::PodSet* trainer_ps = info->ApplyTrainerNumNodes(job);
  // Like torch, the distributed env needs a trainer section: without spec.trainer, upstream
  // injects no JAX_* env and no port.
  if (!job.spec.trainer) {
    return OkStatus();
  }
  framework::Container* node = info->TrainerNode();
  if (node == nullptr) {
    return OkStatus();
  }
  int32_t num_nodes = trainer_ps != nullptr ? trainer_ps->count.value_or(1) : 1;
  json::Value envs = json::Value::Array();
  envs.PushBack(framework::EnvVar(jax::kEnvNumProcesses, std::to_string(num_nodes)));
  envs.PushBack(
      framework::EnvVarFromField(jax::kEnvProcessID, framework::kJobCompletionIndexFieldPath));
  envs.PushBack(framework::EnvVar(
      jax::kEnvCoordinatorAddress,
      framework::NodeZeroHost(job) + ":" + std::to_string(framework::kContainerTrainerPort)));
  framework::UpsertEnvVars(node->env, envs);
  framework::UpsertTrainerPort(node->ports);
  return OkStatus();
}

field::ValidationResult JAX::Validate(const framework::Info*, const api::TrainJob*,
                                      const api::TrainJob&) {
  return {};
}

}  // namespace trainer::plugins
