// Live and static ClusterReaders (see cluster_reader.h).
#include "webhook/cluster_reader.h"

#include <map>
#include <tuple>
#include <utility>

#include "common/informer/informer.h"
#include "common/kube/rest_mapper.h"
#include "runtime/api/codec.h"
#include "runtime/api/kinds.h"
#include "runtime/framework/map_reader.h"
#include "webhook/decoded_runtimes.h"

namespace trainer::webhook {
namespace {

class LiveClusterReader final : public ClusterReader {
 public:
  explicit LiveClusterReader(kube::Reader* client) : client_(client) {}

  StatusOr<json::Value> Get(const kube::GroupVersionKind& gvk, std::string_view ns,
                            std::string_view name) const override {
    ASSIGN_OR_RETURN(const kube::ResourceMapping* m, kube::MappingFor(gvk));
    return client_->Get(m->gvr, m->namespaced ? ns : std::string_view(), name);
  }
  bool HasSynced() const override { return true; }

 private:
  kube::Reader* client_;
};

// Runtimes from informers; misses and other kinds through a live GET.
class InformerClusterReader final : public ClusterReader {
 public:
  explicit InformerClusterReader(kube::Client* client)
      : live_(client),
        runtimes_(*client, Options(kube::kTrainingRuntimes)),
        cluster_runtimes_(*client, Options(kube::kClusterTrainingRuntimes)) {
    // Decode each runtime version as it arrives, so admissions find it decoded.
    runtimes_.AddEventHandler(DecodeOnChange(api::kTrainingRuntimeGVK, true));
    cluster_runtimes_.AddEventHandler(DecodeOnChange(api::kClusterTrainingRuntimeGVK, false));
    runtimes_.Start();
    cluster_runtimes_.Start();
  }
  ~InformerClusterReader() override {
    runtimes_.Stop();
    cluster_runtimes_.Stop();
  }

  StatusOr<json::Value> Get(const kube::GroupVersionKind& gvk, std::string_view ns,
                            std::string_view name) const override {
    if (informer::ObjectPtr obj = Cached(gvk, ns, name)) {
      return obj->Clone();
    }
    return live_.Get(gvk, ns, name);
  }
  StatusOr<SharedRuntime> GetTrainingRuntime(const kube::GroupVersionKind& gvk, std::string_view ns,
                                             std::string_view name) const override {
    if (informer::ObjectPtr obj = Cached(gvk, ns, name)) {
      return decoded_.Decode(gvk, gvk == api::kTrainingRuntimeGVK ? ns : "", *obj);
    }
    // A miss is confirmed live and decoded per call, as it may be a runtime just created.
    return ClusterReader::GetTrainingRuntime(gvk, ns, name);
  }
  bool HasSynced() const override { return runtimes_.HasSynced() && cluster_runtimes_.HasSynced(); }

 private:
  static informer::InformerOptions Options(const kube::GroupVersionResource& gvr) {
    informer::InformerOptions o;
    o.gvr = gvr;
    // Few objects, read on every TrainJob admission: share them instead of decoding each read.
    o.store_mode = informer::StoreMode::kShared;
    o.name = "webhook-" + gvr.resource;
    return o;
  }

  // The runtime cache holding `gvk`'s objects, if any, once synced.
  informer::ObjectPtr Cached(const kube::GroupVersionKind& gvk, std::string_view ns,
                             std::string_view name) const {
    const informer::Informer* cache = nullptr;
    if (gvk == api::kTrainingRuntimeGVK) {
      cache = &runtimes_;
    } else if (gvk == api::kClusterTrainingRuntimeGVK) {
      cache = &cluster_runtimes_;
      ns = "";
    }
    if (cache == nullptr || !cache->HasSynced()) {
      return nullptr;
    }
    return cache->store().Get(ns, name);
  }

