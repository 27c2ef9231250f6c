// Small TrainJob helpers the pipeline needs (upstream pkg/util/trainjob and apimachinery's
// meta.SetStatusCondition): finished checks, condition upserts and the node-0 host name. Deep
// copies are api::Clone.
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

// The first pod of the trainer job, `<job>-node-0-0`, and its DNS name in the JobSet's headless
// Service, `<job>-node-0-0.<job>`: where Torch, JAX and XGBoost find their master / coordinator
// / tracker. As upstream, the subdomain is the TrainJob's name even when the runtime's
// network.subdomain says otherwise (only the MPI hostfile honours it).
std::string NodeZeroPodName(const api::TrainJob& job);
std::string NodeZeroHost(const api::TrainJob& job);

// meta.SetStatusCondition: adds the condition, or updates status (and lastTransitionTime),
// reason, message and observedGeneration of the existing one of the same type. A missing
// lastTransitionTime becomes now(). Returns whether anything changed.
bool SetStatusCondition(std::vector<api::Condition>& conditions, api::Condition condition,
                        const std::function<std::string()>& now);

}  // namespace trainer::framework
