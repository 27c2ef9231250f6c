// DecodedRuntimes (see decoded_runtimes.h).
#include "webhook/decoded_runtimes.h"

#include <mutex>
#include <utility>

#include "runtime/api/codec.h"

namespace trainer::webhook {
namespace {

std::string_view MetadataString(const json::Value& doc, std::string_view key) {
  const json::Value* meta = doc.Find("metadata");
  const json::Value* v = meta != nullptr ? meta->Find(key) : nullptr;
  return v != nullptr && v->IsString() ? std::string_view(v->AsString()) : std::string_view();
}

}  // namespace

StatusOr<SharedRuntime> DecodedRuntimes::Decode(const kube::GroupVersionKind& gvk,
                                                std::string_view ns, const json::Value& doc) {
  const std::string_view uid = MetadataString(doc, "uid");
  const std::string_view rv = MetadataString(doc, "resourceVersion");
  Key key{gvk.kind, std::string(ns), std::string(MetadataString(doc, "name"))};
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end() && it->second.uid == uid && it->second.resource_version == rv) {
      return it->second.runtime;
    }
  }
  StatusOr<api::TrainingRuntime> decoded = api::DecodeTrainingRuntime(doc);
  StatusOr<SharedRuntime> runtime =
      decoded.ok() ? StatusOr<SharedRuntime>(
                         std::make_shared<const api::TrainingRuntime>(std::move(decoded).value()))
                   : StatusOr<SharedRuntime>(decoded.status());
  std::unique_lock<std::shared_mutex> lock(mu_);
  ++decodes_;
  entries_.insert_or_assign(std::move(key), Entry{std::string(uid), std::string(rv), runtime});
  return runtime;
}

void DecodedRuntimes::Forget(const kube::GroupVersionKind& gvk, std::string_view ns,
                             const json::Value& doc) {
  Key key{gvk.kind, std::string(ns), std::string(MetadataString(doc, "name"))};
  std::unique_lock<std::shared_mutex> lock(mu_);
  entries_.erase(key);
}

size_t DecodedRuntimes::size() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return entries_.size();
}

int DecodedRuntimes::decodes() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return decodes_;
}

}  // namespace trainer::webhook
