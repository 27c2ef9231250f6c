// CacheReader: the framework::Reader of the controller, answering Gets from informer caches
// (common/informer) by kind. A kind without an informer (a PodGroup flavour that is not
// installed) reads as NotFound, as the apiserver would answer for an absent object.
//
//   CacheReader reader;
//   reader.Add({"jobset.x-k8s.io", "v1alpha2", "JobSet"}, &jobsets.store());
//   StatusOr<json::Value> js = reader.Get(api::kJobSetGVK, "ns", "name");
#pragma once

#include <map>
#include <string>
#include <utility>

#include "common/informer/store.h"
#include "runtime/framework/reader.h"

namespace trainer::controller {

class CacheReader final : public framework::Reader {
 public:
  // Registers the cache of a kind (matched by group and kind; versions are one per group here).
  // Call before use; the store must outlive the reader.
  void Add(const kube::GroupVersionKind& gvk, const informer::Store* store) {
    stores_[{gvk.group, gvk.kind}] = store;
  }
  const informer::Store* StoreFor(std::string_view group, std::string_view kind) const {
    auto it = stores_.find({std::string(group), std::string(kind)});
    return it == stores_.end() ? nullptr : it->second;
  }

  StatusOr<json::Value> Get(const kube::GroupVersionKind& gvk, std::string_view ns,
                            std::string_view name) const override {
    const informer::Store* store = StoreFor(gvk.group, gvk.kind);
    std::optional<json::Value> obj =
        store != nullptr ? store->GetCopy(ns, name) : std::optional<json::Value>();
    if (!obj.has_value()) {
      return NotFoundError(framework::NotFoundMessage(gvk, name));
    }
    json::Value out = std::move(*obj);
    // Items of a list response may lack apiVersion/kind; the pipeline reads them.
    if (!out.Has("apiVersion")) out.Set("apiVersion", gvk.ApiVersion());
    if (!out.Has("kind")) out.Set("kind", gvk.kind);
    return out;
  }

 private:
  std::map<std::pair<std::string, std::string>, const informer::Store*> stores_;
};

}  // namespace trainer::controller
