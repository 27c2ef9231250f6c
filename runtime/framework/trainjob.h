// Small TrainJob helpers the pipeline needs (upstream pkg/util/trainjob and apimachinery's
// meta.SetStatusCondition): finished checks and condition upserts. Deep copies are api::Clone.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runtime/api/types.h"

namespace trainer::framework {

// A condition `type` with status "True" exists.
bool IsStatusConditionTrue(const std::vector<api::Condition>& conditions, std::string_view type);
// Complete=True or Failed=True.
bool IsTrainJobFinished(const api::TrainJob& job);

// meta.SetStatusCondition: adds the condition, or updates status (and lastTransitionTime),
// reason, message and observedGeneration of the existing one of the same type. A missing
// lastTransitionTime becomes now(). Returns whether anything changed.
bool SetStatusCondition(std::vector<api::Condition>& conditions, api::Condition condition,
                        const std::function<std::string()>& now);

}  // namespace trainer::framework
