// newRuntimeInfo, the resourcesPerNode merge and PodRequests.
#include "runtime/core/runtime_info.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "common/json/patch.h"
#include "common/quantity/quantity.h"
#include "runtime/framework/constants.h"

namespace trainer::core {

using framework::kAncestorTrainer;
using framework::kNode;

namespace {

void OverlayStrings(const json::Value* from, std::map<std::string, std::string>& into) {
  if (from == nullptr || !from->IsObject()) {
    return;
  }
  for (const auto& [k, v] : from->members()) {
    into[k] = v.IsString() ? v.AsString() : json::Write(v);
  }
}

const json::Value* Path(const json::Value& root, std::initializer_list<std::string_view> keys) {
  const json::Value* v = &root;
  for (std::string_view k : keys) {
    v = v->Find(k);
    if (v == nullptr || v->IsNull()) {
      return nullptr;
    }
  }
  return v;
}

bool HasNull(const json::Value& v) {
  if (v.IsNull()) {
    return true;
  }
  for (const auto& [k, child] : v.members()) {
    if (HasNull(child)) {
      return true;
    }
  }
  for (const json::Value& e : v.elements()) {
    if (HasNull(e)) {
      return true;
    }
  }
  return false;
}

// Upstream marshals patches from typed Go structs, where a null (nil pointer, omitempty) is not
// written: a null in a patch must not delete the runtime's value.
json::Value WithoutNulls(const json::Value& v) {
  if (v.IsObject()) {
    json::Value out = json::Value::Object();
    for (const auto& [k, child] : v.members()) {
      if (!child.IsNull()) {
        out.Set(k, WithoutNulls(child));
      }
    }
    return out;
  }
  if (v.IsArray()) {
    json::Value out = json::Value::Array();
    for (const json::Value& e : v.elements()) {
      out.PushBack(WithoutNulls(e));
    }
    return out;
  }
  return v.Clone();
}

// Applies every runtimePatch's template.spec, then restores the template's replicatedJob order
// (names the template lacks sort as position 0, as Go's map lookup default does).
Status MergeRuntimePatches(const api::TrainJob& job, json::Value& spec) {
  std::map<std::string, size_t> order;
  if (const json::Value* rjobs = spec.Find("replicatedJobs");
      rjobs != nullptr && rjobs->IsArray()) {
    for (size_t i = 0; i < rjobs->size(); ++i) {
      order.emplace(framework::StringField(rjobs->at(i), "name"), i);
    }
  }
  for (size_t i = 0; i < job.spec.runtime_patches.size(); ++i) {
    const json::Value* patch =
        Path(job.spec.runtime_patches[i].training_runtime_spec, {"template", "spec"});
    if (patch == nullptr) {
      continue;
    }
    // `spec` is a copy the caller drops on an error: no atomic merge needed.
    Status s = HasNull(*patch) ? json::StrategicMergeNonAtomic(spec, WithoutNulls(*patch))
                               : json::StrategicMergeNonAtomic(spec, *patch);
    if (!s.ok()) {
      return s.WithContext("applying spec.runtimePatches[" + std::to_string(i) + "]");
    }
  }
  json::Value* rjobs = spec.Find("replicatedJobs");
  if (rjobs != nullptr && rjobs->IsArray()) {
    auto key = [&order](const json::Value& r) {
      auto it = order.find(framework::StringField(r, "name"));
      return it == order.end() ? 0 : it->second;
    };
    std::stable_sort(
        rjobs->elements().begin(), rjobs->elements().end(),
        [&key](const json::Value& a, const json::Value& b) { return key(a) < key(b); });
  }
  return OkStatus();
}

bool RunLauncherAsNode(const std::optional<api::MLPolicy>& ml) {
  return ml && ml->mpi && ml->mpi->run_launcher_as_node.value_or(false);
}

// Whether a TrainJob's resourcesPerNode goes to this replicatedJob's `node` container: the
// trainer step under an mlPolicy, or MPI's `node` job when the launcher runs as a node.
bool TakesResourcesPerNode(std::string_view name, const std::optional<std::string>& ancestor,
                           const std::optional<api::MLPolicy>& ml) {
  return (ancestor == kAncestorTrainer && ml.has_value()) ||
         (RunLauncherAsNode(ml) && name == kNode);
}

void MergeTrainerResources(json::Value& pod_spec, const json::Value& resources_per_node) {
  json::Value* containers = pod_spec.Find("containers");
  if (containers == nullptr || !containers->IsArray()) {
    return;
  }
  for (json::Value& c : containers->elements()) {
    if (framework::StringField(c, "name") != kNode) {
      continue;
    }
    static const json::Value kNone{};  // braces: clang rejects a const default-initialized Value
    const json::Value* base = c.Find("resources");
    json::Value merged =
        MergeResourceRequirements(base != nullptr ? *base : kNone, resources_per_node);
    c.Set("resources", std::move(merged));
    return;
  }
}

std::vector<framework::Container> Containers(const json::Value& pod_spec, std::string_view key) {
  std::vector<framework::Container> out;
  const json::Value* list = pod_spec.Find(key);
  if (list != nullptr && list->IsArray()) {
    for (const json::Value& c : list->elements()) {
      out.push_back(framework::Container::FromJson(c));
    }
  }
  return out;
}

}  // namespace

json::Value MergeResourceRequirements(const json::Value& base, const json::Value& override_res) {
  json::Value out = json::Value::Object();
  for (std::string_view key : {"limits", "requests"}) {
    const json::Value* b = base.IsObject() ? base.Find(key) : nullptr;
    const json::Value* o = override_res.IsObject() ? override_res.Find(key) : nullptr;
    bool has_b = b != nullptr && b->IsObject();
    bool has_o = o != nullptr && o->IsObject();
    if (!has_b && !has_o) {
      continue;
    }
    json::Value merged = has_b ? b->Clone() : json::Value::Object();
    if (has_o) {
      for (const auto& [name, q] : o->members()) {
        if (q.IsNull()) {
          merged.Erase(name);
        } else {
          merged.Set(name, q.Clone());
        }
      }
    }
    out.Set(key, std::move(merged));
  }
  return out;
}

namespace {

using ResourceMap = std::map<std::string, quantity::Quantity>;

Status AddRequests(const json::Value& container, ResourceMap& into, std::string_view where) {
  const json::Value* requests = Path(container, {"resources", "requests"});
  if (requests == nullptr || !requests->IsObject()) {
    return OkStatus();
  }
  for (const auto& [name, q] : requests->members()) {
    StatusOr<quantity::Quantity> parsed = quantity::Quantity::FromJson(q);
    if (!parsed.ok()) {
      return parsed.status().WithContext(std::string(where) + ".resources.requests." + name);
    }
    auto it = into.find(name);
    if (it == into.end()) {
      into.emplace(name, *parsed);
    } else {
      it->second = it->second + *parsed;
    }
  }
  return OkStatus();
}

void AddAll(const ResourceMap& from, ResourceMap& into) {
  for (const auto& [name, q] : from) {
    auto it = into.find(name);
    if (it == into.end()) {
      into.emplace(name, q);
    } else {
      it->second = it->second + q;
    }
  }
}

void MaxAll(const ResourceMap& from, ResourceMap& into) {
  for (const auto& [name, q] : from) {
    auto it = into.find(name);
    if (it == into.end()) {
      into.emplace(name, q);
    } else if (it->second < q) {
      it->second = q;
    }
  }
}

}  // namespace

StatusOr<json::Value> PodRequests(const json::Value& pod_spec) {
  ResourceMap reqs;
  if (const json::Value* cs = pod_spec.Find("containers"); cs != nullptr && cs->IsArray()) {
    for (size_t i = 0; i < cs->size(); ++i) {
      RETURN_IF_ERROR(AddRequests(cs->at(i), reqs, "containers[" + std::to_string(i) + "]"));
    }
  }
  ResourceMap sidecars;
  ResourceMap init_max;
  if (const json::Value* ics = pod_spec.Find("initContainers"); ics != nullptr && ics->IsArray()) {
    for (size_t i = 0; i < ics->size(); ++i) {
      const json::Value& c = ics->at(i);
      ResourceMap own;
      RETURN_IF_ERROR(AddRequests(c, own, "initContainers[" + std::to_string(i) + "]"));
      if (framework::StringField(c, "restartPolicy") == "Always") {
        AddAll(own, reqs);
        AddAll(own, sidecars);
        MaxAll(sidecars, init_max);
      } else {
        AddAll(sidecars, own);
        MaxAll(own, init_max);
      }
    }
  }
  MaxAll(init_max, reqs);
  if (const json::Value* overhead = pod_spec.Find("overhead");
      overhead != nullptr && overhead->IsObject()) {
    json::Value fake = json::Value::Object();
    fake["resources"].Set("requests", overhead->Clone());
    RETURN_IF_ERROR(AddRequests(fake, reqs, "overhead"));
  }
  json::Value out = json::Value::Object();
  for (const auto& [name, q] : reqs) {
    out.Set(name, json::Value(q.ToString()));
  }
  return out;
}

namespace {

// NewRuntimeInfo; `takes_resources` (if set) says whether some pod set takes the TrainJob's
// resourcesPerNode (false when none does; left as is on an error).
StatusOr<framework::Info> NewInfo(const api::TrainJob& job, const json::Value& jobset_template,
                                  const std::optional<api::MLPolicy>& ml_policy,
                                  const std::optional<api::PodGroupPolicy>& pod_group_policy,
                                  bool* takes_resources) {
  bool any_takes_resources = false;
  framework::Info info;
  OverlayStrings(Path(jobset_template, {"metadata", "labels"}), info.labels);
  OverlayStrings(Path(jobset_template, {"metadata", "annotations"}), info.annotations);
  for (const api::RuntimePatch& patch : job.spec.runtime_patches) {
    const json::Value* meta = Path(patch.training_runtime_spec, {"template", "metadata"});
    if (meta != nullptr) {
      OverlayStrings(meta->Find("labels"), info.labels);
      OverlayStrings(meta->Find("annotations"), info.annotations);
    }
  }

  const json::Value* template_spec = Path(jobset_template, {"spec"});
  json::Value spec = template_spec != nullptr && template_spec->IsObject() ? template_spec->Clone()
                                                                           : json::Value::Object();
  RETURN_IF_ERROR(MergeRuntimePatches(job, spec));
  info.runtime_policy.ml_policy = ml_policy;
  info.runtime_policy.pod_group_policy = pod_group_policy;

  bool has_resources = job.spec.trainer && !job.spec.trainer->resources_per_node.IsNull();
  if (json::Value* rjobs = spec.Find("replicatedJobs"); rjobs != nullptr && rjobs->IsArray()) {
    for (json::Value& rjob : rjobs->elements()) {
      std::string name = framework::StringField(rjob, "name");
      const json::Value* parallelism = Path(rjob, {"template", "spec", "parallelism"});
      int64_t count = parallelism != nullptr && parallelism->IsNumber() ? parallelism->AsInt() : 1;
      std::optional<std::string> ancestor = framework::AncestorOf(rjob);
      if (ancestor == kAncestorTrainer && ml_policy) {
        count = ml_policy->num_nodes.value_or(1);
      }
      json::Value* pod_spec = framework::PodSpecOf(rjob);
      if (pod_spec != nullptr && TakesResourcesPerNode(name, ancestor, ml_policy)) {
        any_takes_resources = true;
        if (has_resources) {
          MergeTrainerResources(*pod_spec, job.spec.trainer->resources_per_node);
        }
      }
      framework::PodSet ps;
      ps.name = name;
      ps.ancestor = ancestor;
      ps.count = static_cast<int32_t>(std::max<int64_t>(count, 1));
      if (pod_spec != nullptr) {
        if (const json::Value* vols = pod_spec->Find("volumes");
            vols != nullptr && vols->IsArray()) {
          ps.volumes = vols->Clone();
        }
        ps.init_containers = Containers(*pod_spec, "initContainers");
        ps.containers = Containers(*pod_spec, "containers");
        StatusOr<json::Value> requests = PodRequests(*pod_spec);
        if (!requests.ok()) {
          return requests.status().WithContext("replicatedJob " + name);
        }
        ps.single_pod_requests = std::move(requests).value();
      }
      info.template_spec.pod_sets.push_back(std::move(ps));
    }
  }
  info.template_spec.jobset_spec = std::move(spec);
  if (takes_resources != nullptr) {
    *takes_resources = any_takes_resources;
  }
  return info;
}

}  // namespace

StatusOr<framework::Info> NewRuntimeInfo(
    const api::TrainJob& job, const json::Value& jobset_template,
    const std::optional<api::MLPolicy>& ml_policy,
    const std::optional<api::PodGroupPolicy>& pod_group_policy) {
  return NewInfo(job, jobset_template, ml_policy, pod_group_policy, nullptr);
}

std::optional<StatusOr<RuntimeInfoCache::SharedInfo>> RuntimeInfoCache::Shared(
    std::string_view kind, const api::TrainJob& job,
    const std::shared_ptr<const api::TrainingRuntime>& runtime) {
  if (!job.spec.runtime_patches.empty()) {
    return std::nullopt;
  }
  std::shared_ptr<const RuntimeOnly> shared = RuntimeOnlyOf(kind, runtime);
  const bool has_resources = job.spec.trainer && !job.spec.trainer->resources_per_node.IsNull();
  // A failed runtime-only Info says nothing of the TrainJob's: its resourcesPerNode may replace
  // the failing request.
  if (has_resources && (!shared->info.ok() || shared->takes_resources)) {
    return std::nullopt;
  }
  return shared->info;
}

RuntimeInfoCache::Entry* RuntimeInfoCache::EntryOfLocked(
    std::string_view kind, const std::shared_ptr<const api::TrainingRuntime>& runtime) {
  const api::ObjectMeta& meta = runtime->metadata;
  auto it = entries_.find(KeyView{kind, meta.namespace_, meta.name});
  if (it != entries_.end() && it->second.source.lock() == runtime && it->second.uid == meta.uid &&
      it->second.resource_version == meta.resource_version) {
    return &it->second;
  }
  return nullptr;
}

std::shared_ptr<const RuntimeInfoCache::RuntimeOnly> RuntimeInfoCache::RuntimeOnlyOf(
    std::string_view kind, const std::shared_ptr<const api::TrainingRuntime>& runtime) {
  const api::ObjectMeta& meta = runtime->metadata;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Entry* entry = EntryOfLocked(kind, runtime)) {
      return entry->runtime_only;
    }
  }
  const api::TrainingRuntimeSpec& spec = runtime->spec;
  bool takes_resources = true;
  StatusOr<framework::Info> info = NewInfo(api::TrainJob{}, spec.template_, spec.ml_policy,
                                           spec.pod_group_policy, &takes_resources);
  auto computed = std::make_shared<const RuntimeOnly>(RuntimeOnly{
      info.ok()
          ? StatusOr<SharedInfo>(std::make_shared<const framework::Info>(std::move(info).value()))
          : StatusOr<SharedInfo>(info.status()),
      takes_resources});
  std::lock_guard<std::mutex> lock(mu_);
  ++computed_;
  entries_.insert_or_assign(Key(kind, meta.namespace_, meta.name),
                            Entry{meta.uid, meta.resource_version, runtime, computed});
  return computed;
}

