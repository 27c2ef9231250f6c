// JobSet plugin phases (upstream plugins/jobset/jobset.go).
#include "runtime/plugins/jobset/jobset.h"

#include <map>
#include <set>

#include "runtime/api/conditions.h"
#include "runtime/api/kinds.h"
#include "runtime/framework/apply.h"
#include "runtime/framework/constants.h"
#include "runtime/framework/go_repr.h"
#include "runtime/framework/trainjob.h"
#include "runtime/plugins/jobset/builder.h"

namespace trainer::plugins {

using framework::kDatasetInitializer;
using framework::kModelInitializer;
using framework::kNode;

StatusOr<std::unique_ptr<framework::Plugin>> JobSet::New(const framework::PluginContext& ctx) {
  if (ctx.reader == nullptr) {
    return InvalidArgumentError("jobset plugin: a reader is required");
  }
  return std::unique_ptr<framework::Plugin>(new JobSet(ctx));
}

namespace {

json::Value* ReplicatedJobs(framework::Info& info) {
  json::Value* rjobs = info.template_spec.jobset_spec.Find("replicatedJobs");
  return rjobs != nullptr && rjobs->IsArray() ? rjobs : nullptr;
}

const json::Value* ReplicatedJobs(const framework::Info& info) {
  return ReplicatedJobs(const_cast<framework::Info&>(info));
}

json::Value* ListOf(json::Value* obj, std::string_view key) {
  json::Value* v = obj != nullptr ? obj->Find(key) : nullptr;
  return v != nullptr && v->IsArray() ? v : nullptr;
}

bool IsTrue(const std::optional<bool>& b) { return b.value_or(false); }

}  // namespace

Status JobSet::IdentifyPodNetwork(framework::Info* info, const api::TrainJob& job) {
  if (info == nullptr) {
    return OkStatus();
  }
  json::Value* rjobs = ReplicatedJobs(*info);
  if (rjobs == nullptr) {
    return OkStatus();
  }
  std::string subdomain = job.metadata.name;
  if (const json::Value* net = info->template_spec.jobset_spec.Find("network")) {
    if (const json::Value* sd = net->Find("subdomain"); sd != nullptr && sd->IsString()) {
      subdomain = sd->AsString();
    }
  }
  auto& pod_sets = info->template_spec.pod_sets;
  for (size_t i = 0; i < rjobs->size() && i < pod_sets.size(); ++i) {
    const json::Value* replicas = rjobs->at(i).Find("replicas");
    pod_sets[i].network = framework::PodNetwork{job.metadata.name, subdomain,
                                                replicas != nullptr && replicas->IsNumber()
                                                    ? replicas->AsInt()
                                                    : framework::kDefaultJobReplicas};
  }
  return OkStatus();
}

Status JobSet::SyncParallelCount(framework::Info* info) {
  if (info == nullptr) {
    return OkStatus();
  }
  json::Value* rjobs = ReplicatedJobs(*info);
  if (rjobs == nullptr) {
    return OkStatus();
  }
  for (const framework::PodSet& ps : info->template_spec.pod_sets) {
    if (!ps.count) {
      continue;
    }
    for (json::Value& rjob : rjobs->elements()) {
      if (framework::StringField(rjob, "name") == ps.name) {
        json::Value& spec = rjob["template"]["spec"];
        spec.Set("parallelism", json::Value(*ps.count));
        spec.Set("completions", json::Value(*ps.count));
        break;
      }
    }
  }
  return OkStatus();
}

namespace {

// Writes a PodSet's containers back into the template containers of the same index.
void SyncContainers(const std::vector<framework::Container>& from, json::Value& pod_spec,
                    std::string_view key, bool append_missing) {
  json::Value& list = pod_spec[key];
  if (!list.IsArray()) {
    if (from.empty()) {
      pod_spec.Erase(key);
      return;
    }
    list = json::Value::Array();
  }
  for (size_t k = 0; k < from.size(); ++k) {
    if (k >= list.size()) {
      if (!append_missing) {
        break;
      }
      json::Value slot = json::Value::Object();
      slot.Set("name", json::Value(from[k].name));
      list.PushBack(std::move(slot));
    }
    const framework::Container& c = from[k];
    json::Value& target = list.at(k);
    if (!c.command.empty()) {
      target.Set("command", json::Value::StringArray(c.command));
    }
    if (!c.image.empty()) {
      target.Set("image", json::Value(c.image));
    }
    if (!c.env.empty()) {
      framework::UpsertEnvVars(target["env"], c.env);
    }
    if (!c.ports.empty()) {
      framework::UpsertPorts(target["ports"], c.ports);
    }
    if (!c.volume_mounts.empty()) {
      framework::UpsertVolumeMounts(target["volumeMounts"], c.volume_mounts);
    }
  }
}

}  // namespace

StatusOr<std::vector<json::Value>> JobSet::Build(framework::Info* info, const api::TrainJob& job) {
  if (info == nullptr) {
    return InvalidArgumentError("runtime info or object is missing");
  }
  StatusOr<json::Value> old =
      reader_->Get(api::kJobSetGVK, job.metadata.namespace_, job.metadata.name);
  if (!old.ok() && !IsNotFound(old.status())) {
    return old.status();
  }
  if (old.ok()) {
    const json::Value* spec = old->Find("spec");
    const json::Value* suspend = spec != nullptr ? spec->Find("suspend") : nullptr;
    bool old_suspended = suspend != nullptr && suspend->AsBool();
    if (!IsTrue(job.spec.suspend) && !old_suspended) {
      return std::vector<json::Value>();
    }
  }
  if (!info->HasJobSetSpec()) {
    return std::vector<json::Value>();
  }
  json::Value spec = info->template_spec.jobset_spec.Clone();
  json::Value* rjobs = ListOf(&spec, "replicatedJobs");
  size_t num_rjobs = rjobs != nullptr ? rjobs->size() : 0;
  const auto& pod_sets = info->template_spec.pod_sets;
  if (num_rjobs < pod_sets.size()) {
    return InvalidArgumentError("runtime template has " + std::to_string(num_rjobs) +
                                " replicatedJobs but runtime info has " +
                                std::to_string(pod_sets.size()) + " podSets");
  }
  for (size_t i = 0; i < pod_sets.size(); ++i) {
    const framework::PodSet& ps = pod_sets[i];
    json::Value& pod_spec = rjobs->at(i)["template"]["spec"]["template"]["spec"];
    if (!ps.volumes.empty()) {
      framework::UpsertVolumes(pod_spec["volumes"], ps.volumes);
    }
    SyncContainers(ps.containers, pod_spec, "containers", /*append_missing=*/false);
    if (!ps.init_containers.empty()) {
      SyncContainers(ps.init_containers, pod_spec, "initContainers", /*append_missing=*/true);
    }
  }

  json::Value jobset = framework::NewOwnedObject(api::kJobSetGVK, job.metadata.name, job,
                                                 info->labels, info->annotations);
  jobset.Set("spec", std::move(spec));

  std::vector<json::Value> out;
  out.push_back(jobset::Builder(std::move(jobset))
                    .Initializer(job)
                    .Trainer(*info, job)
                    .PodLabels(info->scheduler.pod_labels)
                    .PodAnnotations(info->scheduler.pod_annotations)
                    .Suspend(job.spec.suspend)
                    .Build());
  return out;
}

namespace {

const field::Path& RuntimeRefPath() {
  static const field::Path p = field::NewPath("spec", "runtimeRef");
  return p;
}
const field::Path& RuntimePatchesPath() {
  static const field::Path p = field::NewPath("spec", "runtimePatches");
  return p;
}

// replicatedJob name -> names of its containers and init containers.
std::map<std::string, std::set<std::string>> ContainerNamesByJob(const framework::Info& info) {
  std::map<std::string, std::set<std::string>> out;
  const json::Value* rjobs = ReplicatedJobs(info);
  if (rjobs == nullptr) {
    return out;
  }
  for (const json::Value& rjob : rjobs->elements()) {
    std::set<std::string>& names = out[framework::StringField(rjob, "name")];
    const json::Value* pod = framework::PodSpecOf(rjob);
    for (std::string_view key : {"initContainers", "containers"}) {
      const json::Value* list = pod != nullptr ? pod->Find(key) : nullptr;
      if (list != nullptr && list->IsArray()) {
        for (const json::Value& c : list->elements()) {
          names.insert(framework::StringField(c, "name"));
        }
      }
    }
  }
  return out;
}

bool HasInitializerMount(const framework::Info& info, std::string_view job_and_container) {
  const json::Value* rjobs = ReplicatedJobs(info);
  for (const json::Value& rjob : rjobs->elements()) {
    if (framework::StringField(rjob, "name") != job_and_container) {
      continue;
    }
    const json::Value* containers = framework::ContainersOf(rjob);
    if (containers == nullptr) {
      continue;
    }
    for (const json::Value& c : containers->elements()) {
      if (framework::StringField(c, "name") != job_and_container) {
        continue;
      }
      const json::Value* mounts = c.Find("volumeMounts");
      if (mounts == nullptr || !mounts->IsArray()) {
        continue;
      }
      for (const json::Value& m : mounts->elements()) {
        if (framework::StringField(m, "name") == framework::kVolumeNameInitializer) {
          return true;
        }
      }
    }
  }
  return false;
}

void ValidateInitializer(const framework::Info& info,
                         const std::map<std::string, std::set<std::string>>& names,
                         const api::TrainJob& job, std::string_view initializer,
                         std::string_view config_name, field::ErrorList& errs) {
  std::string name(initializer);
  auto it = names.find(name);
  std::string detail;
  if (it == names.end()) {
    detail = "must have " + name + " job when trainJob is configured with input " +
             std::string(config_name);
  } else if (it->second.count(name) == 0) {
    detail = "must have container with name - " + name + " in the " + name + " job";
  } else if (!HasInitializerMount(info, name)) {
    detail = std::string("must have volumeMount with name - ") + framework::kVolumeNameInitializer +
             " in container " + name + " of the " + name + " job";
  } else {
    return;
  }
  errs.push_back(
      field::Invalid(RuntimeRefPath(), framework::GoRuntimeRef(job.spec.runtime_ref), detail));
}

// Go-ish rendering of the runtimePatches list as a bad value.
field::BadValue PatchesValue(const api::TrainJob& job) {
  json::Value list = json::Value::Array();
  for (const api::RuntimePatch& p : job.spec.runtime_patches) {
    json::Value e = json::Value::Object();
    e.Set("manager", json::Value(p.manager));
    if (!p.training_runtime_spec.IsNull()) {
      e.Set("trainingRuntimeSpec", p.training_runtime_spec.Clone());
    }
    list.PushBack(std::move(e));
  }
  return field::BadValue::Json(std::move(list));
}

bool PatchesEqual(const api::TrainJob& a, const api::TrainJob& b) {
  const auto& x = a.spec.runtime_patches;
  const auto& y = b.spec.runtime_patches;
  if (x.size() != y.size()) {
    return false;
  }
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].manager != y[i].manager || x[i].time != y[i].time ||
        x[i].training_runtime_spec != y[i].training_runtime_spec) {
      return false;
    }
  }
  return true;
}

