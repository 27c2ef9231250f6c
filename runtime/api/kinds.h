// The GroupVersionKind of every kind trainer-cpp reads, writes or watches, spelled once: its own
// CRDs (trainer.kubeflow.org/v1alpha1) and the kinds its plugins build or look up. Resources
// (plurals, for REST paths) are in common/kube/rest_mapper.h.
//
//   StatusOr<json::Value> js = reader.Get(api::kJobSetGVK, job.metadata.namespace_, name);
//   obj.Set("apiVersion", json::Value(api::kJobSetGVK.ApiVersion()));
#pragma once

#include "common/kube/types.h"
#include "runtime/api/types.h"

namespace trainer::api {

// trainer.kubeflow.org/v1alpha1.
inline const kube::GroupVersionKind kTrainJobGVK{kGroup, kVersion, kTrainJobKind};
inline const kube::GroupVersionKind kTrainingRuntimeGVK{kGroup, kVersion, kTrainingRuntimeKind};
inline const kube::GroupVersionKind kClusterTrainingRuntimeGVK{kGroup, kVersion,
                                                               kClusterTrainingRuntimeKind};

// JobSet v0.12 (the JobSet plugin builds it; the controller reads its status).
inline const kube::GroupVersionKind kJobSetGVK{"jobset.x-k8s.io", "v1alpha2", "JobSet"};

// Gang-scheduling PodGroups: scheduler-plugins' (CoScheduling plugin) and Volcano's.
inline const kube::GroupVersionKind kSchedulerPluginsPodGroupGVK{"scheduling.x-k8s.io", "v1alpha1",
                                                                 "PodGroup"};
inline const kube::GroupVersionKind kVolcanoPodGroupGVK{"scheduling.volcano.sh", "v1beta1",
                                                        "PodGroup"};

// Core and built-in kinds.
inline const kube::GroupVersionKind kConfigMapGVK{"", "v1", "ConfigMap"};
inline const kube::GroupVersionKind kSecretGVK{"", "v1", "Secret"};
inline const kube::GroupVersionKind kLimitRangeGVK{"", "v1", "LimitRange"};
inline const kube::GroupVersionKind kNamespaceGVK{"", "v1", "Namespace"};
inline const kube::GroupVersionKind kPriorityClassGVK{"scheduling.k8s.io", "v1", "PriorityClass"};
inline const kube::GroupVersionKind kRuntimeClassGVK{"node.k8s.io", "v1", "RuntimeClass"};

}  // namespace trainer::api
