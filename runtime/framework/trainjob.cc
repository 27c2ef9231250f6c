// Condition helpers and the trainer's node-0 names.
#include "runtime/framework/trainjob.h"

#include "runtime/api/conditions.h"
#include "runtime/framework/constants.h"

namespace trainer::framework {

bool IsStatusConditionTrue(const std::vector<api::Condition>& conditions, std::string_view type) {
  for (const api::Condition& c : conditions) {
    if (c.type == type) {
      return c.status == "True";
    }
  }
  return false;
}

bool IsTrainJobFinished(const api::TrainJob& job) {
  return IsStatusConditionTrue(job.status.conditions, api::kConditionComplete) ||
         IsStatusConditionTrue(job.status.conditions, api::kConditionFailed);
}

std::string NodeZeroPodName(const api::TrainJob& job) {
  return job.metadata.name + "-" + kNode + "-0-0";
}

std::string NodeZeroHost(const api::TrainJob& job) {
  return NodeZeroPodName(job) + "." + job.metadata.name;
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
