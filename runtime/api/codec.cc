// Decoders and encoders of TrainJob, TrainingRuntime and ClusterTrainingRuntime. See codec.h for
// the rules; field names follow upstream pkg/apis/trainer/v1alpha1/*_types.go json tags.
#include "runtime/api/codec.h"

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/quantity/quantity.h"
#include "runtime/api/decode_util.h"

namespace trainer::api {
namespace {

using decode_util::CopyObject;
using decode_util::Field;
using decode_util::Keep;
using decode_util::Kept;
using decode_util::Put;
using decode_util::ReadArray;
using decode_util::ReadBool;
using decode_util::ReadInt32;
using decode_util::ReadInt64;
using decode_util::ReadJson;
using decode_util::ReadObject;
using decode_util::ReadString;
using decode_util::ReadStringList;
using decode_util::ReadStringMap;
using decode_util::SubObject;
using decode_util::WrongType;
using json::Child;
using json::Index;

// ---- type meta and metadata ----

Status CheckTypeMeta(const json::Value& doc, std::string_view want_kind, bool required) {
  const json::Value* api_version = Field(doc, "apiVersion", "");
  const json::Value* kind = Field(doc, "kind", "");
  if (api_version == nullptr && required) return InvalidArgumentError("apiVersion: Required value");
  if (api_version != nullptr) {
    if (!api_version->IsString()) return WrongType("apiVersion", "string", *api_version);
    if (api_version->AsString() != kAPIVersion) {
      return InvalidArgumentError("apiVersion: expected \"" + std::string(kAPIVersion) +
                                  "\", got \"" + api_version->AsString() + "\"");
    }
  }
  if (kind == nullptr && required) return InvalidArgumentError("kind: Required value");
  if (kind != nullptr) {
    if (!kind->IsString()) return WrongType("kind", "string", *kind);
    if (kind->AsString() != want_kind) {
      return InvalidArgumentError("kind: expected \"" + std::string(want_kind) + "\", got \"" +
                                  kind->AsString() + "\"");
    }
  }
  return OkStatus();
}

Status DecodeObjectMeta(const json::Value& doc, ObjectMeta* out) {
  const json::Value* meta = nullptr;
  RETURN_IF_ERROR(decode_util::GetObject(doc, "metadata", "metadata", &meta));
  if (meta == nullptr) return OkStatus();
  const std::string path = "metadata";
  RETURN_IF_ERROR(ReadString(*meta, "name", path, &out->name));
  RETURN_IF_ERROR(ReadString(*meta, "namespace", path, &out->namespace_));
  RETURN_IF_ERROR(ReadString(*meta, "uid", path, &out->uid));
  RETURN_IF_ERROR(ReadString(*meta, "resourceVersion", path, &out->resource_version));
  RETURN_IF_ERROR(ReadInt64(*meta, "generation", path, &out->generation));
  RETURN_IF_ERROR(ReadString(*meta, "creationTimestamp", path, &out->creation_timestamp));
  RETURN_IF_ERROR(ReadString(*meta, "deletionTimestamp", path, &out->deletion_timestamp));
  RETURN_IF_ERROR(ReadStringMap(*meta, "labels", path, &out->labels));
  RETURN_IF_ERROR(ReadStringMap(*meta, "annotations", path, &out->annotations));
  std::optional<std::vector<std::string>> finalizers;
  RETURN_IF_ERROR(ReadStringList(*meta, "finalizers", path, &finalizers));
  if (finalizers) out->finalizers = std::move(*finalizers);
  return OkStatus();
}

json::Value EncodeObjectMeta(const ObjectMeta& m, const json::Value* raw) {
  json::Value out = CopyObject(raw);
  auto put_nonempty = [&out](std::string_view key, const std::string& v) {
    if (v.empty()) {
      out.Erase(key);
    } else {
      out.Set(key, json::Value(v));
    }
  };
  put_nonempty("name", m.name);
  put_nonempty("namespace", m.namespace_);
  put_nonempty("uid", m.uid);
  put_nonempty("resourceVersion", m.resource_version);
  if (m.generation != 0) {
    out.Set("generation", json::Value(m.generation));
  } else {
    out.Erase("generation");
  }
  put_nonempty("creationTimestamp", m.creation_timestamp);
  Put(out, "deletionTimestamp", m.deletion_timestamp);
  auto put_map = [&out](std::string_view key, const std::map<std::string, std::string>& m) {
    if (m.empty()) {
      out.Erase(key);
      return;
    }
    out.Set(key, json::Value::StringMap(m));
  };
  put_map("labels", m.labels);
  put_map("annotations", m.annotations);
  if (m.finalizers.empty()) {
    out.Erase("finalizers");
  } else {
    out.Set("finalizers", json::Value::StringArray(m.finalizers));
  }
  return out;
}

// ---- TrainJob spec ----

Status DecodeRuntimeRef(const json::Value& obj, const std::string& path, RuntimeRef* out) {
  RETURN_IF_ERROR(ReadString(obj, "name", path, &out->name));
  RETURN_IF_ERROR(ReadString(obj, "apiGroup", path, &out->api_group));
  RETURN_IF_ERROR(ReadString(obj, "kind", path, &out->kind));
  return OkStatus();
}

Status DecodeInitializerSource(const json::Value& obj, const std::string& path, Keep keep,
                               DatasetOrModelInitializer* out) {
  RETURN_IF_ERROR(ReadString(obj, "storageUri", path, &out->storage_uri));
  RETURN_IF_ERROR(ReadJson(obj, "env", path, json::Type::kArray, &out->env, keep));
  const json::Value* secret_ref = nullptr;
  RETURN_IF_ERROR(ReadObject(obj, "secretRef", path, &secret_ref));
  if (secret_ref != nullptr) {
    std::string name;
    RETURN_IF_ERROR(decode_util::GetString(*secret_ref, "name",
                                           Child(Child(path, "secretRef"), "name"), &name));
    out->secret_ref = std::move(name);
  }
  return OkStatus();
}

Status DecodeInitializer(const json::Value& obj, const std::string& path, Keep keep,
                         Initializer* out) {
  const json::Value* dataset = nullptr;
  RETURN_IF_ERROR(ReadObject(obj, "dataset", path, &dataset));
  if (dataset != nullptr) {
    out->dataset.emplace();
    RETURN_IF_ERROR(
        DecodeInitializerSource(*dataset, Child(path, "dataset"), keep, &*out->dataset));
  }
  const json::Value* model = nullptr;
  RETURN_IF_ERROR(ReadObject(obj, "model", path, &model));
  if (model != nullptr) {
    out->model.emplace();
    RETURN_IF_ERROR(DecodeInitializerSource(*model, Child(path, "model"), keep, &*out->model));
  }
  return OkStatus();
}

// Quantities of limits/requests are parsed and rewritten in canonical form, as a Go client
// decoding into corev1.ResourceRequirements and encoding again would.
Status DecodeResources(const json::Value& v, const std::string& path, Keep keep, json::Value* out) {
  if (!v.IsObject()) return WrongType(path, "object", v);
  json::Value resources = Kept(v, keep);
  for (std::string_view list : {"limits", "requests"}) {
    json::Value* quantities = resources.Find(list);
    if (quantities == nullptr || quantities->IsNull()) continue;
    if (!quantities->IsObject()) return WrongType(Child(path, list), "object", *quantities);
    for (auto& [name, value] : quantities->members()) {
      StatusOr<quantity::Quantity> q = quantity::Quantity::FromJson(value);
      if (!q.ok()) {
        return InvalidArgumentError(Child(Child(path, list), name) + ": " + q.status().message());
      }
      value = json::Value(q->ToString());
    }
  }
  const json::Value* claims = Field(resources, "claims", path);
  if (claims != nullptr && !claims->IsArray()) {
    return WrongType(Child(path, "claims"), "array", *claims);
  }
  *out = std::move(resources);
  return OkStatus();
}

Status DecodeTrainer(const json::Value& obj, const std::string& path, Keep keep, Trainer* out) {
  RETURN_IF_ERROR(ReadString(obj, "image", path, &out->image));
  RETURN_IF_ERROR(ReadStringList(obj, "command", path, &out->command));
  RETURN_IF_ERROR(ReadStringList(obj, "args", path, &out->args));
  RETURN_IF_ERROR(ReadJson(obj, "env", path, json::Type::kArray, &out->env, keep));
  RETURN_IF_ERROR(ReadInt32(obj, "numNodes", path, &out->num_nodes));
  if (const json::Value* resources = Field(obj, "resourcesPerNode", path)) {
    RETURN_IF_ERROR(DecodeResources(*resources, Child(path, "resourcesPerNode"), keep,
                                    &out->resources_per_node));
  }
  RETURN_IF_ERROR(ReadInt32(obj, "numProcPerNode", path, &out->num_proc_per_node));
  return OkStatus();
}

// metav1.Time accepts RFC 3339 ("2006-01-02T15:04:05Z07:00", optional fractional seconds).
bool IsRfc3339(std::string_view s) {
  auto digits = [&s](size_t pos, size_t n) {
    if (pos + n > s.size()) return false;
    for (size_t i = pos; i < pos + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
    }
    return true;
  };
  if (!digits(0, 4) || s.size() < 20 || s[4] != '-' || !digits(5, 2) || s[7] != '-' ||
      !digits(8, 2) || (s[10] != 'T' && s[10] != 't') || !digits(11, 2) || s[13] != ':' ||
      !digits(14, 2) || s[16] != ':' || !digits(17, 2)) {
    return false;
  }
  size_t pos = 19;
  if (s[pos] == '.') {
    size_t start = ++pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
    if (pos == start) return false;
  }
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) return pos + 1 == s.size();
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    return pos + 6 == s.size() && digits(pos + 1, 2) && s[pos + 3] == ':' && digits(pos + 4, 2);
  }
  return false;
}

