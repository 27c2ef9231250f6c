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

// One kind a plugin needs watched: changes of such objects controlled by a TrainJob enqueue
// that TrainJob. The controller wires informers from this list (upstream ReconcilerBuilders).
struct Watch {
  GroupVersionKind gvk;
  bool owned_by_trainjob = true;
};

class WatchExtensionPlugin {
 public:
  virtual ~WatchExtensionPlugin() = default;
  virtual std::vector<Watch> Watches() const = 0;
};

class TrainJobStatusPlugin {
 public:
  virtual ~TrainJobStatusPlugin() = default;
  // The status the TrainJob should have, or nullopt to keep the current one.
  virtual StatusOr<std::optional<api::TrainJobStatus>> Status(const api::TrainJob& job) = 0;
};

}  // namespace trainer::framework
