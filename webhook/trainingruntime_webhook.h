// The TrainingRuntime and ClusterTrainingRuntime validators (upstream
// pkg/webhooks/{trainingruntime,clustertrainingruntime}_webhook.go).
//
//   kind                    CREATE                          UPDATE               DELETE
//   TrainingRuntime         ValidateReplicatedJobs          allowed (no checks)  allowed
//   ClusterTrainingRuntime  ValidateReplicatedJobs + the    ValidateReplicatedJobs allowed
//                           deprecation warning
// Runtimes labelled trainer.kubeflow.org/webhook-validation=disabled never reach us (the
// ValidatingWebhookConfiguration's objectSelector).
#pragma once

#include "common/json/json.h"
#include "runtime/field/field.h"
#include "webhook/admission.h"

namespace trainer::webhook {

class TrainingRuntimeValidator final : public AdmissionHandler {
 public:
  // `cluster`: validate ClusterTrainingRuntimes (else namespaced TrainingRuntimes).
  explicit TrainingRuntimeValidator(bool cluster) : cluster_(cluster) {}
  AdmissionResponse Handle(const AdmissionRequest& request) override;

 private:
  bool cluster_;
};

// validateReplicatedJobs: for every replicatedJob whose template labels name a TrainJob ancestor
// (trainer, model-initializer, dataset-initializer), replicas must be 1 and its pod must have the
// ancestor's container (node, model-initializer, dataset-initializer). `replicated_jobs` is
// spec.template.spec.replicatedJobs (null or absent: no errors).
field::ErrorList ValidateReplicatedJobs(const json::Value& replicated_jobs);

}  // namespace trainer::webhook
