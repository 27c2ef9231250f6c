// ClusterReader: what the webhook reads from the cluster (the runtimes a TrainJob references,
// the JobSet of a TrainJob, PriorityClasses), plus whether its caches are warm (readiness).
//
// Implementations:
//   NewInformerClusterReader — what trainer-webhook runs with: TrainingRuntimes (all namespaces)
//                            and ClusterTrainingRuntimes from informer caches, as upstream's
//                            webhook reads them from the manager's cache; a cache miss is
//                            confirmed by a live GET (so a TrainJob created right after its
//                            runtime is not denied while the watch catches up); every other kind
//                            (JobSet on runtimePatches updates, PriorityClass) by a live GET.
//   NewLiveClusterReader   — a GET to the apiserver per read; always "synced".
//   NewStaticClusterReader — objects from manifests (--offline-runtimes): development, goldens
//                            and benchmarks without a cluster.
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

// `client` must outlive the reader. The informers start at once and stop with the reader.
std::unique_ptr<ClusterReader> NewInformerClusterReader(kube::Client* client);
// `client` must outlive the reader.
std::unique_ptr<ClusterReader> NewLiveClusterReader(kube::Reader* client);
// Errors name an object the reader cannot key (no apiVersion, kind or name).
StatusOr<std::unique_ptr<ClusterReader>> NewStaticClusterReader(std::vector<json::Value> objects);

}  // namespace trainer::webhook
