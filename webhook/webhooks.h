// The trainer webhooks and their paths (upstream pkg/webhooks/setup.go and the
// +kubebuilder:webhook markers): one call registers all four on an AdmissionMux.
//
//   webhook::AdmissionMux mux(&metrics::DefaultRegistry());
//   webhook::RegisterWebhooks(mux, {.runtimes = runtimes.get(), .reader = reader.get()});
#pragma once

#include <functional>
#include <string>

#include "common/kube/meta.h"
#include "runtime/core/registry.h"
#include "runtime/framework/reader.h"
#include "webhook/mux.h"
#include "webhook/trainjob_webhook.h"

namespace trainer::webhook {

inline constexpr char kMutateTrainJobPath[] = "/mutate-trainer-kubeflow-org-v1alpha1-trainjob";
inline constexpr char kValidateTrainJobPath[] = "/validate-trainer-kubeflow-org-v1alpha1-trainjob";
inline constexpr char kValidateTrainingRuntimePath[] =
    "/validate-trainer-kubeflow-org-v1alpha1-trainingruntime";
inline constexpr char kValidateClusterTrainingRuntimePath[] =
    "/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime";

struct Dependencies {
  const core::Runtimes* runtimes = nullptr;  // must outlive the mux
  const framework::Reader* reader = nullptr;
  std::function<std::string()> now = kube::NowTime;  // the defaulter's clock
};

void RegisterWebhooks(AdmissionMux& mux, const Dependencies& deps);

}  // namespace trainer::webhook