const json::Value* PatchPodSpec(const json::Value& rjob_patch) {
  const json::Value* v = rjob_patch.Find("template");
  for (std::string_view key : {"spec", "template", "spec"}) {
    if (v == nullptr || v->IsNull()) {
      return nullptr;
    }
    v = v->Find(key);
  }
  return v != nullptr && v->IsObject() ? v : nullptr;
}

}  // namespace

field::ErrorList JobSet::CheckRuntimePatchesImmutability(const api::TrainJob* old_job,
                                                         const api::TrainJob& new_job) const {
  field::ErrorList errs;
  if (old_job == nullptr || PatchesEqual(*old_job, new_job)) {
    return errs;
  }
  // Editing patches is allowed when the TrainJob is suspended before or after the update, so a
  // queue controller can change patches and toggle suspend in one request.
  if (!IsTrue(old_job->spec.suspend) && !IsTrue(new_job.spec.suspend)) {
    errs.push_back(field::Forbidden(RuntimePatchesPath(),
                                    "RuntimePatches can only be modified when the TrainJob is "
                                    "suspended before or after the update"));
    return errs;
  }
  StatusOr<json::Value> jobset =
      reader_->Get(api::kJobSetGVK, new_job.metadata.namespace_, new_job.metadata.name);
  if (!jobset.ok()) {
    if (!IsNotFound(jobset.status())) {
      errs.push_back(field::InternalError(RuntimePatchesPath(), jobset.status().message()));
    }
    return errs;
  }
  const json::Value* status = jobset->Find("status");
  const json::Value* rjobs = status != nullptr ? status->Find("replicatedJobsStatus") : nullptr;
  if (rjobs == nullptr || !rjobs->IsArray()) {
    return errs;
  }
  for (const json::Value& rj : rjobs->elements()) {
    const json::Value* active = rj.Find("active");
    if (active != nullptr && active->IsNumber() && active->AsInt() > 0) {
      errs.push_back(field::Forbidden(RuntimePatchesPath(),
                                      "RuntimePatches cannot be modified when the JobSet's "
                                      "ReplicatedJob " +
                                          framework::StringField(rj, "name") + " is still active"));
    }
  }
  return errs;
}

