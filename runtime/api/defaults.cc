// TrainJob runtimePatch time defaulting (upstream pkg/webhooks/trainjob_webhook.go) and the CRD
// structural defaults of TrainJob and (Cluster)TrainingRuntime (manifests/base/crds/*.yaml).
#include "runtime/api/defaults.h"

#include <map>
#include <string>
#include <utility>

namespace trainer::api {
namespace {

// Go's semantic equality on decoded structs treats nil and empty slices and maps alike and never
// sees JSON nulls; drop those so that JSON equality agrees with it. Empty objects are kept: under
// a pointer-to-struct field they differ from nil in Go too. The string maps of the patch types
// (labels, annotations, nodeSelector) are the exception: they are Go maps.
json::Value Normalize(const json::Value& v) {
  if (v.IsArray()) {
    json::Value out = json::Value::Array();
    for (const json::Value& e : v.elements()) out.PushBack(Normalize(e));
    return out;
  }
  if (!v.IsObject()) return v.Clone();
  json::Value out = json::Value::Object();
  for (const auto& [key, member] : v.members()) {
    if (member.IsNull() || (member.IsArray() && member.empty())) continue;
    if (member.IsObject() && member.empty() &&
        (key == "labels" || key == "annotations" || key == "nodeSelector")) {
      continue;
    }
    out.Set(key, Normalize(member));
  }
  return out;
}

bool SemanticallyEqualIgnoringTime(const RuntimePatch& a, const RuntimePatch& b) {
  return a.manager == b.manager &&
         Normalize(a.training_runtime_spec) == Normalize(b.training_runtime_spec);
}

// Sets obj[key] = value unless obj already has a non-null value there.
void Default(json::Value& obj, std::string_view key, json::Value value) {
  const json::Value* v = obj.Find(key);
  if (v == nullptr || v->IsNull()) obj.Set(key, std::move(value));
}

void DefaultContainerPorts(json::Value& pod_spec) {
  for (std::string_view list : {"initContainers", "containers"}) {
    json::Value* containers = pod_spec.Find(list);
    if (containers == nullptr || !containers->IsArray()) continue;
    for (json::Value& c : containers->elements()) {
      json::Value* ports = c.IsObject() ? c.Find("ports") : nullptr;
      if (ports == nullptr || !ports->IsArray()) continue;
      for (json::Value& port : ports->elements()) {
        if (port.IsObject()) Default(port, "protocol", json::Value("TCP"));
      }
    }
  }
}

// template.spec of a runtime: a JobSetSpec.
void DefaultJobSetSpec(json::Value& spec) {
  if (json::Value* jobs = spec.Find("replicatedJobs"); jobs != nullptr && jobs->IsArray()) {
    for (json::Value& job : jobs->elements()) {
      if (!job.IsObject()) continue;
      Default(job, "groupName", json::Value("default"));
      Default(job, "replicas", json::Value(1));
      json::Value* job_template = job.Find("template");
      json::Value* job_spec = job_template != nullptr && job_template->IsObject()
                                  ? job_template->Find("spec")
                                  : nullptr;
      json::Value* pod_template =
          job_spec != nullptr && job_spec->IsObject() ? job_spec->Find("template") : nullptr;
      json::Value* pod_spec = pod_template != nullptr && pod_template->IsObject()
                                  ? pod_template->Find("spec")
                                  : nullptr;
      if (pod_spec != nullptr && pod_spec->IsObject()) DefaultContainerPorts(*pod_spec);
    }
  }
  if (json::Value* policy = spec.Find("failurePolicy"); policy != nullptr && policy->IsObject()) {
    Default(*policy, "restartStrategy", json::Value("Recreate"));
  }
  if (json::Value* claims = spec.Find("volumeClaimPolicies");
      claims != nullptr && claims->IsArray()) {
    for (json::Value& claim : claims->elements()) {
      json::Value* retention = claim.IsObject() ? claim.Find("retentionPolicy") : nullptr;
      if (retention != nullptr && retention->IsObject()) {
        Default(*retention, "whenDeleted", json::Value("Delete"));
      }
    }
  }
}

}  // namespace

void DefaultRuntimePatchTimes(TrainJob& job, const TrainJob* old, std::string_view now_rfc3339) {
  const std::string now(now_rfc3339);
  if (old == nullptr) {
    for (RuntimePatch& patch : job.spec.runtime_patches) {
      if (!patch.time) patch.time = now;
    }
    return;
  }
  std::map<std::string, const RuntimePatch*> old_by_manager;
  for (const RuntimePatch& p : old->spec.runtime_patches) old_by_manager[p.manager] = &p;
  for (RuntimePatch& patch : job.spec.runtime_patches) {
    auto it = old_by_manager.find(patch.manager);
    if (it != old_by_manager.end()) {
      patch.time =
          SemanticallyEqualIgnoringTime(*it->second, patch) ? it->second->time : std::optional(now);
    } else if (!patch.time) {
      patch.time = now;
    }
  }
}

void ApplySchemaDefaults(TrainJob& job) {
  TrainJobSpec& spec = job.spec;
  if (!spec.suspend) spec.suspend = false;
  if (!spec.managed_by) spec.managed_by = kTrainJobControllerManagedBy;
  if (!spec.runtime_ref.api_group) spec.runtime_ref.api_group = kGroup;
  if (!spec.runtime_ref.kind) spec.runtime_ref.kind = kClusterTrainingRuntimeKind;
}

void ApplyRuntimeSchemaDefaults(TrainingRuntime& runtime) {
  TrainingRuntimeSpec& spec = runtime.spec;
  if (spec.ml_policy) {
    if (MPIMLPolicySource* mpi = spec.ml_policy->mpi ? &*spec.ml_policy->mpi : nullptr) {
      if (!mpi->num_proc_per_node) mpi->num_proc_per_node = 1;
      if (!mpi->mpi_implementation) mpi->mpi_implementation = "OpenMPI";
      if (!mpi->ssh_auth_mount_path) mpi->ssh_auth_mount_path = "/root/.ssh";
      if (!mpi->run_launcher_as_node) mpi->run_launcher_as_node = false;
    }
    if (spec.ml_policy->flux && !spec.ml_policy->flux->num_proc_per_node) {
      spec.ml_policy->flux->num_proc_per_node = 1;
    }
  }
  if (spec.pod_group_policy) {
    auto& coscheduling = spec.pod_group_policy->coscheduling;
    if (coscheduling && !coscheduling->schedule_timeout_seconds) {
      coscheduling->schedule_timeout_seconds = 60;
    }
    auto& volcano = spec.pod_group_policy->volcano;
    if (volcano && volcano->network_topology) {
      if (!volcano->network_topology->mode) volcano->network_topology->mode = "hard";
      if (!volcano->network_topology->highest_tier_allowed) {
        volcano->network_topology->highest_tier_allowed = 1;
      }
    }
  }
  if (spec.template_.IsObject()) {
    json::Value* jobset_spec = spec.template_.Find("spec");
    if (jobset_spec != nullptr && jobset_spec->IsObject()) DefaultJobSetSpec(*jobset_spec);
  }
}

std::string RuntimeRegistryKey(const RuntimeRef& ref) {
  const std::string kind = ref.kind.value_or("");
  const std::string group = ref.api_group.value_or("");
  return group.empty() ? kind : kind + "." + group;
}

}  // namespace trainer::api
