// Deep copies and condition helpers.
#include "runtime/framework/trainjob.h"

namespace trainer::framework {

namespace {
api::DatasetOrModelInitializer CloneInit(const api::DatasetOrModelInitializer& in) {
  api::DatasetOrModelInitializer out;
  out.storage_uri = in.storage_uri;
  out.env = in.env.Clone();
  out.secret_ref = in.secret_ref;
  return out;
}
}  // namespace

api::TrainJobStatus CloneTrainJobStatus(const api::TrainJobStatus& status) {
  api::TrainJobStatus out;
  out.conditions = status.conditions;
  out.jobs_status = status.jobs_status;
  out.trainer_status = status.trainer_status.Clone();
  return out;
}

api::TrainJob CloneTrainJob(const api::TrainJob& job) {
  api::TrainJob out;
  out.metadata = job.metadata;
  const api::TrainJobSpec& s = job.spec;
  out.spec.runtime_ref = s.runtime_ref;
  if (s.initializer) {
    api::Initializer init;
    if (s.initializer->dataset) {
      init.dataset = CloneInit(*s.initializer->dataset);
    }
    if (s.initializer->model) {
      init.model = CloneInit(*s.initializer->model);
    }
    out.spec.initializer = std::move(init);
  }
  if (s.trainer) {
    api::Trainer t;
    t.image = s.trainer->image;
    t.command = s.trainer->command;
    t.args = s.trainer->args;
    t.env = s.trainer->env.Clone();
    t.num_nodes = s.trainer->num_nodes;
    t.resources_per_node = s.trainer->resources_per_node.Clone();
    t.num_proc_per_node = s.trainer->num_proc_per_node;
    out.spec.trainer = std::move(t);
  }
  for (const api::RuntimePatch& p : s.runtime_patches) {
    api::RuntimePatch c;
    c.manager = p.manager;
    c.time = p.time;
    c.training_runtime_spec = p.training_runtime_spec.Clone();
    out.spec.runtime_patches.push_back(std::move(c));
  }
  out.spec.suspend = s.suspend;
  out.spec.active_deadline_seconds = s.active_deadline_seconds;
  out.spec.managed_by = s.managed_by;
  out.status = CloneTrainJobStatus(job.status);
  out.raw = job.raw.Clone();
  return out;
}

api::TrainingRuntime CloneTrainingRuntime(const api::TrainingRuntime& runtime) {
  api::TrainingRuntime out;
  out.kind = runtime.kind;
  out.metadata = runtime.metadata;
  out.spec.ml_policy = runtime.spec.ml_policy;
  out.spec.pod_group_policy = runtime.spec.pod_group_policy;
  out.spec.template_ = runtime.spec.template_.Clone();
  out.raw = runtime.raw.Clone();
  return out;
}

bool IsStatusConditionTrue(const std::vector<api::Condition>& conditions, std::string_view type) {
  for (const api::Condition& c : conditions) {
    if (c.type == type) {
      return c.status == "True";
    }
  }
  return false;
}

bool IsTrainJobFinished(const api::TrainJob& job) {
  return IsStatusConditionTrue(job.status.conditions, "Complete") ||
         IsStatusConditionTrue(job.status.conditions, "Failed");
}

bool SetStatusCondition(std::vector<api::Condition>& conditions, api::Condition condition,
                        const std::function<std::string()>& now) {
  api::Condition* existing = nullptr;
  for (api::Condition& c : conditions) {
    if (c.type == condition.type) {
      existing = &c;
      break;
    }
  }
  if (existing == nullptr) {
    if (condition.last_transition_time.empty() && now) {
      condition.last_transition_time = now();
    }
    conditions.push_back(std::move(condition));
    return true;
  }
  bool changed = false;
  if (existing->status != condition.status) {
    existing->status = condition.status;
    existing->last_transition_time = !condition.last_transition_time.empty()
                                         ? condition.last_transition_time
                                         : (now ? now() : "");
    changed = true;
  }
  if (existing->reason != condition.reason) {
    existing->reason = condition.reason;
    changed = true;
  }
  if (existing->message != condition.message) {
    existing->message = condition.message;
    changed = true;
  }
  if (existing->observed_generation != condition.observed_generation) {
    existing->observed_generation = condition.observed_generation;
    changed = true;
  }
  return changed;
}

}  // namespace trainer::framework