namespace {

// Whether a and b are the same JSON exactly: types (1 is not 1.0), values (bit for bit for
// doubles) and member order, so that NewRuntimeInfo cannot tell them apart. (json::Value's ==
// is looser: it ignores member order and compares numbers by value.)
bool Identical(const json::Value& a, const json::Value& b) {
  if (a.type() != b.type()) {
    return false;
  }
  switch (a.type()) {
    case json::Type::kNull:
      return true;
    case json::Type::kBool:
      return a.AsBool() == b.AsBool();
    case json::Type::kInt:
      return a.AsInt() == b.AsInt();
    case json::Type::kDouble: {
      const double x = a.AsDouble(), y = b.AsDouble();
      return std::memcmp(&x, &y, sizeof(x)) == 0;
    }
    case json::Type::kString:
      return a.AsString() == b.AsString();
    case json::Type::kArray:
      return std::equal(a.elements().begin(), a.elements().end(), b.elements().begin(),
                        b.elements().end(), Identical);
    case json::Type::kObject:
      return std::equal(a.members().begin(), a.members().end(), b.members().begin(),
                        b.members().end(), [](const json::Member& x, const json::Member& y) {
                          return x.first == y.first && Identical(x.second, y.second);
                        });
  }
  return false;
}

const json::Value& ResourcesPerNode(const api::TrainJob& job) {
  static const json::Value kNone{};
  return job.spec.trainer ? job.spec.trainer->resources_per_node : kNone;
}

}  // namespace

