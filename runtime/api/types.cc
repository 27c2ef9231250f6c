// Deep copies of the API structs. They are spelled out member by member because json::Value is
// move-only; tests/unit/runtime/api/types_test.cc checks that a clone encodes like its source,
// which catches a member forgotten here.
#include "runtime/api/types.h"

namespace trainer::api {

DatasetOrModelInitializer Clone(const DatasetOrModelInitializer& in) {
  DatasetOrModelInitializer out;
  out.storage_uri = in.storage_uri;
  out.env = in.env.Clone();
  out.secret_ref = in.secret_ref;
  return out;
}

Initializer Clone(const Initializer& in) {
  Initializer out;
  if (in.dataset) out.dataset = Clone(*in.dataset);
  if (in.model) out.model = Clone(*in.model);
  return out;
}

Trainer Clone(const Trainer& in) {
  Trainer out;
  out.image = in.image;
  out.command = in.command;
  out.args = in.args;
  out.env = in.env.Clone();
  out.num_nodes = in.num_nodes;
  out.resources_per_node = in.resources_per_node.Clone();
  out.num_proc_per_node = in.num_proc_per_node;
  return out;
}

RuntimePatch Clone(const RuntimePatch& in) {
  RuntimePatch out;
  out.manager = in.manager;
  out.time = in.time;
  out.training_runtime_spec = in.training_runtime_spec.Clone();
  return out;
}

TrainJobSpec Clone(const TrainJobSpec& in) {
  TrainJobSpec out;
  out.runtime_ref = in.runtime_ref;
  if (in.initializer) out.initializer = Clone(*in.initializer);
  if (in.trainer) out.trainer = Clone(*in.trainer);
  out.runtime_patches.reserve(in.runtime_patches.size());
  for (const RuntimePatch& p : in.runtime_patches) out.runtime_patches.push_back(Clone(p));
  out.suspend = in.suspend;
  out.active_deadline_seconds = in.active_deadline_seconds;
  out.managed_by = in.managed_by;
  return out;
}

TrainJobStatus Clone(const TrainJobStatus& in) {
  TrainJobStatus out;
  out.conditions = in.conditions;
  out.jobs_status = in.jobs_status;
  out.trainer_status = in.trainer_status.Clone();
  return out;
}

TrainJob Clone(const TrainJob& in) {
  TrainJob out;
  out.metadata = in.metadata;
  out.spec = Clone(in.spec);
  out.status = Clone(in.status);
  out.raw = in.raw.Clone();
  return out;
}

TrainingRuntimeSpec Clone(const TrainingRuntimeSpec& in) {
  TrainingRuntimeSpec out;
  out.ml_policy = in.ml_policy;
  out.pod_group_policy = in.pod_group_policy;
  out.template_ = in.template_.Clone();
  return out;
}

TrainingRuntime Clone(const TrainingRuntime& in) {
  TrainingRuntime out;
  out.kind = in.kind;
  out.metadata = in.metadata;
  out.spec = Clone(in.spec);
  out.raw = in.raw.Clone();
  return out;
}

}  // namespace trainer::api