Status ReadTime(const json::Value& obj, std::string_view key, const std::string& path,
                std::optional<std::string>* out) {
  RETURN_IF_ERROR(ReadString(obj, key, path, out));
  if (*out && !IsRfc3339(**out)) {
    return InvalidArgumentError(Child(path, key) + ": invalid RFC 3339 time \"" + **out + "\"");
  }
  return OkStatus();
}

// The patch checks below walk a patch with one path string: a level appends to it
// (AppendKey, AppendIndex, as json::Child and json::Index would write it) and a PathMark takes it
// off again when its scope ends. A string per level was most of what checking a patch cost.
class PathMark {
 public:
  explicit PathMark(std::string& path) : path_(path), size_(path.size()) {}
  ~PathMark() { path_.resize(size_); }
  PathMark(const PathMark&) = delete;
  PathMark& operator=(const PathMark&) = delete;

 private:
  std::string& path_;
  size_t size_;
};

void AppendKey(std::string& path, std::string_view key) {
  if (!path.empty()) path += '.';
  path += key;
}

void AppendIndex(std::string& path, size_t i) {
  path += '[';
  path += std::to_string(i);
  path += ']';
}

// Checks the container list of a PodSpecPatch: objects with a string name.
Status CheckContainerPatches(const json::Value& spec, std::string_view key, std::string& path) {
  const json::Value* list = nullptr;
  RETURN_IF_ERROR(ReadArray(spec, key, path, &list));
  if (list == nullptr) return OkStatus();
  PathMark mark(path);
  AppendKey(path, key);
  for (size_t i = 0; i < list->size(); ++i) {
    PathMark item(path);
    AppendIndex(path, i);
    const json::Value& c = list->at(i);
    if (!c.IsObject()) return WrongType(path, "object", c);
    std::string name;
    RETURN_IF_ERROR(ReadString(c, "name", path, &name));
    for (std::string_view l : {"env", "volumeMounts"}) {
      const json::Value* ignored = nullptr;
      RETURN_IF_ERROR(ReadArray(c, l, path, &ignored));
    }
  }
  return OkStatus();
}

