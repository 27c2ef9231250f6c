// Kubernetes-facing names shared by the runtime pipeline and its plugins, spelled as upstream
// spells them (pkg/constants/constants.go, plugins/jobset/constants/constants.go).
#pragma once

#include <cstdint>
#include <string>

#include "runtime/api/labels.h"

namespace trainer::framework {

inline constexpr char kRuntimeDeprecationPolicyURL[] =
    "https://trainer.kubeflow.org/en/latest/operator-guides/"
    "runtime.html#runtime-deprecation-policy";

inline constexpr char kAncestorTrainer[] = "trainer";
inline constexpr char kDatasetInitializer[] = "dataset-initializer";
inline constexpr char kModelInitializer[] = "model-initializer";
inline constexpr char kNode[] = "node";          // trainer job and container name
inline constexpr char kLauncher[] = "launcher";  // MPI launcher job name
inline constexpr int32_t kContainerTrainerPort = 29500;
inline constexpr int32_t kDefaultJobReplicas = 1;
// The downward-API path of a pod's Job completion index (the rank env vars read it).
inline const std::string kJobCompletionIndexFieldPath =
    std::string("metadata.annotations['") + api::kAnnotationJobCompletionIndex + "']";

// JobSet plugin. (kJobSetKind: transitional, for tools/trainer-render; use api::kJobSetGVK.)
inline constexpr char kJobSetKind[] = "JobSet";
inline constexpr char kVolumeNameInitializer[] = "initializer";
inline constexpr char kInitializerEnvStorageUri[] = "STORAGE_URI";

// The field manager of every object trainer-cpp applies.
inline constexpr char kFieldManager[] = "trainer";

}  // namespace trainer::framework