field::ValidationResult JobSet::Validate(const framework::Info* info, const api::TrainJob* old_job,
                                         const api::TrainJob& new_job) {
  field::ValidationResult result;
  if (info == nullptr || !info->HasJobSetSpec()) {
    return result;
  }
  field::ErrorList& errs = result.errors;
  auto names = ContainerNamesByJob(*info);
  if (new_job.spec.initializer && new_job.spec.initializer->dataset) {
    ValidateInitializer(*info, names, new_job, kDatasetInitializer, "datasetConfig", errs);
  }
  if (new_job.spec.initializer && new_job.spec.initializer->model) {
    ValidateInitializer(*info, names, new_job, kModelInitializer, "modelConfig", errs);
  }
  for (field::Error& e : CheckRuntimePatchesImmutability(old_job, new_job)) {
    errs.push_back(std::move(e));
  }

  for (const api::RuntimePatch& patch : new_job.spec.runtime_patches) {
    for (field::Error& e :
         field::IsDomainPrefixedPath(RuntimePatchesPath().Child("manager"), patch.manager)) {
      errs.push_back(std::move(e));
    }
    const json::Value* tmpl = patch.training_runtime_spec.Find("template");
    const json::Value* spec = tmpl != nullptr ? tmpl->Find("spec") : nullptr;
    const json::Value* rjob_patches = spec != nullptr ? spec->Find("replicatedJobs") : nullptr;
    if (rjob_patches == nullptr || !rjob_patches->IsArray()) {
      continue;
    }
    for (const json::Value& rjob_patch : rjob_patches->elements()) {
      std::string rjob_name = framework::StringField(rjob_patch, "name");
      auto it = names.find(rjob_name);
      if (it == names.end()) {
        errs.push_back(field::Invalid(
            RuntimePatchesPath(), PatchesValue(new_job),
            "must not have replicated job that doesn't exist in the runtime job template"));
        continue;
      }
      const json::Value* pod_patch = PatchPodSpec(rjob_patch);
      if (pod_patch == nullptr) {
        continue;
      }
      if (const json::Value* inits = pod_patch->Find("initContainers");
          inits != nullptr && inits->IsArray()) {
        for (const json::Value& c : inits->elements()) {
          if (it->second.count(framework::StringField(c, "name")) == 0) {
            errs.push_back(field::Invalid(
                RuntimePatchesPath(), PatchesValue(new_job),
                "must not have initContainer that doesn't exist in the runtime job " + rjob_name));
          }
        }
      }
      if (const json::Value* cs = pod_patch->Find("containers"); cs != nullptr && cs->IsArray()) {
        for (const json::Value& c : cs->elements()) {
          std::string cname = framework::StringField(c, "name");
          const json::Value* env = c.Find("env");
          if (it->second.count(cname) == 0) {
            errs.push_back(field::Invalid(
                RuntimePatchesPath(), PatchesValue(new_job),
                "must not have container that doesn't exist in the runtime job " + rjob_name));
          } else if (env != nullptr && env->IsArray() && !env->empty() &&
                     (cname == kDatasetInitializer || cname == kModelInitializer ||
                      cname == kNode)) {
            errs.push_back(field::Invalid(RuntimePatchesPath(), PatchesValue(new_job),
                                          "must not have envs for the dataset-initializer, "
                                          "model-initializer, node containers"));
          }
        }
      }
    }
  }
  return result;
}