// Checks one replicatedJobs entry of a patch down to its pod spec:
// template (JobTemplatePatch) -> spec (JobSpecPatch) -> template (PodTemplatePatch) -> spec.
Status CheckReplicatedJobPatch(const json::Value& job, std::string& path) {
  if (!job.IsObject()) return WrongType(path, "object", job);
  std::string name;
  RETURN_IF_ERROR(ReadString(job, "name", path, &name));
  PathMark mark(path);
  const json::Value* level = &job;
  for (std::string_view key : {"template", "spec", "template", "spec"}) {
    const json::Value* next = nullptr;
    RETURN_IF_ERROR(ReadObject(*level, key, path, &next));
    if (next == nullptr) return OkStatus();
    AppendKey(path, key);
    if (key == "template") {
      const json::Value* meta = nullptr;
      RETURN_IF_ERROR(ReadObject(*next, "metadata", path, &meta));
    }
    level = next;
  }
  RETURN_IF_ERROR(CheckContainerPatches(*level, "initContainers", path));
  return CheckContainerPatches(*level, "containers", path);
}

// Checks the typed skeleton of a TrainingRuntimeSpecPatch (the objects and lists a Go client
// would decode into structs); the Kubernetes types below the pod spec stay unchecked JSON.
// `path` names `trs`; it is appended to on the way down and restored.
Status CheckTrainingRuntimeSpecPatch(const json::Value& trs, std::string& path) {
  const json::Value* tmpl = nullptr;
  RETURN_IF_ERROR(ReadObject(trs, "template", path, &tmpl));
  if (tmpl == nullptr) return OkStatus();
  PathMark mark(path);
  AppendKey(path, "template");
  const json::Value* meta = nullptr;
  RETURN_IF_ERROR(ReadObject(*tmpl, "metadata", path, &meta));
  const json::Value* spec = nullptr;
  RETURN_IF_ERROR(ReadObject(*tmpl, "spec", path, &spec));
  if (spec == nullptr) return OkStatus();
  AppendKey(path, "spec");
  const json::Value* jobs = nullptr;
  RETURN_IF_ERROR(ReadArray(*spec, "replicatedJobs", path, &jobs));
  AppendKey(path, "replicatedJobs");
  for (size_t i = 0; jobs != nullptr && i < jobs->size(); ++i) {
    PathMark item(path);
    AppendIndex(path, i);
    RETURN_IF_ERROR(CheckReplicatedJobPatch(jobs->at(i), path));
  }
  return OkStatus();
}

Status DecodeRuntimePatch(const json::Value& obj, const std::string& path, Keep keep,
                          RuntimePatch* out) {
  if (!obj.IsObject()) return WrongType(path, "object", obj);
  RETURN_IF_ERROR(ReadString(obj, "manager", path, &out->manager));
  RETURN_IF_ERROR(ReadTime(obj, "time", path, &out->time));
  RETURN_IF_ERROR(ReadJson(obj, "trainingRuntimeSpec", path, json::Type::kObject,
                           &out->training_runtime_spec, keep));
  if (!out->training_runtime_spec.IsNull()) {
    std::string trs_path = Child(path, "trainingRuntimeSpec");
    trs_path.reserve(trs_path.size() + 128);  // the levels the checks append
    RETURN_IF_ERROR(CheckTrainingRuntimeSpecPatch(out->training_runtime_spec, trs_path));
  }
  return OkStatus();
}

