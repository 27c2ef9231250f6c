// Runtime snapshots (upstream pkg/runtime/core/snapshot.go, KEP 2599 mutable runtimes): the
// runtime a TrainJob first reconciled against, frozen as YAML in the ConfigMap
// `<trainJob>-runtime-snapshot` (key `runtime`), owned by the TrainJob. Later reconciles build
// from the snapshot, so editing a runtime never changes running TrainJobs.
#pragma once

#include <string>

#include "common/json/json.h"
#include "common/status/status.h"
#include "runtime/api/types.h"
#include "runtime/framework/reader.h"

namespace trainer::core {

inline constexpr char kRuntimeSnapshotSuffix[] = "-runtime-snapshot";
inline constexpr char kRuntimeSnapshotDataKey[] = "runtime";

std::string RuntimeSnapshotName(const api::TrainJob& job);

// Reads and checks the snapshot of `job`. NotFound when the ConfigMap does not exist; otherwise
// errors as upstream: "invalid runtime snapshot: a snapshot configmap exists but is owned by
// another object", "... snapshot ConfigMap missing \"runtime\" data key", "... unable to
// unmarshal the snapshot: <err>", "... the snapshot refers to the wrong runtime: ...".
StatusOr<api::TrainingRuntime> GetRuntimeSnapshot(const framework::Reader& reader,
                                                  const api::TrainJob& job);

// The snapshot ConfigMap for `runtime_object` (the runtime document as read: apiVersion, kind,
// metadata, spec), YAML with sorted keys as sigs.k8s.io/yaml writes it.
json::Value NewRuntimeSnapshot(const api::TrainJob& job, const json::Value& runtime_object);

}  // namespace trainer::core
