// Typed API of trainer.kubeflow.org/v1alpha1 (TrainJob, TrainingRuntime, ClusterTrainingRuntime),
// as in upstream Kubeflow Trainer v2.3.0
// (pkg/apis/trainer/v1alpha1/{trainjob,trainingruntime}_types.go).
//
// Control fields are typed, with std::optional where Go has a pointer (unset != zero, which
// matters for defaulting and server-side apply). Embedded Kubernetes types (EnvVar, resources,
// pod and JobSet templates, ObjectMeta beyond the basics) stay owned JSON: we edit them by key
// and write them back, never re-serialising a whole pod spec through a struct we might get wrong.
// Each object also keeps `raw`, the document it was decoded from, so nothing unknown is lost.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/json/json.h"

namespace trainer::api {

inline constexpr char kGroup[] = "trainer.kubeflow.org";
inline constexpr char kVersion[] = "v1alpha1";
inline constexpr char kAPIVersion[] = "trainer.kubeflow.org/v1alpha1";
inline constexpr char kTrainJobKind[] = "TrainJob";
inline constexpr char kTrainingRuntimeKind[] = "TrainingRuntime";
inline constexpr char kClusterTrainingRuntimeKind[] = "ClusterTrainingRuntime";

// spec.managedBy values accepted by the CRD; the first is the schema default.
inline constexpr char kTrainJobControllerManagedBy[] = "trainer.kubeflow.org/trainjob-controller";
inline constexpr char kMultiKueueManagedBy[] = "kueue.x-k8s.io/multikueue";

// The metadata fields the pipeline reads; everything else stays in the object's `raw`.
struct ObjectMeta {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  std::string creation_timestamp;  // RFC 3339, "" when unset
  std::optional<std::string> deletion_timestamp;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<std::string> finalizers;
};

// ---- TrainJob ----

struct RuntimeRef {
  std::string name;
  std::optional<std::string> api_group;  // CRD default: trainer.kubeflow.org
  std::optional<std::string> kind;       // CRD default: ClusterTrainingRuntime
};

struct DatasetOrModelInitializer {
  std::optional<std::string> storage_uri;
  json::Value env;                        // []corev1.EnvVar, null when unset
  std::optional<std::string> secret_ref;  // LocalObjectReference.name
};

struct Initializer {
  std::optional<DatasetOrModelInitializer> dataset;
  std::optional<DatasetOrModelInitializer> model;
};

struct Trainer {
  std::optional<std::string> image;
  std::optional<std::vector<std::string>> command;
  std::optional<std::vector<std::string>> args;
  json::Value env;  // []corev1.EnvVar, null when unset
  std::optional<int32_t> num_nodes;
  json::Value resources_per_node;  // corev1.ResourceRequirements, null when unset
  std::optional<int32_t> num_proc_per_node;
};

// One entry of spec.runtimePatches. The patch body (trainingRuntimeSpec) is owned JSON: it is a
// strategic-merge patch over the runtime's JobSet template.
struct RuntimePatch {
  std::string manager;
  std::optional<std::string> time;    // metav1.Time, RFC 3339
  json::Value training_runtime_spec;  // {template: {metadata, spec}} or null
};

struct TrainJobSpec {
  RuntimeRef runtime_ref;
  std::optional<Initializer> initializer;
  std::optional<Trainer> trainer;
  std::vector<RuntimePatch> runtime_patches;
  std::optional<bool> suspend;
  std::optional<int64_t> active_deadline_seconds;
  std::optional<std::string> managed_by;
};

struct Condition {
  std::string type;
  std::string status;  // True | False | Unknown
  std::string reason;
  std::string message;
  std::string last_transition_time;
  std::optional<int64_t> observed_generation;
};

struct JobStatus {
  std::string name;
  int32_t ready = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t active = 0;
  int32_t suspended = 0;
};

struct TrainJobStatus {
  std::vector<Condition> conditions;
  std::vector<JobStatus> jobs_status;
  json::Value trainer_status;  // written by the status server only; kept verbatim
};

struct TrainJob {
  ObjectMeta metadata;
  TrainJobSpec spec;
  TrainJobStatus status;
  json::Value raw;  // the decoded document (see DecodeTrainJob(json::Value&&) for its nulls)
};

// ---- TrainingRuntime / ClusterTrainingRuntime ----

struct EnvInjectionTarget {
  std::string job_name;
  std::vector<std::string> container_names;
};

struct TorchMLPolicySource {
  std::vector<EnvInjectionTarget> env_injection_targets;
};

struct MPIMLPolicySource {
  std::optional<int32_t> num_proc_per_node;        // CRD default 1
  std::optional<std::string> mpi_implementation;   // CRD default OpenMPI
  std::optional<std::string> ssh_auth_mount_path;  // CRD default /root/.ssh
  std::optional<bool> run_launcher_as_node;        // CRD default false
};

struct FluxMLPolicySource {
  std::optional<int32_t> num_proc_per_node;  // CRD default 1
};

struct MLPolicy {
  std::optional<int32_t> num_nodes;
  std::optional<TorchMLPolicySource> torch;
  std::optional<MPIMLPolicySource> mpi;
  bool jax = false;  // present (an empty object) or not
  bool xgboost = false;
  std::optional<FluxMLPolicySource> flux;
};

struct CoschedulingPodGroupPolicySource {
  std::optional<int32_t> schedule_timeout_seconds;  // CRD default 60
};

struct VolcanoNetworkTopology {
  std::optional<std::string> mode;  // hard | soft
  std::optional<int64_t> highest_tier_allowed;
};

struct VolcanoPodGroupPolicySource {
  std::optional<VolcanoNetworkTopology> network_topology;
};

struct PodGroupPolicy {
  std::optional<CoschedulingPodGroupPolicySource> coscheduling;
  std::optional<VolcanoPodGroupPolicySource> volcano;
};

struct TrainingRuntimeSpec {
  std::optional<MLPolicy> ml_policy;
  std::optional<PodGroupPolicy> pod_group_policy;
  // spec.template: {metadata: {labels, annotations}, spec: JobSetSpec} as owned JSON.
  json::Value template_;
};

// TrainingRuntime and ClusterTrainingRuntime share their schema; `kind` tells them apart.
struct TrainingRuntime {
  std::string kind;  // kTrainingRuntimeKind or kClusterTrainingRuntimeKind
  ObjectMeta metadata;
  TrainingRuntimeSpec spec;
  json::Value raw;
};

// Deep copies (the structs hold move-only json::Value members).
DatasetOrModelInitializer Clone(const DatasetOrModelInitializer& in);
Initializer Clone(const Initializer& in);
Trainer Clone(const Trainer& in);
RuntimePatch Clone(const RuntimePatch& in);
TrainJobSpec Clone(const TrainJobSpec& in);
TrainJobStatus Clone(const TrainJobStatus& in);
TrainJob Clone(const TrainJob& in);
TrainingRuntimeSpec Clone(const TrainingRuntimeSpec& in);
TrainingRuntime Clone(const TrainingRuntime& in);

}  // namespace trainer::api