// `keep`: how env, resources and the runtimePatches entries' trainingRuntimeSpec are kept.
Status DecodeTrainJobSpec(const json::Value& obj, const std::string& path, Keep keep,
                          TrainJobSpec* out) {
  const json::Value* sub = nullptr;
  RETURN_IF_ERROR(ReadObject(obj, "runtimeRef", path, &sub));
  if (sub != nullptr) {
    RETURN_IF_ERROR(DecodeRuntimeRef(*sub, Child(path, "runtimeRef"), &out->runtime_ref));
  }
  sub = nullptr;
  RETURN_IF_ERROR(ReadObject(obj, "initializer", path, &sub));
  if (sub != nullptr) {
    out->initializer.emplace();
    RETURN_IF_ERROR(DecodeInitializer(*sub, Child(path, "initializer"), keep, &*out->initializer));
  }
  sub = nullptr;
  RETURN_IF_ERROR(ReadObject(obj, "trainer", path, &sub));
  if (sub != nullptr) {
    out->trainer.emplace();
    RETURN_IF_ERROR(DecodeTrainer(*sub, Child(path, "trainer"), keep, &*out->trainer));
  }
  const json::Value* patches = nullptr;
  RETURN_IF_ERROR(ReadArray(obj, "runtimePatches", path, &patches));
  if (patches != nullptr) {
    for (size_t i = 0; i < patches->size(); ++i) {
      RuntimePatch patch;
      RETURN_IF_ERROR(DecodeRuntimePatch(patches->at(i), Index(Child(path, "runtimePatches"), i),
                                         keep, &patch));
      out->runtime_patches.push_back(std::move(patch));
    }
  }
  RETURN_IF_ERROR(ReadBool(obj, "suspend", path, &out->suspend));
  RETURN_IF_ERROR(ReadInt64(obj, "activeDeadlineSeconds", path, &out->active_deadline_seconds));
  RETURN_IF_ERROR(ReadString(obj, "managedBy", path, &out->managed_by));
  return OkStatus();
}

json::Value EncodeInitializerSource(const DatasetOrModelInitializer& in, const json::Value* raw) {
  json::Value out = CopyObject(raw);
  Put(out, "storageUri", in.storage_uri);
  Put(out, "env", in.env);
  if (in.secret_ref) {
    json::Value ref = CopyObject(SubObject(raw, "secretRef"));
    ref.Set("name", json::Value(*in.secret_ref));
    out.Set("secretRef", std::move(ref));
  } else {
    out.Erase("secretRef");
  }
  return out;
}

json::Value EncodeTrainer(const Trainer& t, const json::Value* raw) {
  json::Value out = CopyObject(raw);
  Put(out, "image", t.image);
  Put(out, "command", t.command);
  Put(out, "args", t.args);
  Put(out, "env", t.env);
  Put(out, "numNodes", t.num_nodes);
  Put(out, "resourcesPerNode", t.resources_per_node);
  Put(out, "numProcPerNode", t.num_proc_per_node);
  return out;
}

json::Value EncodeRuntimePatchOver(const RuntimePatch& p, const json::Value* raw) {
  json::Value out = CopyObject(raw);
  if (p.manager.empty()) {
    out.Erase("manager");
  } else {
    out.Set("manager", json::Value(p.manager));
  }
  Put(out, "time", p.time);
  Put(out, "trainingRuntimeSpec", p.training_runtime_spec);
  return out;
}

// The element of raw[list_key] whose `key` equals `value`, so that unknown fields of list items
// survive an encode even when the list was reordered.
const json::Value* RawItem(const json::Value* raw, std::string_view list_key, std::string_view key,
                           std::string_view value) {
  const json::Value* list = raw != nullptr ? raw->Find(list_key) : nullptr;
  if (list == nullptr || !list->IsArray()) return nullptr;
  const json::Value* item = json::FindByKey(*list, key, value);
  return item != nullptr && item->IsObject() ? item : nullptr;
}

json::Value EncodeTrainJobSpec(const TrainJobSpec& s, const json::Value* raw) {
  json::Value out = CopyObject(raw);
  {
    const json::Value* raw_ref = SubObject(raw, "runtimeRef");
    json::Value ref = CopyObject(raw_ref);
    if (s.runtime_ref.name.empty()) {
      ref.Erase("name");
    } else {
      ref.Set("name", json::Value(s.runtime_ref.name));
    }
    Put(ref, "apiGroup", s.runtime_ref.api_group);
    Put(ref, "kind", s.runtime_ref.kind);
    out.Set("runtimeRef", std::move(ref));
  }
  if (s.initializer) {
    const json::Value* raw_init = SubObject(raw, "initializer");
    json::Value init = CopyObject(raw_init);
    for (auto [key, src] : {std::pair{"dataset", &s.initializer->dataset},
                            std::pair{"model", &s.initializer->model}}) {
      if (*src) {
        init.Set(key, EncodeInitializerSource(**src, SubObject(raw_init, key)));
      } else {
        init.Erase(key);
      }
    }
    out.Set("initializer", std::move(init));
  } else {
    out.Erase("initializer");
  }
  if (s.trainer) {
    out.Set("trainer", EncodeTrainer(*s.trainer, SubObject(raw, "trainer")));
  } else {
    out.Erase("trainer");
  }
  if (s.runtime_patches.empty()) {
    out.Erase("runtimePatches");
  } else {
    json::Value list = json::Value::Array();
    for (const RuntimePatch& p : s.runtime_patches) {
      list.PushBack(
          EncodeRuntimePatchOver(p, RawItem(raw, "runtimePatches", "manager", p.manager)));
    }
    out.Set("runtimePatches", std::move(list));
  }
  Put(out, "suspend", s.suspend);
  Put(out, "activeDeadlineSeconds", s.active_deadline_seconds);
  Put(out, "managedBy", s.managed_by);
  return out;
}