bool RuntimeInfoCache::SameInputs(const JobVariant& v, const api::TrainJob& job) {
  const std::vector<api::RuntimePatch>& patches = job.spec.runtime_patches;
  return Identical(v.resources, ResourcesPerNode(job)) && v.patches.size() == patches.size() &&
         std::equal(patches.begin(), patches.end(), v.patches.begin(),
                    [](const api::RuntimePatch& p, const json::Value& seen) {
                      return Identical(p.training_runtime_spec, seen);
                    });
}

StatusOr<RuntimeInfoCache::SharedInfo> RuntimeInfoCache::ForJob(
    std::string_view kind, const api::TrainJob& job,
    const std::shared_ptr<const api::TrainingRuntime>& runtime) {
  if (std::optional<StatusOr<SharedInfo>> shared = Shared(kind, job, runtime)) {
    return *std::move(shared);
  }
  RuntimeOnlyOf(kind, runtime);  // the entry of this version, where the job's Info is kept
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Entry* entry = EntryOfLocked(kind, runtime)) {
      for (const std::shared_ptr<const JobVariant>& v : entry->variants) {
        if (SameInputs(*v, job)) {
          return v->info;
        }
      }
    }
  }
  const api::TrainingRuntimeSpec& spec = runtime->spec;
  StatusOr<framework::Info> info =
      NewRuntimeInfo(job, spec.template_, spec.ml_policy, spec.pod_group_policy);
  std::vector<json::Value> patches;
  for (const api::RuntimePatch& p : job.spec.runtime_patches) {
    patches.push_back(p.training_runtime_spec.Clone());
  }
  auto variant = std::make_shared<const JobVariant>(JobVariant{
      std::move(patches), ResourcesPerNode(job).Clone(),
      info.ok()
          ? StatusOr<SharedInfo>(std::make_shared<const framework::Info>(std::move(info).value()))
          : StatusOr<SharedInfo>(info.status())});
  std::lock_guard<std::mutex> lock(mu_);
  ++computed_;
  // Kept only on the entry of this very runtime version (another version may have replaced it
  // meanwhile: then this Info is answered once and dropped).
  if (Entry* entry = EntryOfLocked(kind, runtime)) {
    if (entry->variants.size() >= kJobVariants) {
      entry->variants.erase(entry->variants.begin());
    }
    entry->variants.push_back(variant);
  }
  return variant->info;
}

int RuntimeInfoCache::computed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return computed_;
}

}  // namespace trainer::core
