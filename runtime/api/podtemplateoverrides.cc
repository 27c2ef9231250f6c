// spec.podTemplateOverrides (v2.1) -> spec.runtimePatches (v2.3). See podtemplateoverrides.h.
#include "runtime/api/podtemplateoverrides.h"

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "common/json/patch.h"
#include "runtime/api/codec.h"
#include "runtime/api/decode_util.h"

namespace trainer::api {
namespace {

using decode_util::Field;
using decode_util::ReadObject;
using decode_util::ReadString;
using decode_util::ReadStringMap;
using decode_util::WrongType;
using json::Child;
using json::Index;

constexpr char kRoot[] = "spec.podTemplateOverrides";

std::string UnknownField(std::string_view path) {
  return "unknown field \"" + std::string(path) + "\"";
}

Status Required(std::string_view path) {
  return InvalidArgumentError(std::string(path) + ": Required value");
}

// A copy as a Go client would re-encode it: no nulls, no patch directives ($patch, $retainKeys
// ...), which the v2.1 schema did not have and the apiserver would have pruned.
json::Value CleanCopy(const json::Value& v) {
  if (v.IsArray()) {
    json::Value out = json::Value::Array();
    for (const json::Value& e : v.elements()) out.PushBack(CleanCopy(e));
    return out;
  }
  if (!v.IsObject()) return v.Clone();
  json::Value out = json::Value::Object();
  for (const auto& [key, member] : v.members()) {
    if (member.IsNull() || (!key.empty() && key[0] == '$')) continue;
    out.Set(key, CleanCopy(member));
  }
  return out;
}

// Reads obj[key] as a list of objects; when `key_field` is set every item needs a non-empty
// string there, unique within the list (the CRD's list-map key).
Status ReadObjectList(const json::Value& obj, std::string_view key, const std::string& parent,
                      std::string_view key_field, const json::Value** out) {
  *out = nullptr;
  const json::Value* list = Field(obj, key, parent);
  if (list == nullptr) return OkStatus();
  const std::string path = Child(parent, key);
  if (!list->IsArray()) return WrongType(path, "array", *list);
  std::set<std::string> seen;
  for (size_t i = 0; i < list->size(); ++i) {
    const json::Value& item = list->at(i);
    const std::string item_path = Index(path, i);
    if (!item.IsObject()) return WrongType(item_path, "object", item);
    if (key_field.empty()) continue;
    std::optional<std::string> name;
    RETURN_IF_ERROR(ReadString(item, key_field, item_path, &name));
    if (!name || name->empty()) return Required(Child(item_path, key_field));
    if (!seen.insert(*name).second) {
      return InvalidArgumentError(item_path + ": Duplicate value: map[string]interface {}{\"" +
                                  std::string(key_field) + "\":\"" + *name + "\"}");
    }
  }
  *out = list;
  return OkStatus();
}

// One ContainerOverride {name, env, volumeMounts} -> ContainerPatch JSON.
StatusOr<json::Value> TranslateContainer(const json::Value& c, const std::string& path,
                                         std::vector<std::string>* warnings) {
  json::Value out = json::Value::Object();
  out.Set("name", c.Find("name")->Clone());
  const json::Value* env = nullptr;
  RETURN_IF_ERROR(ReadObjectList(c, "env", path, "name", &env));
  if (env != nullptr && !env->empty()) out.Set("env", CleanCopy(*env));
  const json::Value* mounts = nullptr;
  RETURN_IF_ERROR(ReadObjectList(c, "volumeMounts", path, "name", &mounts));
  if (mounts != nullptr && !mounts->empty()) out.Set("volumeMounts", CleanCopy(*mounts));
  for (const auto& [key, member] : c.members()) {
    if (key != "name" && key != "env" && key != "volumeMounts" && !member.IsNull()) {
      warnings->push_back(UnknownField(Child(path, key)));
    }
  }
  return out;
}

// PodTemplateSpecOverride -> PodSpecPatch JSON.
StatusOr<json::Value> TranslatePodSpec(const json::Value& spec, const std::string& path,
                                       std::vector<std::string>* warnings) {
  json::Value out = json::Value::Object();
  std::optional<std::string> service_account;
  RETURN_IF_ERROR(ReadString(spec, "serviceAccountName", path, &service_account));
  if (service_account) out.Set("serviceAccountName", json::Value(*service_account));
  std::map<std::string, std::string> node_selector;
  RETURN_IF_ERROR(ReadStringMap(spec, "nodeSelector", path, &node_selector));
  if (!node_selector.empty()) out.Set("nodeSelector", json::Value::StringMap(node_selector));
  const json::Value* affinity = nullptr;
  RETURN_IF_ERROR(ReadObject(spec, "affinity", path, &affinity));
  if (affinity != nullptr) out.Set("affinity", CleanCopy(*affinity));
  // Plain lists of objects, and the list-maps keyed by name, copied as they are.
  for (auto [key, key_field] :
       {std::pair{"tolerations", ""}, std::pair{"volumes", "name"},
        std::pair{"schedulingGates", "name"}, std::pair{"imagePullSecrets", ""}}) {
    const json::Value* list = nullptr;
    RETURN_IF_ERROR(ReadObjectList(spec, key, path, key_field, &list));
    if (list != nullptr && !list->empty()) out.Set(key, CleanCopy(*list));
  }
  for (std::string_view key : {"initContainers", "containers"}) {
    const json::Value* list = nullptr;
    RETURN_IF_ERROR(ReadObjectList(spec, key, path, "name", &list));
    if (list == nullptr || list->empty()) continue;
    json::Value containers = json::Value::Array();
    for (size_t i = 0; i < list->size(); ++i) {
      ASSIGN_OR_RETURN(json::Value c,
                       TranslateContainer(list->at(i), Index(Child(path, key), i), warnings));
      containers.PushBack(std::move(c));
    }
    out.Set(key, std::move(containers));
  }
  static const std::set<std::string, std::less<>> kKnown = {
      "serviceAccountName", "nodeSelector", "affinity",        "tolerations",     "volumes",
      "initContainers",     "containers",   "schedulingGates", "imagePullSecrets"};
  for (const auto& [key, member] : spec.members()) {
    if (!kKnown.contains(key) && !member.IsNull())
      warnings->push_back(UnknownField(Child(path, key)));
  }
  return out;
}

// One PodTemplateOverride's metadata and spec -> PodTemplatePatch JSON.
StatusOr<json::Value> TranslatePodTemplate(const json::Value& override_obj, const std::string& path,
                                           std::vector<std::string>* warnings) {
  json::Value out = json::Value::Object();
  const json::Value* meta = nullptr;
  RETURN_IF_ERROR(ReadObject(override_obj, "metadata", path, &meta));
  if (meta != nullptr) {
    const std::string meta_path = Child(path, "metadata");
    json::Value patch_meta = json::Value::Object();
    for (std::string_view key : {"labels", "annotations"}) {
      std::map<std::string, std::string> m;
      RETURN_IF_ERROR(ReadStringMap(*meta, key, meta_path, &m));
      if (!m.empty()) patch_meta.Set(key, json::Value::StringMap(m));
    }
    for (const auto& [key, member] : meta->members()) {
      if (key != "labels" && key != "annotations" && !member.IsNull()) {
        warnings->push_back(Child(meta_path, key) +
                            ": ignored; only labels and annotations of a pod template override "
                            "are applied");
      }
    }
    if (!patch_meta.empty()) out.Set("metadata", std::move(patch_meta));
  }
  const json::Value* spec = nullptr;
  RETURN_IF_ERROR(ReadObject(override_obj, "spec", path, &spec));
  if (spec != nullptr) {
    ASSIGN_OR_RETURN(json::Value pod_spec, TranslatePodSpec(*spec, Child(path, "spec"), warnings));
    out.Set("spec", std::move(pod_spec));
  }
  return out;
}

// The target job names of one override.
StatusOr<std::vector<std::string>> ReadTargetJobs(const json::Value& override_obj,
                                                  const std::string& path,
                                                  std::vector<std::string>* warnings) {
  const json::Value* targets = Field(override_obj, "targetJobs", path);
  const std::string targets_path = Child(path, "targetJobs");
  if (targets == nullptr) return Required(targets_path);
  if (!targets->IsArray()) return WrongType(targets_path, "array", *targets);
  std::vector<std::string> names;
  for (size_t j = 0; j < targets->size(); ++j) {
    const std::string item_path = Index(targets_path, j);
    const json::Value& t = targets->at(j);
    if (!t.IsObject()) return WrongType(item_path, "object", t);
    std::optional<std::string> name;
    RETURN_IF_ERROR(ReadString(t, "name", item_path, &name));
    if (!name || name->empty()) return Required(Child(item_path, "name"));
    for (const auto& [key, member] : t.members()) {
      if (key != "name" && !member.IsNull())
        warnings->push_back(UnknownField(Child(item_path, key)));
    }
    names.push_back(std::move(*name));
  }
  return names;
}

size_t PatchIndex(const json::Value& trainjob_spec) {
  const json::Value* patches = trainjob_spec.Find("runtimePatches");
  if (patches == nullptr || !patches->IsArray()) return 0;
  for (size_t i = 0; i < patches->size(); ++i) {
    const json::Value* manager = patches->at(i).Find("manager");
    if (manager != nullptr && manager->IsString() &&
        manager->AsString() == kPodTemplateOverridesManager) {
      return i;
    }
  }
  return patches->size();
}

}  // namespace

StatusOr<TranslationResult> TranslatePodTemplateOverrides(const json::Value& trainjob_spec) {
  TranslationResult result;
  if (!trainjob_spec.IsObject()) return WrongType("spec", "object", trainjob_spec);
  const json::Value* overrides = nullptr;
  RETURN_IF_ERROR(decode_util::GetArray(trainjob_spec, "podTemplateOverrides", kRoot, &overrides));
  if (overrides == nullptr || overrides->empty()) return result;

  std::vector<std::string> dropped;
  std::vector<std::string> job_order;
  std::map<std::string, json::Value> pod_template_by_job;
  for (size_t i = 0; i < overrides->size(); ++i) {
    const std::string path = Index(kRoot, i);
    const json::Value& o = overrides->at(i);
    if (!o.IsObject()) return WrongType(path, "object", o);
    ASSIGN_OR_RETURN(std::vector<std::string> targets, ReadTargetJobs(o, path, &dropped));
    ASSIGN_OR_RETURN(json::Value pod_template, TranslatePodTemplate(o, path, &dropped));
    for (const auto& [key, member] : o.members()) {
      if (key != "targetJobs" && key != "metadata" && key != "spec" && !member.IsNull()) {
        dropped.push_back(UnknownField(Child(path, key)));
      }
    }
    for (const std::string& job : targets) {
      auto it = pod_template_by_job.find(job);
      if (it == pod_template_by_job.end()) {
        job_order.push_back(job);
        pod_template_by_job.emplace(job, pod_template.Clone());
        continue;
      }
      // Later overrides win: the combined patch applies like the two in sequence.
      Status merged = json::StrategicMerge(it->second, pod_template);
      if (!merged.ok()) return merged.WithContext(path);
    }
  }

  json::Value jobs = json::Value::Array();
  for (const std::string& job : job_order) {
    json::Value pod_template_holder = json::Value::Object();
    pod_template_holder.Set("template", std::move(pod_template_by_job[job]));
    json::Value job_template = json::Value::Object();
    job_template.Set("spec", std::move(pod_template_holder));
    json::Value entry = json::Value::Object();
    entry.Set("name", json::Value(job));
    entry.Set("template", std::move(job_template));
    jobs.PushBack(std::move(entry));
  }
  json::Value jobset_spec = json::Value::Object();
  jobset_spec.Set("replicatedJobs", std::move(jobs));
  json::Value tmpl = json::Value::Object();
  tmpl.Set("spec", std::move(jobset_spec));
  json::Value trs = json::Value::Object();
  trs.Set("template", std::move(tmpl));
  json::Value patch = json::Value::Object();
  patch.Set("manager", json::Value(kPodTemplateOverridesManager));
  patch.Set("trainingRuntimeSpec", std::move(trs));
  result.runtime_patches.PushBack(std::move(patch));

  result.index = PatchIndex(trainjob_spec);
  result.warnings.push_back(
      "spec.podTemplateOverrides is deprecated; it was translated into "
      "spec.runtimePatches[" +
      std::to_string(result.index) + "] (manager \"" + kPodTemplateOverridesManager + "\")");
  for (std::string& w : dropped) result.warnings.push_back(std::move(w));
  return result;
}

std::vector<std::string> ValidatePodTemplateOverrides(const json::Value& trainjob_spec,
                                                      const json::Value& runtime_template) {
  // Container and init container names of each replicatedJob of the runtime.
  std::map<std::string, std::set<std::string>> containers_by_job;
  const json::Value* jobs = runtime_template.IsObject() ? runtime_template.Find("spec") : nullptr;
  jobs = jobs != nullptr && jobs->IsObject() ? jobs->Find("replicatedJobs") : nullptr;
  for (size_t i = 0; jobs != nullptr && jobs->IsArray() && i < jobs->size(); ++i) {
    const json::Value& job = jobs->at(i);
    const json::Value* name = job.Find("name");
    if (name == nullptr || !name->IsString()) continue;
    std::set<std::string>& names = containers_by_job[name->AsString()];
    const json::Value* pod_spec = &job;
    for (std::string_view key : {"template", "spec", "template", "spec"}) {
      pod_spec = pod_spec->IsObject() ? pod_spec->Find(key) : nullptr;
      if (pod_spec == nullptr) break;
    }
    for (std::string_view list : {"initContainers", "containers"}) {
      const json::Value* cs =
          pod_spec != nullptr && pod_spec->IsObject() ? pod_spec->Find(list) : nullptr;
      for (size_t c = 0; cs != nullptr && cs->IsArray() && c < cs->size(); ++c) {
        const json::Value* cname = cs->at(c).Find("name");
        if (cname != nullptr && cname->IsString()) names.insert(cname->AsString());
      }
    }
  }

  std::vector<std::string> details;
  const json::Value* overrides =
      trainjob_spec.IsObject() ? trainjob_spec.Find("podTemplateOverrides") : nullptr;
  if (overrides == nullptr || !overrides->IsArray()) return details;
  const std::set<std::string> no_containers;
  for (const json::Value& o : overrides->elements()) {
    const json::Value* targets = o.IsObject() ? o.Find("targetJobs") : nullptr;
    const json::Value* spec = o.IsObject() ? o.Find("spec") : nullptr;
    for (size_t t = 0; targets != nullptr && targets->IsArray() && t < targets->size(); ++t) {
      const json::Value* target = targets->at(t).Find("name");
      if (target == nullptr || !target->IsString()) continue;
      const std::string& job = target->AsString();
      auto it = containers_by_job.find(job);
      if (it == containers_by_job.end()) {
        details.push_back("must not have targetJob that doesn't exist in the runtime job template");
      }
      const std::set<std::string>& containers =
          it == containers_by_job.end() ? no_containers : it->second;
      if (spec == nullptr || !spec->IsObject()) continue;
      for (std::string_view list : {"initContainers", "containers"}) {
        const json::Value* cs = spec->Find(list);
        for (size_t c = 0; cs != nullptr && cs->IsArray() && c < cs->size(); ++c) {
          const json::Value* cname = cs->at(c).Find("name");
          if (cname == nullptr || !cname->IsString()) continue;
          const std::string& name = cname->AsString();
          if (!containers.contains(name)) {
            details.push_back(std::string("must not have ") +
                              (list == "containers" ? "container" : "initContainer") +
                              " that doesn't exist in the runtime job " + job);
            continue;
          }
          const json::Value* env = cs->at(c).Find("env");
          if (list == "containers" && env != nullptr && env->IsArray() && !env->empty() &&
              (name == "dataset-initializer" || name == "model-initializer" || name == "node")) {
            details.push_back(
                "must not have envs for the dataset-initializer, model-initializer, node "
                "containers");
          }
        }
      }
    }
  }
  return details;
}

Status ApplyPodTemplateOverrides(TrainJob& job, std::vector<std::string>* warnings) {
  json::Value* raw_spec = job.raw.IsObject() ? job.raw.Find("spec") : nullptr;
  if (raw_spec == nullptr || !raw_spec->IsObject() || !raw_spec->Has("podTemplateOverrides")) {
    return OkStatus();
  }
  // Index against the typed patches, which are authoritative over raw.
  json::Value view = raw_spec->Clone();
  json::Value patches = json::Value::Array();
  for (const RuntimePatch& p : job.spec.runtime_patches) patches.PushBack(EncodeRuntimePatch(p));
  view.Set("runtimePatches", std::move(patches));
  ASSIGN_OR_RETURN(TranslationResult result, TranslatePodTemplateOverrides(view));
  if (!result.runtime_patches.empty()) {
    RuntimePatch patch;
    patch.manager = kPodTemplateOverridesManager;
    patch.training_runtime_spec = result.runtime_patches.at(0).Find("trainingRuntimeSpec")->Clone();
    if (result.index < job.spec.runtime_patches.size()) {
      job.spec.runtime_patches[result.index] = std::move(patch);
    } else {
      job.spec.runtime_patches.push_back(std::move(patch));
    }
  }
  raw_spec->Erase("podTemplateOverrides");
  if (warnings != nullptr) {
    for (std::string& w : result.warnings) warnings->push_back(std::move(w));
  }
  return OkStatus();
}

}  // namespace trainer::api