std::vector<framework::Watch> JobSet::Watches() const {
  return {framework::Watch{api::kJobSetGVK, /*owned_by_trainjob=*/true}};
}

namespace {

std::optional<api::Condition> TrueCondition(const json::Value& jobset, std::string_view type) {
  const json::Value* status = jobset.Find("status");
  const json::Value* conds = status != nullptr ? status->Find("conditions") : nullptr;
  if (conds == nullptr || !conds->IsArray()) {
    return std::nullopt;
  }
  for (const json::Value& c : conds->elements()) {
    if (framework::StringField(c, "type") != type) {
      continue;
    }
    if (framework::StringField(c, "status") != "True") {
      return std::nullopt;
    }
    api::Condition out;
    out.status = "True";
    out.reason = framework::StringField(c, "reason");
    out.message = framework::StringField(c, "message");
    out.last_transition_time = framework::StringField(c, "lastTransitionTime");
    if (const json::Value* g = c.Find("observedGeneration"); g != nullptr && g->IsNumber()) {
      out.observed_generation = g->AsInt();
    }
    return out;
  }
  return std::nullopt;
}

int32_t Counter(const json::Value& obj, std::string_view key) {
  const json::Value* v = obj.Find(key);
  return v != nullptr && v->IsNumber() ? static_cast<int32_t>(v->AsInt()) : 0;
}

}  // namespace