// ---- TrainJob status ----

Status DecodeCondition(const json::Value& obj, const std::string& path, Condition* out) {
  if (!obj.IsObject()) return WrongType(path, "object", obj);
  RETURN_IF_ERROR(ReadString(obj, "type", path, &out->type));
  RETURN_IF_ERROR(ReadString(obj, "status", path, &out->status));
  RETURN_IF_ERROR(ReadString(obj, "reason", path, &out->reason));
  RETURN_IF_ERROR(ReadString(obj, "message", path, &out->message));
  RETURN_IF_ERROR(ReadString(obj, "lastTransitionTime", path, &out->last_transition_time));
  RETURN_IF_ERROR(ReadInt64(obj, "observedGeneration", path, &out->observed_generation));
  return OkStatus();
}

Status DecodeJobStatus(const json::Value& obj, const std::string& path, JobStatus* out) {
  if (!obj.IsObject()) return WrongType(path, "object", obj);
  RETURN_IF_ERROR(ReadString(obj, "name", path, &out->name));
  for (auto [key, field] :
       {std::pair{"ready", &out->ready}, std::pair{"succeeded", &out->succeeded},
        std::pair{"failed", &out->failed}, std::pair{"active", &out->active},
        std::pair{"suspended", &out->suspended}}) {
    std::optional<int32_t> v;
    RETURN_IF_ERROR(ReadInt32(obj, key, path, &v));
    *field = v.value_or(0);
  }
  return OkStatus();
}

json::Value EncodeCondition(const Condition& c, const json::Value* raw) {
  json::Value out = CopyObject(raw);
  out.Set("type", json::Value(c.type));
  out.Set("status", json::Value(c.status));
  Put(out, "observedGeneration", c.observed_generation);
  // metav1.Time encodes its zero value as null.
  out.Set("lastTransitionTime",
          c.last_transition_time.empty() ? json::Value() : json::Value(c.last_transition_time));
  out.Set("reason", json::Value(c.reason));
  out.Set("message", json::Value(c.message));
  return out;
}

json::Value EncodeJobStatus(const JobStatus& j, const json::Value* raw) {
  json::Value out = CopyObject(raw);
  out.Set("name", json::Value(j.name));
  out.Set("ready", json::Value(j.ready));
  out.Set("succeeded", json::Value(j.succeeded));
  out.Set("failed", json::Value(j.failed));
  out.Set("active", json::Value(j.active));
  out.Set("suspended", json::Value(j.suspended));
  return out;
}

json::Value EncodeStatusOver(const TrainJobStatus& s, const json::Value* raw) {
  json::Value out = CopyObject(raw);
  if (s.conditions.empty()) {
    out.Erase("conditions");
  } else {
    json::Value list = json::Value::Array();
    for (const Condition& c : s.conditions) {
      list.PushBack(EncodeCondition(c, RawItem(raw, "conditions", "type", c.type)));
    }
    out.Set("conditions", std::move(list));
  }
  if (s.jobs_status.empty()) {
    out.Erase("jobsStatus");
  } else {
    json::Value list = json::Value::Array();
    for (const JobStatus& j : s.jobs_status) {
      list.PushBack(EncodeJobStatus(j, RawItem(raw, "jobsStatus", "name", j.name)));
    }
    out.Set("jobsStatus", std::move(list));
  }
  Put(out, "trainerStatus", s.trainer_status);
  return out;
}

// ---- runtimes ----

