// Live and static ClusterReaders (see cluster_reader.h).
#include "webhook/cluster_reader.h"

#include <utility>

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