  informer::EventHandler DecodeOnChange(kube::GroupVersionKind gvk, bool namespaced) {
    auto ns_of = [namespaced](const json::Value& o) -> std::string {
      const json::Value* meta = o.Find("metadata");
      const json::Value* ns = meta != nullptr ? meta->Find("namespace") : nullptr;
      return namespaced && ns != nullptr && ns->IsString() ? ns->AsString() : "";
    };
    return {
        .on_add = [this, gvk,
                   ns_of](const json::Value& o) { (void)decoded_.Decode(gvk, ns_of(o), o); },
        .on_update = [this, gvk, ns_of](
                         const json::Value&,
                         const json::Value& o) { (void)decoded_.Decode(gvk, ns_of(o), o); },
        .on_delete = [this, gvk,
                      ns_of](const json::Value& o) { decoded_.Forget(gvk, ns_of(o), o); },
    };
  }

  LiveClusterReader live_;
  mutable DecodedRuntimes decoded_;  // before the informers: their handlers use it
  informer::Informer runtimes_;
  informer::Informer cluster_runtimes_;
};

class StaticClusterReader final : public ClusterReader {
 public:
  StatusOr<json::Value> Get(const kube::GroupVersionKind& gvk, std::string_view ns,
                            std::string_view name) const override {
    return map_.Get(gvk, ns, name);
  }
  StatusOr<SharedRuntime> GetTrainingRuntime(const kube::GroupVersionKind& gvk, std::string_view ns,
                                             std::string_view name) const override {
    auto it = decoded_.find(Key{gvk.kind, std::string(ns), std::string(name)});
    if (it != decoded_.end()) {
      return it->second;
    }
    return ClusterReader::GetTrainingRuntime(gvk, ns, name);  // NotFound, as Get
  }
  bool HasSynced() const override { return true; }

  // Objects never change: runtimes are decoded once, as they are added.
  Status Add(json::Value o) {
    for (const kube::GroupVersionKind& gvk :
         {api::kTrainingRuntimeGVK, api::kClusterTrainingRuntimeGVK}) {
      const json::Value* api_version = o.Find("apiVersion");
      const json::Value* kind = o.Find("kind");
      if (api_version == nullptr || kind == nullptr || !api_version->IsString() ||
          !kind->IsString() || api_version->AsString() != gvk.ApiVersion() ||
          kind->AsString() != gvk.kind) {
        continue;
      }
      const json::Value* meta = o.Find("metadata");
      const json::Value* ns = meta != nullptr ? meta->Find("namespace") : nullptr;
      const json::Value* name = meta != nullptr ? meta->Find("name") : nullptr;
      if (name == nullptr || !name->IsString()) {
        break;  // map_.Add names the error
      }
      StatusOr<api::TrainingRuntime> rt = api::DecodeTrainingRuntime(o);
      decoded_.insert_or_assign(
          Key{gvk.kind, ns != nullptr && ns->IsString() ? ns->AsString() : "", name->AsString()},
          rt.ok() ? StatusOr<SharedRuntime>(
                        std::make_shared<const api::TrainingRuntime>(std::move(rt).value()))
                  : StatusOr<SharedRuntime>(rt.status()));
    }
    return map_.Add(std::move(o));
  }

 private:
  using Key = std::tuple<std::string, std::string, std::string>;  // kind, namespace, name
  framework::MapReader map_;
  std::map<Key, StatusOr<SharedRuntime>> decoded_;
};

}  // namespace

std::unique_ptr<ClusterReader> NewInformerClusterReader(kube::Client* client) {
  return std::make_unique<InformerClusterReader>(client);
}

std::unique_ptr<ClusterReader> NewLiveClusterReader(kube::Reader* client) {
  return std::make_unique<LiveClusterReader>(client);
}

StatusOr<std::unique_ptr<ClusterReader>> NewStaticClusterReader(std::vector<json::Value> objects) {
  auto reader = std::make_unique<StaticClusterReader>();
  for (json::Value& o : objects) {
    RETURN_IF_ERROR(reader->Add(std::move(o)));
  }
  return std::unique_ptr<ClusterReader>(std::move(reader));
}

}  // namespace trainer::webhook