Status DecodeMLPolicy(const json::Value& obj, const std::string& path, MLPolicy* out) {
  RETURN_IF_ERROR(ReadInt32(obj, "numNodes", path, &out->num_nodes));
  const json::Value* torch = nullptr;
  RETURN_IF_ERROR(ReadObject(obj, "torch", path, &torch));
  if (torch != nullptr) {
    out->torch.emplace();
    const std::string torch_path = Child(path, "torch");
    const json::Value* injection = nullptr;
    RETURN_IF_ERROR(ReadObject(*torch, "envInjection", torch_path, &injection));
    const json::Value* targets = nullptr;
    const std::string targets_path = Child(Child(torch_path, "envInjection"), "targets");
    if (injection != nullptr) {
      RETURN_IF_ERROR(decode_util::GetArray(*injection, "targets", targets_path, &targets));
    }
    for (size_t i = 0; targets != nullptr && i < targets->size(); ++i) {
      const std::string item_path = Index(targets_path, i);
      const json::Value& t = targets->at(i);
      if (!t.IsObject()) return WrongType(item_path, "object", t);
      EnvInjectionTarget target;
      RETURN_IF_ERROR(ReadString(t, "jobName", item_path, &target.job_name));
      std::optional<std::vector<std::string>> names;
      RETURN_IF_ERROR(ReadStringList(t, "containerNames", item_path, &names));
      if (names) target.container_names = std::move(*names);
      out->torch->env_injection_targets.push_back(std::move(target));
    }
  }
  const json::Value* mpi = nullptr;
  RETURN_IF_ERROR(ReadObject(obj, "mpi", path, &mpi));
  if (mpi != nullptr) {
    const std::string mpi_path = Child(path, "mpi");
    MPIMLPolicySource& m = out->mpi.emplace();
    RETURN_IF_ERROR(ReadInt32(*mpi, "numProcPerNode", mpi_path, &m.num_proc_per_node));
    RETURN_IF_ERROR(ReadString(*mpi, "mpiImplementation", mpi_path, &m.mpi_implementation));
    RETURN_IF_ERROR(ReadString(*mpi, "sshAuthMountPath", mpi_path, &m.ssh_auth_mount_path));
    RETURN_IF_ERROR(ReadBool(*mpi, "runLauncherAsNode", mpi_path, &m.run_launcher_as_node));
  }
  const json::Value* flag = nullptr;
  RETURN_IF_ERROR(ReadObject(obj, "jax", path, &flag));
  out->jax = flag != nullptr;
  flag = nullptr;
  RETURN_IF_ERROR(ReadObject(obj, "xgboost", path, &flag));
  out->xgboost = flag != nullptr;
  const json::Value* flux = nullptr;
  RETURN_IF_ERROR(ReadObject(obj, "flux", path, &flux));
  if (flux != nullptr) {
    RETURN_IF_ERROR(ReadInt32(*flux, "numProcPerNode", Child(path, "flux"),
                              &out->flux.emplace().num_proc_per_node));
  }
  return OkStatus();
}

Status DecodePodGroupPolicy(const json::Value& obj, const std::string& path, PodGroupPolicy* out) {
  const json::Value* cosched = nullptr;
  RETURN_IF_ERROR(ReadObject(obj, "coscheduling", path, &cosched));
  if (cosched != nullptr) {
    RETURN_IF_ERROR(ReadInt32(*cosched, "scheduleTimeoutSeconds", Child(path, "coscheduling"),
                              &out->coscheduling.emplace().schedule_timeout_seconds));
  }
  const json::Value* volcano = nullptr;
  RETURN_IF_ERROR(ReadObject(obj, "volcano", path, &volcano));
  if (volcano != nullptr) {
    const std::string volcano_path = Child(path, "volcano");
    VolcanoPodGroupPolicySource& v = out->volcano.emplace();
    const json::Value* topology = nullptr;
    RETURN_IF_ERROR(ReadObject(*volcano, "networkTopology", volcano_path, &topology));
    if (topology != nullptr) {
      const std::string topology_path = Child(volcano_path, "networkTopology");
      VolcanoNetworkTopology& t = v.network_topology.emplace();
      RETURN_IF_ERROR(ReadString(*topology, "mode", topology_path, &t.mode));
      RETURN_IF_ERROR(
          ReadInt64(*topology, "highestTierAllowed", topology_path, &t.highest_tier_allowed));
    }
  }
  return OkStatus();
}

Status DecodeRuntimeSpec(const json::Value& obj, const std::string& path,
                         TrainingRuntimeSpec* out) {
  const json::Value* sub = nullptr;
  RETURN_IF_ERROR(ReadObject(obj, "mlPolicy", path, &sub));
  if (sub != nullptr) {
    RETURN_IF_ERROR(DecodeMLPolicy(*sub, Child(path, "mlPolicy"), &out->ml_policy.emplace()));
  }
  sub = nullptr;
  RETURN_IF_ERROR(ReadObject(obj, "podGroupPolicy", path, &sub));
  if (sub != nullptr) {
    RETURN_IF_ERROR(DecodePodGroupPolicy(*sub, Child(path, "podGroupPolicy"),
                                         &out->pod_group_policy.emplace()));
  }
  RETURN_IF_ERROR(ReadJson(obj, "template", path, json::Type::kObject, &out->template_));
  if (!out->template_.IsNull()) {
    const std::string tmpl_path = Child(path, "template");
    const json::Value* spec = nullptr;
    RETURN_IF_ERROR(ReadObject(out->template_, "spec", tmpl_path, &spec));
    const json::Value* meta = nullptr;
    RETURN_IF_ERROR(ReadObject(out->template_, "metadata", tmpl_path, &meta));
    const json::Value* jobs = nullptr;
    if (spec != nullptr) {
      const std::string jobs_path = Child(Child(tmpl_path, "spec"), "replicatedJobs");
      RETURN_IF_ERROR(decode_util::GetArray(*spec, "replicatedJobs", jobs_path, &jobs));
      for (size_t i = 0; jobs != nullptr && i < jobs->size(); ++i) {
        const json::Value& job = jobs->at(i);
        if (!job.IsObject()) return WrongType(Index(jobs_path, i), "object", job);
        std::string name;
        RETURN_IF_ERROR(
            decode_util::GetString(job, "name", Child(Index(jobs_path, i), "name"), &name));
      }
    }
  }
  return OkStatus();
}

