// The static kind table and discovery.
#include "common/kube/rest_mapper.h"

namespace trainer::kube {
namespace {

ResourceMapping Make(const GroupVersionResource& gvr, std::string_view kind, bool namespaced) {
  return ResourceMapping{GroupVersionKind{gvr.group, gvr.version, std::string(kind)}, gvr,
                         namespaced};
}

}  // namespace

const std::vector<ResourceMapping>& KnownResources() {
  static const std::vector<ResourceMapping>* table = new std::vector<ResourceMapping>{
      Make(kTrainJobs, "TrainJob", true),
      Make(kTrainingRuntimes, "TrainingRuntime", true),
      Make(kClusterTrainingRuntimes, "ClusterTrainingRuntime", false),
      Make(kJobSets, "JobSet", true),
      Make(kConfigMaps, "ConfigMap", true),
      Make(kSecrets, "Secret", true),
      Make(kNamespaces, "Namespace", false),
      Make(kServiceAccounts, "ServiceAccount", true),
      Make(kLimitRanges, "LimitRange", true),
      Make(kPods, "Pod", true),
      Make(kServices, "Service", true),
      Make(kEvents, "Event", true),
      Make(kLeases, "Lease", true),
      Make(kSchedulerPluginsPodGroups, "PodGroup", true),
      Make(kVolcanoPodGroups, "PodGroup", true),
      Make(kRuntimeClasses, "RuntimeClass", false),
      Make(kPriorityClasses, "PriorityClass", false),
      Make(kMutatingWebhookConfigurations, "MutatingWebhookConfiguration", false),
      Make(kValidatingWebhookConfigurations, "ValidatingWebhookConfiguration", false),
      Make(kCustomResourceDefinitions, "CustomResourceDefinition", false),
      Make(kJobs, "Job", true),
  };
  return *table;
}

StatusOr<const ResourceMapping*> MappingFor(const GroupVersionKind& gvk) {
  for (const ResourceMapping& m : KnownResources()) {
    if (m.gvk == gvk) return &m;
  }
  return NotFoundError("no resource mapping for kind " + gvk.ToString());
}

StatusOr<const ResourceMapping*> MappingForResource(const GroupVersionResource& gvr) {
  for (const ResourceMapping& m : KnownResources()) {
    if (m.gvr == gvr) return &m;
  }
  return NotFoundError("no resource mapping for resource " + gvr.ToString());
}

StatusOr<bool> IsInstalled(Client& client, const GroupVersionKind& gvk) {
  const std::string path =
      gvk.group.empty() ? "/api/" + gvk.version : "/apis/" + gvk.group + "/" + gvk.version;
  StatusOr<json::Value> list = client.GetPath(path);
  if (!list.ok()) {
    if (IsNotFound(list.status())) return false;
    return list.status().WithContext("discovering " + path);
  }
  const json::Value* resources = list->Find("resources");
  if (resources == nullptr || !resources->IsArray()) return false;
  for (const json::Value& r : resources->elements()) {
    const json::Value* kind = r.Find("kind");
    const json::Value* name = r.Find("name");
    // Subresources ("jobsets/status") repeat the kind; the plain resource is what counts.
    if (kind != nullptr && kind->IsString() && kind->AsString() == gvk.kind && name != nullptr &&
        name->IsString() && name->AsString().find('/') == std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace trainer::kube
