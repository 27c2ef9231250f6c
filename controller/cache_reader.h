// CacheReader: the controller's informer caches (common/informer) by kind, as the runtime
// library reads them: a framework::Reader for the pipeline's Gets and a framework::Lister for
// the plugins' watch mappings. A kind without an informer (a PodGroup flavour that is not
// installed) reads as NotFound, as the apiserver would answer for an absent object, and lists
// as empty.
//
//   CacheReader reader;
//   reader.Add({"jobset.x-k8s.io", "v1alpha2", "JobSet"}, &jobsets.store());
//   StatusOr<json::Value> js = reader.Get(api::kJobSetGVK, "ns", "name");
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/informer/store.h"
#include "runtime/framework/interface.h"
#include "runtime/framework/reader.h"

namespace trainer::controller {

class CacheReader final : public framework::Reader, public framework::Lister {
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

  // framework::Reader
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

  // framework::Lister
  std::vector<std::string> Keys(const kube::GroupVersionKind& gvk,
                                std::string_view ns) const override {
    const informer::Store* store = StoreFor(gvk.group, gvk.kind);
    return store != nullptr ? store->KeysInNamespace(ns) : std::vector<std::string>();
  }
  std::vector<std::string> KeysByIndex(const kube::GroupVersionKind& gvk, std::string_view index,
                                       std::string_view value) const override {
    const informer::Store* store = StoreFor(gvk.group, gvk.kind);
    return store != nullptr ? store->KeysByIndex(index, value) : std::vector<std::string>();
  }
  std::shared_ptr<const json::Value> Get(const kube::GroupVersionKind& gvk,
                                         std::string_view key) const override {
    const informer::Store* store = StoreFor(gvk.group, gvk.kind);
    return store != nullptr ? store->GetByKey(key) : nullptr;
  }

 private:
  std::map<std::pair<std::string, std::string>, const informer::Store*> stores_;
};

}  // namespace trainer::controller