StatusOr<std::optional<api::TrainJobStatus>> JobSet::Status(const api::TrainJob& job) {
  StatusOr<json::Value> jobset =
      reader_->Get(api::kJobSetGVK, job.metadata.namespace_, job.metadata.name);
  if (!jobset.ok()) {
    // A finished TrainJob keeps its status when its JobSet is gone (e.g. JobSet TTL).
    if (IsNotFound(jobset.status()) && framework::IsTrainJobFinished(job)) {
      return std::optional<api::TrainJobStatus>();
    }
    return jobset.status();
  }
  api::TrainJobStatus status = api::Clone(job.status);
  if (std::optional<api::Condition> c = TrueCondition(*jobset, api::kJobSetConditionCompleted)) {
    c->type = api::kConditionComplete;
    framework::SetStatusCondition(status.conditions, std::move(*c), now_);
  }
  if (std::optional<api::Condition> c = TrueCondition(*jobset, api::kJobSetConditionFailed)) {
    c->type = api::kConditionFailed;
    framework::SetStatusCondition(status.conditions, std::move(*c), now_);
  }
  status.jobs_status.clear();
  const json::Value* st = jobset->Find("status");
  const json::Value* rjobs = st != nullptr ? st->Find("replicatedJobsStatus") : nullptr;
  if (rjobs != nullptr && rjobs->IsArray()) {
    for (const json::Value& rj : rjobs->elements()) {
      api::JobStatus js;
      js.name = framework::StringField(rj, "name");
      js.ready = Counter(rj, "ready");
      js.succeeded = Counter(rj, "succeeded");
      js.failed = Counter(rj, "failed");
      js.active = Counter(rj, "active");
      js.suspended = Counter(rj, "suspended");
      status.jobs_status.push_back(std::move(js));
    }
  }
  return std::optional<api::TrainJobStatus>(std::move(status));
}

}  // namespace trainer::plugins
