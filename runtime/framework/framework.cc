// Phase runners over the plugin lists.
#include "runtime/framework/framework.h"

namespace trainer::framework {

StatusOr<std::unique_ptr<Framework>> Framework::New(std::vector<std::unique_ptr<Plugin>> plugins) {
  std::unique_ptr<Framework> f(new Framework());
  for (std::unique_ptr<Plugin>& plugin : plugins) {
    Plugin* p = plugin.get();
    if (auto* x = dynamic_cast<EnforceMLPolicyPlugin*>(p)) {
      f->enforce_ml_.push_back(x);
    }
    if (auto* x = dynamic_cast<EnforcePodGroupPolicyPlugin*>(p)) {
      f->enforce_pod_group_.push_back(x);
    }
    if (auto* x = dynamic_cast<CustomValidationPlugin*>(p)) {
      f->custom_validation_.push_back(x);
    }
    if (auto* x = dynamic_cast<WatchExtensionPlugin*>(p)) {
      f->watch_extension_.push_back(x);
    }
    if (auto* x = dynamic_cast<PodNetworkPlugin*>(p)) {
      f->pod_network_.push_back(x);
    }
    if (auto* x = dynamic_cast<ComponentBuilderPlugin*>(p)) {
      f->component_builder_.push_back(x);
    }
    if (auto* x = dynamic_cast<TrainJobStatusPlugin*>(p)) {
      if (f->trainjob_status_ != nullptr) {
        return InvalidArgumentError("too many TrainJobStatus plugins are registered");
      }
      f->trainjob_status_ = x;
    }
    f->plugins_.push_back(std::move(plugin));
  }
  return f;
}

Status Framework::RunEnforceMLPolicyPlugins(Info* info, api::TrainJob& job) {
  for (EnforceMLPolicyPlugin* p : enforce_ml_) {
    RETURN_IF_ERROR(p->EnforceMLPolicy(info, job));
  }
  return OkStatus();
}

Status Framework::RunEnforcePodGroupPolicyPlugins(Info* info, const api::TrainJob& job) {
  for (EnforcePodGroupPolicyPlugin* p : enforce_pod_group_) {
    RETURN_IF_ERROR(p->EnforcePodGroupPolicy(info, job));
  }
  return OkStatus();
}

Status Framework::RunPodNetworkPlugins(Info* info, const api::TrainJob& job) {
  for (PodNetworkPlugin* p : pod_network_) {
    RETURN_IF_ERROR(p->IdentifyPodNetwork(info, job));
  }
  return OkStatus();
}

StatusOr<std::vector<json::Value>> Framework::RunComponentBuilderPlugins(Info* info,
                                                                         const api::TrainJob& job) {
  for (ComponentBuilderPlugin* p : component_builder_) {
    RETURN_IF_ERROR(p->SyncParallelCount(info));
  }
  std::vector<json::Value> objects;
  for (ComponentBuilderPlugin* p : component_builder_) {
    ASSIGN_OR_RETURN(std::vector<json::Value> built, p->Build(info, job));
    for (json::Value& o : built) {
      objects.push_back(std::move(o));
    }
  }
  return objects;
}

field::ValidationResult Framework::RunCustomValidationPlugins(const Info* info,
                                                              const api::TrainJob* old_job,
                                                              const api::TrainJob& new_job) {
  field::ValidationResult result;
  for (CustomValidationPlugin* p : custom_validation_) {
    result.Append(p->Validate(info, old_job, new_job));
  }
  return result;
}

StatusOr<std::optional<api::TrainJobStatus>> Framework::RunTrainJobStatusPlugin(
    const api::TrainJob& job) {
  if (trainjob_status_ == nullptr) {
    return std::optional<api::TrainJobStatus>();
  }
  return trainjob_status_->Status(job);
}

std::vector<Watch> Framework::Watches() const {
  std::vector<Watch> out;
  for (const WatchExtensionPlugin* p : watch_extension_) {
    for (Watch& w : p->Watches()) {
      out.push_back(std::move(w));
    }
  }
  return out;
}

std::vector<Index> Framework::Indexes() const {
  std::vector<Index> out;
  for (const WatchExtensionPlugin* p : watch_extension_) {
    for (Index& i : p->Indexes()) {
      out.push_back(std::move(i));
    }
  }
  return out;
}

}  // namespace trainer::framework
