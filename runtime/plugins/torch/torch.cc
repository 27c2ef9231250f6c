// Torch EnforceMLPolicy and Validate (upstream plugins/torch/torch.go).
#include "runtime/plugins/torch/torch.h"

#include <algorithm>
#include <set>

#include "common/quantity/quantity.h"
#include "runtime/framework/apply.h"
#include "runtime/framework/constants.h"
#include "runtime/framework/go_repr.h"
#include "runtime/framework/trainjob.h"
#include "runtime/framework/validation.h"

namespace trainer::plugins {

namespace torch {

namespace {
// The quantity rounded up, or 0 when absent, zero or unparsable.
int64_t CeilOf(const json::Value& resources, std::string_view list, std::string_view name) {
  const json::Value* l = resources.Find(list);
  const json::Value* q = l != nullptr ? l->Find(name) : nullptr;
  if (q == nullptr || q->IsNull()) {
    return 0;
  }
  StatusOr<quantity::Quantity> parsed = quantity::Quantity::FromJson(*q);
  return parsed.ok() ? parsed->Value() : 0;
}
}  // namespace

int64_t GetNumCPUPerNode(const json::Value& resources) {
  if (!resources.IsObject()) {
    return 0;
  }
  int64_t request = CeilOf(resources, "requests", "cpu");
  if (request == 0) {
    return CeilOf(resources, "limits", "cpu");
  }
  return request;
}

bool IsTorchTuneCommand(const std::optional<std::vector<std::string>>& command) {
  return command && *command == std::vector<std::string>{"tune", "run"};
}

}  // namespace torch

StatusOr<std::unique_ptr<framework::Plugin>> Torch::New(const framework::PluginContext&) {
  return std::unique_ptr<framework::Plugin>(new Torch());
}

namespace {

// The resources numProcPerNode derives from: the TrainJob's resourcesPerNode alone when set,
// else the runtime trainer container's.
json::Value ResourcesForDerivation(const framework::Info& info, const api::TrainJob& job) {
  if (job.spec.trainer && !job.spec.trainer->resources_per_node.IsNull()) {
    return job.spec.trainer->resources_per_node.Clone();
  }
  return framework::ExtractResourcePerNodeFromRuntime(info);
}

}  // namespace

Status Torch::EnforceMLPolicy(framework::Info* info, api::TrainJob& job) {
  if (info == nullptr || !info->runtime_policy.ml_policy ||
      !info->runtime_policy.ml_policy->torch) {
    return OkStatus();
  }
  framework::PodSet* trainer_ps = info->ApplyTrainerNumNodes(job);

  torch::ProcPerNode proc;
  if (job.spec.trainer && job.spec.trainer->num_proc_per_node) {
    proc = {true, *job.spec.trainer->num_proc_per_node};
  }
  json::Value resources = ResourcesForDerivation(*info, job);
  int64_t gpu = framework::GetNumGPUPerNode(resources);
  if (!proc.is_int && gpu == 0) {
    proc = {true, std::max<int64_t>(1, torch::GetNumCPUPerNode(resources))};
  }

  framework::Container* trainer_container = nullptr;
  if (job.spec.trainer) {
    trainer_container = info->TrainerNode();
    if (trainer_container != nullptr) {
      framework::UpsertEnvVars(trainer_container->env,
                               framework::NormalizeEnvVars(job.spec.trainer->env));
    }
  }

  int32_t num_nodes = trainer_ps != nullptr ? trainer_ps->count.value_or(1) : 1;
  json::Value pet_envs = json::Value::Array();
  pet_envs.PushBack(framework::EnvVar(torch::kEnvNumNodes, std::to_string(num_nodes)));
  pet_envs.PushBack(framework::EnvVar(torch::kEnvNumProcPerNode, proc.ToString()));
  pet_envs.PushBack(
      framework::EnvVarFromField(torch::kEnvNodeRank, framework::kJobCompletionIndexFieldPath));
  json::Value master_envs = json::Value::Array();
  master_envs.PushBack(framework::EnvVar(torch::kEnvMasterAddr, framework::NodeZeroHost(job)));
  master_envs.PushBack(
      framework::EnvVar(torch::kEnvMasterPort, std::to_string(framework::kContainerTrainerPort)));

  if (trainer_container != nullptr) {
    framework::UpsertEnvVars(trainer_container->env, pet_envs);
    if (!torch::IsTorchTuneCommand(job.spec.trainer->command)) {
      framework::UpsertEnvVars(trainer_container->env, master_envs);
    } else {
      // torchtune takes the rendezvous endpoint, recipe and config on its command line.
      std::vector<std::string>& command = *job.spec.trainer->command;
      if (num_nodes > 1 || (proc.is_int && proc.value > 1) || (!proc.is_int && gpu > 1)) {
        command.push_back("--rdzv_endpoint=" + framework::NodeZeroHost(job) + ":" +
                          std::to_string(framework::kContainerTrainerPort));
      }
      torch::RecipeAndConfig rc = torch::GetRecipeAndConfig(num_nodes, proc, gpu, job);
      command.push_back(rc.recipe);
      command.push_back("--config");
      command.push_back(rc.config);
      for (std::string& o : torch::ExtractOverridesFromRuntime(*info)) {
        command.push_back(std::move(o));
      }
    }
    framework::UpsertTrainerPort(trainer_container->ports);
  }

  // envInjection targets (init containers, sidecars) always get the master address too.
  for (const api::EnvInjectionTarget& target :
       info->runtime_policy.ml_policy->torch->env_injection_targets) {
    for (const std::string& name : target.container_names) {
      framework::Container* c = info->FindContainerByPodSetName(target.job_name, name);
      if (c == nullptr) {
        return InvalidArgumentError("envInjection target podSet \"" + target.job_name +
                                    "\" container \"" + name + "\" not found in runtime template");
      }
      framework::UpsertEnvVars(c->env, pet_envs);
      framework::UpsertEnvVars(c->env, master_envs);
    }
  }
  return OkStatus();
}

field::ValidationResult Torch::Validate(const framework::Info* info, const api::TrainJob*,
                                        const api::TrainJob& new_job) {
  field::ValidationResult result;
  if (info == nullptr || !info->runtime_policy.ml_policy ||
      !info->runtime_policy.ml_policy->torch) {
    return result;
  }
  field::Path spec = field::NewPath("spec");
  for (const api::EnvInjectionTarget& target :
       info->runtime_policy.ml_policy->torch->env_injection_targets) {
    for (const std::string& name : target.container_names) {
      if (info->FindContainerByPodSetName(target.job_name, name) != nullptr) {
        continue;
      }
      result.errors.push_back(field::Invalid(
          spec.Child("runtimeRef"), framework::GoEnvInjectionTarget(target),
          "envInjection target podSet " + field::GoQuote(target.job_name) + " container " +
              field::GoQuote(name) + " not found in runtime template"));
    }
  }
  if (!new_job.spec.trainer) {
    return result;
  }
  static const std::set<std::string> kReserved = {torch::kEnvNumNodes, torch::kEnvNumProcPerNode,
                                                  torch::kEnvNodeRank, torch::kEnvMasterAddr,
                                                  torch::kEnvMasterPort};
  if (std::optional<field::Error> e =
          framework::ReservedEnvError(*new_job.spec.trainer, kReserved)) {
    result.errors.push_back(std::move(*e));
  }
  if (torch::IsTorchTuneCommand(new_job.spec.trainer->command)) {
    for (field::Error& e : torch::ValidateTorchTune(info, new_job)) {
      result.errors.push_back(std::move(e));
    }
  }
  return result;
}

}  // namespace trainer::plugins
