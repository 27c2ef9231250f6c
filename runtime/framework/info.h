// runtime.Info: what the pipeline knows about one TrainJob on one runtime, passed through the
// plugin phases (upstream pkg/runtime/runtime.go).
//
// The JobSet spec stays owned JSON (`template_spec.jobset_spec`, after runtimePatches). PodSets
// are the typed views plugins edit — counts, container env/ports/mounts, volumes — one per
// replicatedJob in template order; the JobSet plugin writes them back into the spec at Build.
//
//   PodSet* trainer = info.FindPodSetByAncestor(kAncestorTrainer);
//   Container* node = info.FindContainerByPodSetAncestorContainerName(kAncestorTrainer, kNode);
//   UpsertEnvVars(node->env, {MakeEnv("PET_NNODES", "2")});
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json/json.h"
#include "runtime/api/types.h"

namespace trainer::framework {

// The editable part of a container (upstream runtime.Container).
struct Container {
  std::string name;
  std::string image;
  std::vector<std::string> command;
  json::Value env = json::Value::Array();            // []EnvVar
  json::Value ports = json::Value::Array();          // []ContainerPort
  json::Value volume_mounts = json::Value::Array();  // []VolumeMount

  Container() = default;
  Container(Container&&) = default;
  Container& operator=(Container&&) = default;
  Container Clone() const;
  // Reads name, image, command, env, ports and volumeMounts of a container JSON object.
  static Container FromJson(const json::Value& c);
};

// Where the pods of a PodSet are reachable, set by the PodNetwork phase. Endpoints are computed
// from it on demand, so a count changed after the phase is still reflected (upstream's lazy
// iterator).
struct PodNetwork {
  std::string trainjob_name;
  std::string subdomain;
  int64_t replicas = 1;
};

struct PodSet {
  std::string name;                     // the replicatedJob name
  std::optional<std::string> ancestor;  // trainjob-ancestor-step label of the Job template
  std::optional<int32_t> count;
  std::vector<Container> init_containers;
  std::vector<Container> containers;
  json::Value volumes = json::Value::Array();  // []Volume
  std::optional<PodNetwork> network;
  // Requests of one pod (a ResourceList: resource name -> canonical quantity string), as
  // k8s.io/component-helpers/resource.PodRequests computes them.
  json::Value single_pod_requests = json::Value::Object();

  PodSet() = default;
  PodSet(PodSet&&) = default;
  PodSet& operator=(PodSet&&) = default;
  PodSet Clone() const;

  // "<trainJob>-<rJob>-<replica>-<pod>.<subdomain>" for every replica and pod; empty before the
  // PodNetwork phase ran.
  std::vector<std::string> Endpoints() const;
};

struct RuntimePolicy {
  std::optional<api::MLPolicy> ml_policy;  // the runtime's mlPolicy (MLPolicySource + numNodes)
  std::optional<api::PodGroupPolicy> pod_group_policy;
};

struct Scheduler {
  std::map<std::string, std::string> pod_labels;
  std::map<std::string, std::string> pod_annotations;
};

struct TemplateSpec {
  // The JobSetSpec of the runtime template after runtimePatches; null if the runtime template
  // is not a JobSet template.
  json::Value jobset_spec;
  std::vector<PodSet> pod_sets;
};

struct Info {
  std::map<std::string, std::string> labels;  // for the JobSet metadata
  std::map<std::string, std::string> annotations;
  RuntimePolicy runtime_policy;
  Scheduler scheduler;
  TemplateSpec template_spec;

  Info() = default;
  Info(Info&&) = default;
  Info& operator=(Info&&) = default;
  Info Clone() const;

  bool HasJobSetSpec() const { return template_spec.jobset_spec.IsObject(); }
  PodSet* FindPodSetByAncestor(std::string_view ancestor);
  const PodSet* FindPodSetByAncestor(std::string_view ancestor) const;
  PodSet* FindPodSetByName(std::string_view name);
  const PodSet* FindPodSetByName(std::string_view name) const;
  Container* FindContainerByPodSetAncestorContainerName(std::string_view ancestor,
                                                        std::string_view container);
  // Containers first, then init containers.
  Container* FindContainerByPodSetName(std::string_view pod_set, std::string_view container);
  const Container* FindContainerByPodSetName(std::string_view pod_set,
                                             std::string_view container) const;
  // The trainer PodSet (ancestor `trainer`) after the rule every ML policy applies first: its
  // count becomes spec.trainer.numNodes when both are set. nullptr when there is none.
  PodSet* ApplyTrainerNumNodes(const api::TrainJob& job);
  // The `node` container of the trainer PodSet; nullptr when there is none.
  Container* TrainerNode();
};

// Resources of the runtime's trainer container: the first replicatedJob named `node` or with
// ancestor `trainer`, its container `node` with `resources` set. Returns
// {limits: {...}, requests: {...}} or null.
json::Value ExtractResourcePerNodeFromRuntime(const Info& info);

// The GPU count of a ResourceRequirements JSON: the first resource whose lower-cased name
// contains "gpu" in requests, else in limits (ceil of the quantity); 0 if none or unparsable.
int64_t GetNumGPUPerNode(const json::Value& resources);

// Walks the JobSet spec: replicatedJobs[i].template.spec.template.spec (null if absent).
json::Value* PodSpecOf(json::Value& replicated_job);
const json::Value* PodSpecOf(const json::Value& replicated_job);
// Its pod spec's containers array (null if absent or not an array).
json::Value* ContainersOf(json::Value& replicated_job);
const json::Value* ContainersOf(const json::Value& replicated_job);
// replicatedJobs[i].template.metadata.labels[trainer.kubeflow.org/trainjob-ancestor-step].
std::optional<std::string> AncestorOf(const json::Value& replicated_job);
// String field or "".
std::string StringField(const json::Value& obj, std::string_view key);

}  // namespace trainer::framework
