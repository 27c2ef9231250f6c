// NewObjects, RuntimeInfo, TrainJobStatus and ValidateObjects of both runtime kinds.
#include "runtime/core/training_runtime.h"

#include "runtime/api/codec.h"
#include "runtime/api/kinds.h"
#include "runtime/api/labels.h"
#include "runtime/api/podtemplateoverrides.h"
#include "runtime/core/runtime_info.h"
#include "runtime/core/snapshot.h"
#include "runtime/framework/constants.h"
#include "runtime/framework/go_repr.h"
#include "runtime/framework/trainjob.h"

namespace trainer::core {

kube::GroupVersionKind TrainingRuntime::Kind() const { return api::kTrainingRuntimeGVK; }

kube::GroupVersionKind ClusterTrainingRuntime::Kind() const {
  return api::kClusterTrainingRuntimeGVK;
}

StatusOr<api::TrainingRuntime> TrainingRuntime::GetLive(const api::TrainJob& job,
                                                        json::Value* raw) const {
  ASSIGN_OR_RETURN(json::Value doc,
                   pipeline_->reader->Get(Kind(), Namespace(job), job.spec.runtime_ref.name));
  ASSIGN_OR_RETURN(api::TrainingRuntime runtime, api::DecodeTrainingRuntime(doc));
  if (raw != nullptr) {
    *raw = std::move(doc);
  }
  return runtime;
}

StatusOr<std::vector<json::Value>> TrainingRuntime::NewObjects(const api::TrainJob& in) {
  api::TrainJob job = api::Clone(in);
  std::vector<json::Value> objects;
  StatusOr<api::TrainingRuntime> runtime = GetRuntimeSnapshot(*pipeline_->reader, job);
  if (!runtime.ok()) {
    if (!IsNotFound(runtime.status())) {
      return runtime.status().WithContext(SnapshotContext());
    }
    json::Value raw;
    runtime = GetLive(job, &raw);
    if (!runtime.ok()) {
      return runtime.status().WithContext(NotFoundContext());
    }
    // Frozen on first use: later reconciles build from this snapshot.
    objects.push_back(NewRuntimeSnapshot(job, raw));
  }
  ASSIGN_OR_RETURN(std::vector<json::Value> built, BuildObjects(job, *runtime));
  for (json::Value& o : built) {
    objects.push_back(std::move(o));
  }
  return objects;
}

StatusOr<std::vector<json::Value>> TrainingRuntime::BuildObjects(
    api::TrainJob& job, const api::TrainingRuntime& runtime) {
  ASSIGN_OR_RETURN(framework::Info info, RuntimeInfo(job, runtime.spec));
  return pipeline_->framework->RunComponentBuilderPlugins(&info, job);
}

StatusOr<framework::Info> TrainingRuntime::RuntimeInfo(api::TrainJob& job,
                                                       const api::TrainingRuntimeSpec& spec) {
  if (!spec.template_.IsObject()) {
    return InvalidArgumentError("unsupported runtimeTemplateSpec");
  }
  ASSIGN_OR_RETURN(framework::Info info,
                   NewRuntimeInfo(job, spec.template_, spec.ml_policy, spec.pod_group_policy));
  framework::Framework& fw = *pipeline_->framework;
  RETURN_IF_ERROR(fw.RunEnforceMLPolicyPlugins(&info, job));
  RETURN_IF_ERROR(fw.RunEnforcePodGroupPolicyPlugins(&info, job));
  RETURN_IF_ERROR(fw.RunPodNetworkPlugins(&info, job));
  return info;
}

StatusOr<std::optional<api::TrainJobStatus>> TrainingRuntime::TrainJobStatus(
    const api::TrainJob& job) {
  return pipeline_->framework->RunTrainJobStatusPlugin(job);
}

std::vector<framework::Watch> TrainingRuntime::Watches() const {
  // The runtime snapshot ConfigMap is ours, not a plugin's.
  std::vector<framework::Watch> out = {{.gvk = api::kConfigMapGVK}};
  for (framework::Watch& w : pipeline_->framework->Watches()) {
    out.push_back(std::move(w));
  }
  return out;
}

std::vector<framework::Index> TrainingRuntime::Indexes() const {
  return pipeline_->framework->Indexes();
}

field::Error TrainingRuntime::RuntimeMissing(const api::TrainJob& job, const Status& err) const {
  return field::Invalid(field::NewPath("spec", "runtimeRef"),
                        framework::GoRuntimeRef(job.spec.runtime_ref),
                        err.message() +
                            ": specified trainingRuntime must be created before the TrainJob is "
                            "created");
}

field::Error ClusterTrainingRuntime::RuntimeMissing(const api::TrainJob& job,
                                                    const Status& err) const {
  // Upstream's path really is spec.RuntimeRef (capital R) for cluster runtimes.
  return field::Invalid(field::NewPath("spec", "RuntimeRef"),
                        framework::GoRuntimeRef(job.spec.runtime_ref),
                        err.message() +
                            ": specified clusterTrainingRuntime must be created before the "
                            "TrainJob is created");
}

namespace {

// v2.1's checks of spec.podTemplateOverrides against the runtime's template. They read the field
// from job.raw, where the mutating webhook keeps it next to its translated runtimePatches entry
// (that entry cannot carry these checks, see podtemplateoverrides.h).
field::ErrorList PodTemplateOverridesErrors(const api::TrainJob& job,
                                            const json::Value& runtime_template) {
  field::ErrorList errors;
  const json::Value* spec = job.raw.IsObject() ? job.raw.Find("spec") : nullptr;
  const json::Value* overrides =
      spec != nullptr && spec->IsObject() ? spec->Find("podTemplateOverrides") : nullptr;
  if (overrides == nullptr || overrides->IsNull() || !runtime_template.IsObject()) {
    return errors;
  }
  for (std::string& detail : api::ValidatePodTemplateOverrides(*spec, runtime_template)) {
    errors.push_back(field::Invalid(field::NewPath("spec", "podTemplateOverrides"),
                                    field::BadValue::Json(overrides->Clone()), std::move(detail)));
  }
  return errors;
}

}  // namespace

field::ValidationResult TrainingRuntime::RunValidation(
    const api::TrainJob* old_job, const api::TrainJob& new_job,
    const std::shared_ptr<const api::TrainingRuntime>& runtime) {
  // Admission builds Info without running any phase, and ignores a failure to build it
  // (upstream: "the runtime configured should be valid").
  framework::Framework& fw = *pipeline_->framework;
  StatusOr<RuntimeInfoCache::SharedInfo> info =
      pipeline_->infos.ForJob(Kind().kind, new_job, runtime);
  field::ValidationResult result =
      fw.RunCustomValidationPlugins(info.ok() ? info->get() : nullptr, old_job, new_job);
  for (field::Error& e : PodTemplateOverridesErrors(new_job, runtime->spec.template_)) {
    result.errors.push_back(std::move(e));
  }
  return result;
}

StatusOr<std::shared_ptr<const api::TrainingRuntime>> TrainingRuntime::GetShared(
    const api::TrainJob& job) const {
  return pipeline_->reader->GetTrainingRuntime(Kind(), Namespace(job), job.spec.runtime_ref.name);
}

field::ValidationResult TrainingRuntime::ValidateObjects(const api::TrainJob* old_job,
                                                         const api::TrainJob& new_job) {
  StatusOr<std::shared_ptr<const api::TrainingRuntime>> runtime = GetShared(new_job);
  if (!runtime.ok()) {
    field::ValidationResult result;
    result.errors.push_back(RuntimeMissing(new_job, runtime.status()));
    return result;
  }
  return RunValidation(old_job, new_job, *runtime);
}

field::ValidationResult ClusterTrainingRuntime::ValidateObjects(const api::TrainJob* old_job,
                                                                const api::TrainJob& new_job) {
  StatusOr<std::shared_ptr<const api::TrainingRuntime>> shared = GetShared(new_job);
  field::ValidationResult result;
  if (!shared.ok()) {
    result.errors.push_back(RuntimeMissing(new_job, shared.status()));
    return result;
  }
  const api::TrainingRuntime& runtime = **shared;
  auto label = runtime.metadata.labels.find(api::kLabelSupport);
  if (label != runtime.metadata.labels.end() && label->second == api::kSupportDeprecated) {
    result.warnings.push_back("Referenced ClusterTrainingRuntime \"" + runtime.metadata.name +
                              "\" is deprecated and will be removed in a future release of "
                              "Kubeflow Trainer. See runtime deprecation policy: " +
                              framework::kRuntimeDeprecationPolicyURL);
  }
  result.Append(RunValidation(old_job, new_job, *shared));
  return result;
}

}  // namespace trainer::core