json::Value EncodeMLPolicy(const MLPolicy& p, const json::Value* raw) {
  json::Value out = CopyObject(raw);
  Put(out, "numNodes", p.num_nodes);
  if (p.torch) {
    const json::Value* raw_torch = SubObject(raw, "torch");
    json::Value torch = CopyObject(raw_torch);
    const json::Value* raw_injection = SubObject(raw_torch, "envInjection");
    if (!p.torch->env_injection_targets.empty()) {
      json::Value injection = CopyObject(raw_injection);
      json::Value targets = json::Value::Array();
      for (const EnvInjectionTarget& t : p.torch->env_injection_targets) {
        json::Value item = CopyObject(RawItem(raw_injection, "targets", "jobName", t.job_name));
        item.Set("jobName", json::Value(t.job_name));
        item.Set("containerNames", json::Value::StringArray(t.container_names));
        targets.PushBack(std::move(item));
      }
      injection.Set("targets", std::move(targets));
      torch.Set("envInjection", std::move(injection));
    } else if (raw_injection != nullptr) {
      json::Value injection = raw_injection->Clone();
      injection.Erase("targets");
      torch.Set("envInjection", std::move(injection));
    }
    out.Set("torch", std::move(torch));
  } else {
    out.Erase("torch");
  }
  if (p.mpi) {
    json::Value mpi = CopyObject(SubObject(raw, "mpi"));
    Put(mpi, "numProcPerNode", p.mpi->num_proc_per_node);
    Put(mpi, "mpiImplementation", p.mpi->mpi_implementation);
    Put(mpi, "sshAuthMountPath", p.mpi->ssh_auth_mount_path);
    Put(mpi, "runLauncherAsNode", p.mpi->run_launcher_as_node);
    out.Set("mpi", std::move(mpi));
  } else {
    out.Erase("mpi");
  }
  if (p.flux) {
    json::Value flux = CopyObject(SubObject(raw, "flux"));
    Put(flux, "numProcPerNode", p.flux->num_proc_per_node);
    out.Set("flux", std::move(flux));
  } else {
    out.Erase("flux");
  }
  for (auto [key, present] : {std::pair{"jax", p.jax}, std::pair{"xgboost", p.xgboost}}) {
    if (present) {
      out.Set(key, CopyObject(SubObject(raw, key)));
    } else {
      out.Erase(key);
    }
  }
  return out;
}

json::Value EncodePodGroupPolicy(const PodGroupPolicy& p, const json::Value* raw) {
  json::Value out = CopyObject(raw);
  if (p.coscheduling) {
    json::Value c = CopyObject(SubObject(raw, "coscheduling"));
    Put(c, "scheduleTimeoutSeconds", p.coscheduling->schedule_timeout_seconds);
    out.Set("coscheduling", std::move(c));
  } else {
    out.Erase("coscheduling");
  }
  if (p.volcano) {
    const json::Value* raw_volcano = SubObject(raw, "volcano");
    json::Value v = CopyObject(raw_volcano);
    if (p.volcano->network_topology) {
      json::Value t = CopyObject(SubObject(raw_volcano, "networkTopology"));
      Put(t, "mode", p.volcano->network_topology->mode);
      Put(t, "highestTierAllowed", p.volcano->network_topology->highest_tier_allowed);
      v.Set("networkTopology", std::move(t));
    } else {
      v.Erase("networkTopology");
    }
    out.Set("volcano", std::move(v));
  } else {
    out.Erase("volcano");
  }
  return out;
}

StatusOr<TrainingRuntime> DecodeRuntimeDocument(const json::Value& doc,
                                                std::string_view kind_hint) {
  if (!doc.IsObject()) {
    return InvalidArgumentError("expected a TrainingRuntime object, got " +
                                std::string(json::DescribeType(doc)));
  }
  TrainingRuntime rt;
  if (kind_hint.empty()) {
    const json::Value* kind = Field(doc, "kind", "");
    if (kind == nullptr) return InvalidArgumentError("kind: Required value");
    if (!kind->IsString()) return WrongType("kind", "string", *kind);
    if (kind->AsString() != kTrainingRuntimeKind &&
        kind->AsString() != kClusterTrainingRuntimeKind) {
      return InvalidArgumentError(
          "kind: expected \"TrainingRuntime\" or \"ClusterTrainingRuntime\", got \"" +
          kind->AsString() + "\"");
    }
    rt.kind = kind->AsString();
    RETURN_IF_ERROR(CheckTypeMeta(doc, rt.kind, /*required=*/true));
  } else {
    rt.kind = std::string(kind_hint);
    RETURN_IF_ERROR(CheckTypeMeta(doc, rt.kind, /*required=*/false));
  }
  RETURN_IF_ERROR(DecodeObjectMeta(doc, &rt.metadata));
  const json::Value* spec = nullptr;
  RETURN_IF_ERROR(decode_util::GetObject(doc, "spec", "spec", &spec));
  if (spec != nullptr) RETURN_IF_ERROR(DecodeRuntimeSpec(*spec, "spec", &rt.spec));
  rt.raw = doc.Clone();
  return rt;
}

}  // namespace

