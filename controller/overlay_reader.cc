// A thread-local overlay of just-applied objects in front of the informer caches.
#include "controller/overlay_reader.h"

#include <memory>
#include <utility>

#include "common/kube/meta.h"
#include "common/kube/types.h"

namespace trainer::controller {

namespace {

using Key =
    std::tuple<std::string, std::string, std::string, std::string>;  // apiVersion, kind, ns, name

struct ThreadOverlay {
  const OverlayReader* owner = nullptr;
  std::map<Key, json::Value> objects;
};
thread_local std::unique_ptr<ThreadOverlay> t_overlay;

}  // namespace

OverlayReader::Scope::Scope(OverlayReader& reader) : reader_(reader) {
  t_overlay = std::make_unique<ThreadOverlay>();
  t_overlay->owner = &reader_;
}

OverlayReader::Scope::~Scope() { t_overlay.reset(); }

void OverlayReader::BeginWrite(const json::Value& object) {
  if (own_writes_ != nullptr) own_writes_->Begin(object);
}

void OverlayReader::EndWrite(const json::Value& object, const StatusOr<json::Value>& result) {
  if (own_writes_ != nullptr) own_writes_->Finish(object, result.ok() ? &*result : nullptr);
}

void OverlayReader::Remember(json::Value object) {
  if (t_overlay == nullptr || t_overlay->owner != this) {
    return;
  }
  if (shape_) shape_(object);
  kube::GroupVersionKind gvk = kube::GroupVersionKind::Of(object);
  Key key{gvk.ApiVersion(), gvk.kind, std::string(kube::Namespace(object)),
          std::string(kube::Name(object))};
  t_overlay->objects[key] = std::move(object);
}

StatusOr<json::Value> OverlayReader::Get(const kube::GroupVersionKind& gvk, std::string_view ns,
                                         std::string_view name) const {
  if (t_overlay != nullptr && t_overlay->owner == this) {
    Key key{gvk.ApiVersion(), gvk.kind, std::string(ns), std::string(name)};
    if (auto it = t_overlay->objects.find(key); it != t_overlay->objects.end()) {
      return it->second.Clone();
    }
  }
  return base_.Get(gvk, ns, name);
}

}  // namespace trainer::controller
