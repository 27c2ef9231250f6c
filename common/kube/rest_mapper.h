// RESTMapper-lite: a static table of the kinds trainer-cpp reads or writes (kind <-> resource,
// namespaced or not), plus discovery (GET /apis/<group>/<version>) to learn whether an optional
// kind (JobSet, a PodGroup flavour) is installed. A table instead of full discovery keeps start-up
// free of dozens of requests and makes the mapping reviewable in one place.
//
//   ASSIGN_OR_RETURN(const kube::ResourceMapping* m,
//   kube::MappingFor(kube::GroupVersionKind::Of(obj))); c.Apply(m->gvr, ns, obj, opts);
//   ASSIGN_OR_RETURN(bool has_volcano, kube::IsInstalled(c, kube::kVolcanoPodGroupKind));
#pragma once

#include <string_view>
#include <vector>

#include "common/kube/client.h"
#include "common/kube/types.h"
#include "common/status/status.h"

namespace trainer::kube {

struct ResourceMapping {
  GroupVersionKind gvk;
  GroupVersionResource gvr;
  bool namespaced = true;
};

// Resources by name, for call sites that know what they want.
inline const GroupVersionResource kTrainJobs{"trainer.kubeflow.org", "v1alpha1", "trainjobs"};
inline const GroupVersionResource kTrainingRuntimes{"trainer.kubeflow.org", "v1alpha1",
                                                    "trainingruntimes"};
inline const GroupVersionResource kClusterTrainingRuntimes{"trainer.kubeflow.org", "v1alpha1",
                                                           "clustertrainingruntimes"};
inline const GroupVersionResource kJobSets{"jobset.x-k8s.io", "v1alpha2", "jobsets"};
inline const GroupVersionResource kConfigMaps{"", "v1", "configmaps"};
inline const GroupVersionResource kSecrets{"", "v1", "secrets"};
inline const GroupVersionResource kNamespaces{"", "v1", "namespaces"};
inline const GroupVersionResource kServiceAccounts{"", "v1", "serviceaccounts"};
inline const GroupVersionResource kLimitRanges{"", "v1", "limitranges"};
inline const GroupVersionResource kPods{"", "v1", "pods"};
inline const GroupVersionResource kServices{"", "v1", "services"};
inline const GroupVersionResource kEvents{"events.k8s.io", "v1", "events"};
inline const GroupVersionResource kLeases{"coordination.k8s.io", "v1", "leases"};
inline const GroupVersionResource kSchedulerPluginsPodGroups{"scheduling.x-k8s.io", "v1alpha1",
                                                             "podgroups"};
inline const GroupVersionResource kVolcanoPodGroups{"scheduling.volcano.sh", "v1beta1",
                                                    "podgroups"};
inline const GroupVersionResource kRuntimeClasses{"node.k8s.io", "v1", "runtimeclasses"};
inline const GroupVersionResource kPriorityClasses{"scheduling.k8s.io", "v1", "priorityclasses"};
inline const GroupVersionResource kMutatingWebhookConfigurations{
    "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations"};
inline const GroupVersionResource kValidatingWebhookConfigurations{
    "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations"};
inline const GroupVersionResource kCustomResourceDefinitions{"apiextensions.k8s.io", "v1",
                                                             "customresourcedefinitions"};
inline const GroupVersionResource kJobs{"batch", "v1", "jobs"};

inline const GroupVersionKind kJobSetKind{"jobset.x-k8s.io", "v1alpha2", "JobSet"};
inline const GroupVersionKind kSchedulerPluginsPodGroupKind{"scheduling.x-k8s.io", "v1alpha1",
                                                            "PodGroup"};
inline const GroupVersionKind kVolcanoPodGroupKind{"scheduling.volcano.sh", "v1beta1", "PodGroup"};

// Every mapping in the table.
const std::vector<ResourceMapping>& KnownResources();

// The mapping of a kind / a resource; kNotFound for kinds outside the table.
StatusOr<const ResourceMapping*> MappingFor(const GroupVersionKind& gvk);
StatusOr<const ResourceMapping*> MappingForResource(const GroupVersionResource& gvr);

// Asks the apiserver whether `gvk` is served: false when the group/version is absent (404) or
// does not list the kind; errors only for other failures.
StatusOr<bool> IsInstalled(Client& client, const GroupVersionKind& gvk);

}  // namespace trainer::kube
