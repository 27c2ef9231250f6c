// ClusterReader: what the webhook reads from the cluster (the runtimes a TrainJob references,
// the JobSet of a TrainJob, PriorityClasses), plus whether its caches are warm (readiness).
//
// Implementations:
//   NewLiveClusterReader   — a GET to the apiserver per read; always "synced". The fallback
//                            until the informer caches are wired, and the path for rarely read
//                            kinds (JobSet on runtimePatches updates, PriorityClass).
//   NewStaticClusterReader — objects from manifests (--offline-runtimes): development, goldens
//                            and benchmarks without a cluster.
//   (informer-backed TrainingRuntime / ClusterTrainingRuntime caches: when common/informer lands)
#pragma once

#include <memory>
#include <vector>

#include "common/json/json.h"
#include "common/kube/client.h"
#include "runtime/framework/reader.h"

namespace trainer::webhook {

class ClusterReader : public framework::Reader {
 public:
  // True once every cache has its initial list; /readyz waits for it.
  virtual bool HasSynced() const = 0;
};

// `client` must outlive the reader.
std::unique_ptr<ClusterReader> NewLiveClusterReader(kube::Reader* client);
// Errors name an object the reader cannot key (no apiVersion, kind or name).
StatusOr<std::unique_ptr<ClusterReader>> NewStaticClusterReader(std::vector<json::Value> objects);

}  // namespace trainer::webhook
