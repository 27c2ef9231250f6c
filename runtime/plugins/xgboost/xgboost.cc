// XGBoost EnforceMLPolicy and Validate (upstream plugins/xgboost/xgboost.go).
#include "runtime/plugins/xgboost/xgboost.h"

#include <set>
#include <string>

#include "runtime/framework/apply.h"
#include "runtime/framework/constants.h"
#include "runtime/framework/trainjob.h"

namespace trainer::plugins {

StatusOr<std::unique_ptr<framework::Plugin>> XGBoost::New(const framework::PluginContext&) {
  return std::unique_ptr<framework::Plugin>(new XGBoost());
}

namespace {

bool HasXGBoost(const framework::Info* info) {
  return info != nullptr && info->runtime_policy.ml_policy &&
         info->runtime_policy.ml_policy->xgboost;
}

// GPUs per node from the TrainJob's resourcesPerNode when set, else the runtime's; 1 on CPU.
int64_t WorkersPerNode(const framework::Info& info, const api::TrainJob& job) {
  json::Value resources = framework::ExtractResourcePerNodeFromRuntime(info);
  if (job.spec.trainer && !job.spec.trainer->resources_per_node.IsNull()) {
    resources = job.spec.trainer->resources_per_node.Clone();
  }
  int64_t gpu = framework::GetNumGPUPerNode(resources);
  return gpu > 0 ? gpu : 1;
}

}  // namespace

Status XGBoost::EnforceMLPolicy(framework::Info* info, api::TrainJob& job) {
  if (!HasXGBoost(info)) {
    return OkStatus();
  }
  framework::PodSet* trainer_ps = info->ApplyTrainerNumNodes(job);
  if (trainer_ps == nullptr || !job.spec.trainer) {
    return OkStatus();
  }
  framework::Container* node = info->TrainerNode();
  if (node == nullptr) {
    return OkStatus();
  }
  int64_t num_nodes = trainer_ps->count.value_or(1);
  json::Value envs = json::Value::Array();
  envs.PushBack(framework::EnvVar(xgboost::kEnvTrackerURI, framework::NodeZeroHost(job)));
  envs.PushBack(framework::EnvVar(xgboost::kEnvTrackerPort,
                                  std::to_string(framework::kContainerTrainerPort)));
  envs.PushBack(
      framework::EnvVarFromField(xgboost::kEnvTaskID, framework::kJobCompletionIndexFieldPath));
  envs.PushBack(framework::EnvVar(xgboost::kEnvNumWorker,
                                  std::to_string(num_nodes * WorkersPerNode(*info, job))));
  framework::UpsertEnvVars(node->env, envs);
  framework::UpsertTrainerPort(node->ports);
  return OkStatus();
}

field::ValidationResult XGBoost::Validate(const framework::Info* info, const api::TrainJob*,
                                          const api::TrainJob& new_job) {
  field::ValidationResult result;
  if (!HasXGBoost(info) || !new_job.spec.trainer || !new_job.spec.trainer->env.IsArray()) {
    return result;
  }
  static const std::set<std::string> kReserved = {xgboost::kEnvTrackerURI, xgboost::kEnvTrackerPort,
                                                  xgboost::kEnvTaskID, xgboost::kEnvNumWorker};
  field::Path env_path = field::NewPath("spec", "trainer", "env");
  const json::Value& env = new_job.spec.trainer->env;
  for (size_t i = 0; i < env.size(); ++i) {
    std::string name = framework::StringField(env.at(i), "name");
    if (kReserved.count(name) > 0) {
      result.errors.push_back(field::Forbidden(env_path.Index(static_cast<int64_t>(i)),
                                               name + " is reserved for the XGBoost runtime"));
    }
  }
  return result;
}

}  // namespace trainer::plugins
