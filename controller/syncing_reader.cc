// Reads from the apiserver for kinds whose caches have not synced yet (see syncing_reader.h).
#include "controller/syncing_reader.h"

namespace trainer::controller {

StatusOr<json::Value> SyncingReader::Get(const kube::GroupVersionKind& gvk, std::string_view ns,
                                         std::string_view name) const {
  auto it = sources_.find({gvk.group, gvk.kind});
  if (it == sources_.end() || it->second.synced()) return cache_.Get(gvk, ns, name);
  StatusOr<json::Value> live = it->second.get(ns, name);
  if (!live.ok()) {
    // The cache's NotFound text, whichever way the object was looked for.
    if (IsNotFound(live.status())) return NotFoundError(framework::NotFoundMessage(gvk, name));
    return live.status().WithContext("reading " + gvk.kind + " " + std::string(name) +
                                     " from the apiserver while its cache lists");
  }
  if (!live->Has("apiVersion")) live->Set("apiVersion", gvk.ApiVersion());
  if (!live->Has("kind")) live->Set("kind", gvk.kind);
  return live;
}

}  // namespace trainer::controller
