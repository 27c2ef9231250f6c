// Live and static ClusterReaders (see cluster_reader.h).
#include "webhook/cluster_reader.h"

#include <utility>

#include "common/informer/informer.h"
#include "common/kube/rest_mapper.h"
#include "runtime/framework/map_reader.h"

namespace trainer::webhook {
namespace {

class LiveClusterReader final : public ClusterReader {
 public:
  explicit LiveClusterReader(kube::Reader* client) : client_(client) {}

  StatusOr<json::Value> Get(const framework::GroupVersionKind& gvk, std::string_view ns,
                            std::string_view name) const override {
    ASSIGN_OR_RETURN(const kube::ResourceMapping* m,
                     kube::MappingFor(kube::GroupVersionKind{gvk.group, gvk.version, gvk.kind}));
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
    runtimes_.Start();
    cluster_runtimes_.Start();
  }
  ~InformerClusterReader() override {
    runtimes_.Stop();
    cluster_runtimes_.Stop();
  }

  StatusOr<json::Value> Get(const framework::GroupVersionKind& gvk, std::string_view ns,
                            std::string_view name) const override {
    const informer::Informer* cache = nullptr;
    if (gvk == framework::TrainingRuntimeGVK()) {
      cache = &runtimes_;
    } else if (gvk == framework::ClusterTrainingRuntimeGVK()) {
      cache = &cluster_runtimes_;
      ns = "";
    }
    if (cache != nullptr && cache->HasSynced()) {
      if (informer::ObjectPtr obj = cache->store().Get(ns, name)) {
        return obj->Clone();
      }
    }
    return live_.Get(gvk, ns, name);
  }
  bool HasSynced() const override {
    return runtimes_.HasSynced() && cluster_runtimes_.HasSynced();
  }

 private:
  static informer::InformerOptions Options(const kube::GroupVersionResource& gvr) {
    informer::InformerOptions o;
    o.gvr = gvr;
    // Few objects, read on every TrainJob admission: share them instead of decoding each read.
    o.store_mode = informer::StoreMode::kShared;
    o.name = "webhook-" + gvr.resource;
    return o;
  }

  LiveClusterReader live_;
  informer::Informer runtimes_;
  informer::Informer cluster_runtimes_;
};

class StaticClusterReader final : public ClusterReader {
 public:
  StatusOr<json::Value> Get(const framework::GroupVersionKind& gvk, std::string_view ns,
                            std::string_view name) const override {
    return map_.Get(gvk, ns, name);
  }
  bool HasSynced() const override { return true; }
  framework::MapReader map_;
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
    RETURN_IF_ERROR(reader->map_.Add(std::move(o)));
  }
  return std::unique_ptr<ClusterReader>(std::move(reader));
}

}  // namespace trainer::webhook
