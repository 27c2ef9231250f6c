// TrainingRuntimeValidator and ValidateReplicatedJobs (see trainingruntime_webhook.h).
#include "webhook/trainingruntime_webhook.h"

#include <string>
#include <utility>

#include "runtime/api/codec.h"
#include "runtime/api/labels.h"
#include "runtime/framework/constants.h"

namespace trainer::webhook {
namespace {

// The container each ancestor's job must run.
const char* RequiredContainer(std::string_view ancestor) {
  if (ancestor == framework::kAncestorTrainer) {
    return framework::kNode;
  }
  if (ancestor == framework::kModelInitializer) {
    return framework::kModelInitializer;
  }
  if (ancestor == framework::kDatasetInitializer) {
    return framework::kDatasetInitializer;
  }
  return nullptr;
}

const json::Value* At(const json::Value& v, std::initializer_list<std::string_view> keys) {
  const json::Value* cur = &v;
  for (std::string_view k : keys) {
    cur = cur->Find(k);
    if (cur == nullptr) {
      return nullptr;
    }
  }
  return cur;
}

}  // namespace

field::ErrorList ValidateReplicatedJobs(const json::Value& replicated_jobs) {
  field::ErrorList errors;
  if (!replicated_jobs.IsArray()) {
    return errors;
  }
  const field::Path base = field::NewPath("spec", "template", "spec", "replicatedJobs");
  for (size_t i = 0; i < replicated_jobs.size(); ++i) {
    const json::Value& rjob = replicated_jobs.at(i);
    const json::Value* ancestor =
        At(rjob, {"template", "metadata", "labels", api::kLabelTrainJobAncestor});
    if (ancestor == nullptr || !ancestor->IsString()) {
      continue;
    }
    const char* required = RequiredContainer(ancestor->AsString());
    if (required == nullptr) {
      continue;
    }
    const json::Value* replicas = rjob.Find("replicas");
    int64_t n = replicas != nullptr && replicas->IsNumber() ? replicas->AsInt() : 0;
    if (n != 1) {
      errors.push_back(field::Invalid(base.Index(static_cast<int64_t>(i)).Child("replicas"),
                                      field::Int(n), "always must be 1"));
    }
    const json::Value* containers =
        At(rjob, {"template", "spec", "template", "spec", "containers"});
    bool found = false;
    if (containers != nullptr && containers->IsArray()) {
      found = json::FindByKey(*containers, "name", required) != nullptr;
    }
    if (!found) {
      errors.push_back(field::Invalid(
          base.Index(static_cast<int64_t>(i))
              .Child("template", "spec", "template", "spec", "containers"),
          field::BadValue::Json(containers != nullptr ? containers->Clone() : json::Value()),
          "must contain the required container for the ancestor: " + ancestor->AsString()));
    }
  }
  return errors;
}

AdmissionResponse TrainingRuntimeValidator::Handle(const AdmissionRequest& req) {
  const bool create = req.operation == "CREATE";
  const bool update = req.operation == "UPDATE";
  if (req.operation == "DELETE" || req.operation == "CONNECT") {
    return AdmissionResponse::Allowed();  // not validated upstream
  }
  if (!create && !update) {
    // controller-runtime's validator answers anything else so (a hand-made review).
    return AdmissionResponse::Errored(400, "unknown operation \"" + req.operation + "\"");
  }
  if (!req.object.IsObject()) {
    return AdmissionResponse::Errored(400, "there is no content to decode in object");
  }
  const std::string_view kind =
      cluster_ ? api::kClusterTrainingRuntimeKind : api::kTrainingRuntimeKind;
  StatusOr<api::TrainingRuntime> rt = api::DecodeTrainingRuntimeAs(req.object, kind);
  if (!rt.ok()) {
    return AdmissionResponse::Errored(400, rt.status().message());
  }
  if (update && !cluster_) {
    return AdmissionResponse::Allowed();  // upstream's ValidateUpdate returns nil
  }
  std::vector<std::string> warnings;
  if (cluster_ && create) {
    auto label = rt->metadata.labels.find(api::kLabelSupport);
    if (label != rt->metadata.labels.end() && label->second == api::kSupportDeprecated) {
      warnings.push_back("ClusterTrainingRuntime \"" + rt->metadata.name +
                         "\" is deprecated and will be removed in a future release of Kubeflow "
                         "Trainer. See runtime deprecation policy: " +
                         std::string(framework::kRuntimeDeprecationPolicyURL));
    }
  }
  const json::Value* rjobs = nullptr;
  if (rt->spec.template_.IsObject()) {
    rjobs = At(rt->spec.template_, {"spec", "replicatedJobs"});
  }
  field::ErrorList errors = rjobs != nullptr ? ValidateReplicatedJobs(*rjobs) : field::ErrorList{};
  if (!errors.empty()) {
    return AdmissionResponse::Denied(field::Aggregate(errors)).WithWarnings(std::move(warnings));
  }
  return AdmissionResponse::Allowed().WithWarnings(std::move(warnings));
}

}  // namespace trainer::webhook
