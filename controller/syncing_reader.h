// SyncingReader: the informer caches, except for a kind whose cache is still on its first list:
// those reads go to the apiserver. The controller serves live TrainJob events once the TrainJob
// and runtime caches have synced (manager.cc, Run); the owned kinds' lists (a JobSet, a snapshot
// ConfigMap, ... per TrainJob) take longer, and until one has ended, absence from its cache
// means nothing. A new TrainJob then costs a few GETs instead of waiting for every list.
//
//   SyncingReader reader(cache);
//   reader.Add(api::kJobSetGVK, {.synced = [&] { return jobsets.HasSynced(); },
//                                .get = [&](auto ns, auto name) { return client.Get(...); }});
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>

#include "runtime/framework/reader.h"

namespace trainer::controller {

class SyncingReader final : public framework::Reader {
 public:
  struct Source {
    std::function<bool()> synced;  // the kind's cache has had its first list
    // Reads one object from the apiserver, shaped as the cache keeps it.
    std::function<StatusOr<json::Value>(std::string_view ns, std::string_view name)> get;
  };

  explicit SyncingReader(const framework::Reader& cache) : cache_(cache) {}

  // Call before use (kinds are matched by group and kind, as in CacheReader).
  void Add(const kube::GroupVersionKind& gvk, Source source) {
    sources_[{gvk.group, gvk.kind}] = std::move(source);
  }

  StatusOr<json::Value> Get(const kube::GroupVersionKind& gvk, std::string_view ns,
                            std::string_view name) const override;

 private:
  const framework::Reader& cache_;
  std::map<std::pair<std::string, std::string>, Source> sources_;
};

}  // namespace trainer::controller