namespace {

// Everything but TrainJob::raw.
StatusOr<TrainJob> DecodeTrainJobFields(const json::Value& doc, Keep keep) {
  if (!doc.IsObject()) {
    return InvalidArgumentError("expected a TrainJob object, got " +
                                std::string(json::DescribeType(doc)));
  }
  RETURN_IF_ERROR(CheckTypeMeta(doc, kTrainJobKind, /*required=*/false));
  TrainJob job;
  RETURN_IF_ERROR(DecodeObjectMeta(doc, &job.metadata));
  const json::Value* spec = nullptr;
  RETURN_IF_ERROR(decode_util::GetObject(doc, "spec", "spec", &spec));
  if (spec != nullptr) RETURN_IF_ERROR(DecodeTrainJobSpec(*spec, "spec", keep, &job.spec));
  if (const json::Value* status = Field(doc, "status", "")) {
    ASSIGN_OR_RETURN(job.status, DecodeTrainJobStatus(*status));
  }
  return job;
}

}  // namespace

StatusOr<TrainJob> DecodeTrainJob(const json::Value& doc) {
  ASSIGN_OR_RETURN(TrainJob job, DecodeTrainJobFields(doc, Keep::kCopy));
  job.raw = doc.Clone();
  return job;
}

StatusOr<TrainJob> DecodeTrainJob(json::Value&& doc) {
  ASSIGN_OR_RETURN(TrainJob job, DecodeTrainJobFields(doc, Keep::kMove));
  job.raw = std::move(doc);
  return job;
}

StatusOr<TrainJobStatus> DecodeTrainJobStatus(const json::Value& status) {
  TrainJobStatus out;
  if (status.IsNull()) return out;
  const std::string path = "status";
  if (!status.IsObject()) return WrongType(path, "object", status);
  const json::Value* list = nullptr;
  RETURN_IF_ERROR(ReadArray(status, "conditions", path, &list));
  for (size_t i = 0; list != nullptr && i < list->size(); ++i) {
    Condition c;
    RETURN_IF_ERROR(DecodeCondition(list->at(i), Index(Child(path, "conditions"), i), &c));
    out.conditions.push_back(std::move(c));
  }
  RETURN_IF_ERROR(ReadArray(status, "jobsStatus", path, &list));
  for (size_t i = 0; list != nullptr && i < list->size(); ++i) {
    JobStatus j;
    RETURN_IF_ERROR(DecodeJobStatus(list->at(i), Index(Child(path, "jobsStatus"), i), &j));
    out.jobs_status.push_back(std::move(j));
  }
  RETURN_IF_ERROR(
      ReadJson(status, "trainerStatus", path, json::Type::kObject, &out.trainer_status));
  return out;
}

StatusOr<TrainingRuntime> DecodeTrainingRuntime(const json::Value& doc) {
  return DecodeRuntimeDocument(doc, "");
}

StatusOr<TrainingRuntime> DecodeTrainingRuntimeAs(const json::Value& doc, std::string_view kind) {
  if (kind != kTrainingRuntimeKind && kind != kClusterTrainingRuntimeKind) {
    return InvalidArgumentError("unsupported runtime kind \"" + std::string(kind) + "\"");
  }
  return DecodeRuntimeDocument(doc, kind);
}

json::Value EncodeTrainJob(const TrainJob& job) {
  const json::Value* raw = job.raw.IsObject() ? &job.raw : nullptr;
  json::Value out = CopyObject(raw);
  out.Set("apiVersion", json::Value(kAPIVersion));
  out.Set("kind", json::Value(kTrainJobKind));
  out.Set("metadata", EncodeObjectMeta(job.metadata, SubObject(raw, "metadata")));
  out.Set("spec", EncodeTrainJobSpec(job.spec, SubObject(raw, "spec")));
  json::Value status = EncodeStatusOver(job.status, SubObject(raw, "status"));
  if (status.empty()) {
    out.Erase("status");
  } else {
    out.Set("status", std::move(status));
  }
  return out;
}

json::Value EncodeTrainingRuntime(const TrainingRuntime& rt) {
  const json::Value* raw = rt.raw.IsObject() ? &rt.raw : nullptr;
  json::Value out = CopyObject(raw);
  out.Set("apiVersion", json::Value(kAPIVersion));
  out.Set("kind",
          json::Value(rt.kind.empty() ? std::string(kClusterTrainingRuntimeKind) : rt.kind));
  out.Set("metadata", EncodeObjectMeta(rt.metadata, SubObject(raw, "metadata")));
  const json::Value* raw_spec = SubObject(raw, "spec");
  json::Value spec = CopyObject(raw_spec);
  if (rt.spec.ml_policy) {
    spec.Set("mlPolicy", EncodeMLPolicy(*rt.spec.ml_policy, SubObject(raw_spec, "mlPolicy")));
  } else {
    spec.Erase("mlPolicy");
  }
  if (rt.spec.pod_group_policy) {
    spec.Set("podGroupPolicy", EncodePodGroupPolicy(*rt.spec.pod_group_policy,
                                                    SubObject(raw_spec, "podGroupPolicy")));
  } else {
    spec.Erase("podGroupPolicy");
  }
  Put(spec, "template", rt.spec.template_);
  out.Set("spec", std::move(spec));
  return out;
}

json::Value EncodeTrainJobStatus(const TrainJobStatus& status) {
  return EncodeStatusOver(status, nullptr);
}

json::Value EncodeRuntimePatch(const RuntimePatch& patch) {
  return EncodeRuntimePatchOver(patch, nullptr);
}

}  // namespace trainer::api
