// Runtime snapshot ConfigMap: read with checks, and build (upstream pkg/runtime/core/snapshot.go).
#include "runtime/core/snapshot.h"

#include <mutex>
#include <unordered_map>

#include "common/yaml/yaml.h"
#include "runtime/api/codec.h"
#include "runtime/api/kinds.h"
#include "runtime/framework/apply.h"
#include "runtime/framework/info.h"

namespace trainer::core {

std::string RuntimeSnapshotName(const api::TrainJob& job) {
  return job.metadata.name + kRuntimeSnapshotSuffix;
}

namespace {

// The uid of the controller ownerReference, or nullopt when there is none.
std::optional<std::string> ControllerUID(const json::Value& obj) {
  const json::Value* meta = obj.Find("metadata");
  const json::Value* refs = meta != nullptr ? meta->Find("ownerReferences") : nullptr;
  if (refs == nullptr || !refs->IsArray()) {
    return std::nullopt;
  }
  for (const json::Value& r : refs->elements()) {
    const json::Value* controller = r.Find("controller");
    if (controller != nullptr && controller->AsBool()) {
      return framework::StringField(r, "uid");
    }
  }
  return std::nullopt;
}

Status Invalid(std::string msg) {
  return FailedPreconditionError("invalid runtime snapshot: " + msg);
}

std::string GroupOf(const std::string& api_version) {
  size_t slash = api_version.find('/');
  return slash == std::string::npos ? "" : api_version.substr(0, slash);
}

}  // namespace

StatusOr<api::TrainingRuntime> GetRuntimeSnapshot(const framework::Reader& reader,
                                                  const api::TrainJob& job) {
  ASSIGN_OR_RETURN(json::Value cm, reader.Get(api::kConfigMapGVK, job.metadata.namespace_,
                                              RuntimeSnapshotName(job)));
  std::optional<std::string> owner = ControllerUID(cm);
  if (!owner || *owner != job.metadata.uid) {
    return Invalid("a snapshot configmap exists but is owned by another object");
  }
  const json::Value* data = cm.Find("data");
  const json::Value* text = data != nullptr ? data->Find(kRuntimeSnapshotDataKey) : nullptr;
  if (text == nullptr || !text->IsString()) {
    return Invalid("snapshot ConfigMap missing \"runtime\" data key");
  }
  StatusOr<json::Value> doc = yaml::ParseYaml(text->AsString());
  if (doc.ok() && !doc->IsObject()) {
    doc = InvalidArgumentError("the snapshot is not an object");
  }
  if (!doc.ok()) {
    return Invalid("unable to unmarshal the snapshot: " + doc.status().message());
  }
  const api::RuntimeRef& ref = job.spec.runtime_ref;
  std::string kind = framework::StringField(*doc, "kind");
  std::string group = GroupOf(framework::StringField(*doc, "apiVersion"));
  const json::Value* meta = doc->Find("metadata");
  std::string name = meta != nullptr ? framework::StringField(*meta, "name") : "";
  if ((ref.kind && *ref.kind != kind) || (ref.api_group && *ref.api_group != group) ||
      name != ref.name) {
    return Invalid(
        "the snapshot refers to the wrong runtime: expecting a runtime with name, api group and "
        "kind of \"" +
        ref.name + "\", \"" + ref.api_group.value_or("<any>") + "\", \"" +
        ref.kind.value_or("<any>") + "\" but found runtime with name, api group and kind of \"" +
        name + "\", \"" + group + "\", \"" + kind + "\"");
  }
  StatusOr<api::TrainingRuntime> runtime = api::DecodeTrainingRuntime(*doc);
  if (!runtime.ok()) {
    return Invalid("unable to unmarshal the snapshot: " + runtime.status().message());
  }
  return runtime;
}

namespace {

// The snapshot text of a runtime document. Every TrainJob of one runtime version freezes the
// same document, so the YAML is kept by the document's canonical JSON (a few entries: one per
// runtime version in use) rather than parsed and written again for each TrainJob.
std::string SnapshotYaml(const json::Value& runtime_object) {
  constexpr size_t kMaxEntries = 16;
  static std::mutex mu;
  static std::unordered_map<std::string, std::string> cache;  // canonical JSON -> YAML
  std::string canonical = json::WriteCanonical(runtime_object);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(canonical); it != cache.end()) return it->second;
  }
  // sigs.k8s.io/yaml sorts keys; the canonical JSON round trip does the same for us.
  StatusOr<json::Value> sorted = json::Parse(canonical);
  if (!sorted.ok()) return yaml::ToYaml(runtime_object);
  std::string yaml = yaml::ToYaml(*sorted);
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= kMaxEntries) cache.clear();
  cache.emplace(std::move(canonical), yaml);
  return yaml;
}

}  // namespace

json::Value NewRuntimeSnapshot(const api::TrainJob& job, const json::Value& runtime_object) {
  json::Value cm = framework::NewOwnedObject(api::kConfigMapGVK, RuntimeSnapshotName(job), job);
  cm["data"].Set(kRuntimeSnapshotDataKey, json::Value(SnapshotYaml(runtime_object)));
  return cm;
}

}  // namespace trainer::core
