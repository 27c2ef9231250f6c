// DecodedRuntimes: the webhook's decoded TrainingRuntimes and ClusterTrainingRuntimes, one per
// object version (metadata.uid + metadata.resourceVersion), shared immutably by every admission.
// Every TrainJob admission reads its runtime; decoding it (a pod template of a few hundred JSON
// nodes into api::TrainingRuntime) per request was a large share of the validation's cost,
// while runtimes change a few times a day. The informer reader fills it as its cache changes,
// and a read whose version is not (or no longer) the cached one decodes that version once.
//
//   DecodedRuntimes decoded;
//   StatusOr<std::shared_ptr<const api::TrainingRuntime>> rt =
//       decoded.Decode(api::kClusterTrainingRuntimeGVK, "", doc);
#pragma once

#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <tuple>

#include "common/json/json.h"
#include "common/status/status.h"
#include "runtime/api/kinds.h"
#include "runtime/api/types.h"
#include "runtime/framework/reader.h"

namespace trainer::webhook {

using SharedRuntime = std::shared_ptr<const api::TrainingRuntime>;

class DecodedRuntimes {
 public:
  // The decoded form of `doc`, a TrainingRuntime or ClusterTrainingRuntime document of kind
  // `gvk` in `ns` ("" for cluster runtimes): the cached one when its uid and resourceVersion are
  // `doc`'s, else `doc` decoded now (and cached, replacing an older version). A decode error is
  // api::DecodeTrainingRuntime's, cached the same way. Thread-safe.
  StatusOr<SharedRuntime> Decode(const kube::GroupVersionKind& gvk, std::string_view ns,
                                 const json::Value& doc);
  // Drops the entry of a deleted object (`doc` is its last state).
  void Forget(const kube::GroupVersionKind& gvk, std::string_view ns, const json::Value& doc);

  size_t size() const;
  // Decodes done so far (cache misses), for tests.
  int decodes() const;

 private:
  // kind, namespace, name.
  using Key = std::tuple<std::string, std::string, std::string>;
  struct Entry {
    std::string uid;
    std::string resource_version;
    StatusOr<SharedRuntime> runtime;
  };

  mutable std::shared_mutex mu_;
  std::map<Key, Entry, std::less<>> entries_;
  int decodes_ = 0;
};

}  // namespace trainer::webhook
