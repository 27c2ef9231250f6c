// The plugin extension points of the runtime pipeline, one abstract class per upstream
// interface (pkg/runtime/framework/interface.go, v2.3.0). A plugin derives from Plugin plus the
// points it implements; Framework (framework.h) sorts plugins into per-phase lists once.
//
//   class PlainML final : public Plugin, public EnforceMLPolicyPlugin { ... };
//
// Info may be null where upstream allows a nil *runtime.Info (admission builds it best-effort);
// every phase then does nothing.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json/json.h"
#include "common/status/status.h"
#include "runtime/api/types.h"
#include "runtime/field/field.h"
#include "runtime/framework/config.h"
#include "runtime/framework/info.h"
#include "runtime/framework/reader.h"

namespace trainer::framework {

// What a plugin may use when it is constructed. The pointers outlive every plugin.
struct PluginContext {
  const Reader* reader = nullptr;
  // The current time as RFC 3339 (seconds), for conditions that need a timestamp.
  std::function<std::string()> now;
  Config config;
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view Name() const = 0;
};

// Applies the runtime's mlPolicy and the TrainJob's trainer settings to the PodSets. May
// rewrite the in-memory TrainJob (torchtune, flux commands) that later phases build from.
class EnforceMLPolicyPlugin {
 public:
  virtual ~EnforceMLPolicyPlugin() = default;
  virtual Status EnforceMLPolicy(Info* info, api::TrainJob& job) = 0;
};

class EnforcePodGroupPolicyPlugin {
 public:
  virtual ~EnforcePodGroupPolicyPlugin() = default;
  virtual Status EnforcePodGroupPolicy(Info* info, const api::TrainJob& job) = 0;
};

class PodNetworkPlugin {
 public:
  virtual ~PodNetworkPlugin() = default;
  virtual Status IdentifyPodNetwork(Info* info, const api::TrainJob& job) = 0;
};

class ComponentBuilderPlugin {
 public:
  virtual ~ComponentBuilderPlugin() = default;
  // Propagates PodSet counts into the template (parallelism/completions).
  virtual Status SyncParallelCount(Info* info) = 0;
  // The objects to apply for this TrainJob: full documents with apiVersion, kind and metadata.
  virtual StatusOr<std::vector<json::Value>> Build(Info* info, const api::TrainJob& job) = 0;
};

class CustomValidationPlugin {
 public:
  virtual ~CustomValidationPlugin() = default;
  // old_job is null on CREATE.
  virtual field::ValidationResult Validate(const Info* info, const api::TrainJob* old_job,
                                           const api::TrainJob& new_job) = 0;
};

// The controller's caches as a watch's mapping reads them (upstream: the manager's cache, listed
// with field indexes). Keys are "ns/name", or "name" for cluster-scoped kinds; only kinds some
// plugin watches (and TrainJobs and runtimes) are cached.
class Lister {
 public:
  virtual ~Lister() = default;
  // Keys of the cached objects of `gvk` in namespace `ns`.
  virtual std::vector<std::string> Keys(const GroupVersionKind& gvk, std::string_view ns) const = 0;
  // Keys of the cached objects of `gvk` whose index `index` (indexer.h, or a plugin's Index)
  // holds `value`; empty for an unknown index.
  virtual std::vector<std::string> KeysByIndex(const GroupVersionKind& gvk, std::string_view index,
                                               std::string_view value) const = 0;
  // The cached object, or null.
  virtual std::shared_ptr<const json::Value> Get(const GroupVersionKind& gvk,
                                                 std::string_view key) const = 0;
};

// The TrainJobs ("ns/name") an event of `obj` concerns. A plain function (not a closure) so the
// controller can tell two plugins' identical mappings apart from different ones.
using TrainJobsFor = std::vector<std::string> (*)(const json::Value& obj, const Lister& cache);

// One kind a plugin needs watched, as upstream's WatchExtensionPlugin.ReconcilerBuilders
// register them; the controller builds its informers and event handlers from these lists:
//   owned_by_trainjob  events of an object controlled by a TrainJob enqueue that TrainJob
//                      (upstream handler.EnqueueRequestForOwner, OnlyControllerOwner);
//   trainjobs_for      events of any object enqueue the TrainJobs it maps to (upstream's
//                      custom handlers, e.g. CoScheduling's LimitRange and RuntimeClass ones);
//   only_if_installed  the watch is registered only when this kind is served at start-up
//                      (upstream: "PodGroup CRDs must be installed in advance", else no watch).
struct Watch {
  GroupVersionKind gvk;
  bool owned_by_trainjob = true;
  TrainJobsFor trainjobs_for = nullptr;
  std::optional<GroupVersionKind> only_if_installed = std::nullopt;
  bool operator==(const Watch&) const = default;
};

// An index a watch's mapping lists by (upstream: client.FieldIndexer.IndexField in a plugin's
// New): the values an object of `gvk` is listed under in index `name`.
struct Index {
  GroupVersionKind gvk;
  std::string name;
  std::vector<std::string> (*values)(const json::Value& obj) = nullptr;
  bool operator==(const Index&) const = default;
};

class WatchExtensionPlugin {
 public:
  virtual ~WatchExtensionPlugin() = default;
  virtual std::vector<Watch> Watches() const = 0;
  // The indexes the mappings of Watches() list by.
  virtual std::vector<Index> Indexes() const { return {}; }
};

class TrainJobStatusPlugin {
 public:
  virtual ~TrainJobStatusPlugin() = default;
  // The status the TrainJob should have, or nullopt to keep the current one.
  virtual StatusOr<std::optional<api::TrainJobStatus>> Status(const api::TrainJob& job) = 0;
};

}  // namespace trainer::framework
