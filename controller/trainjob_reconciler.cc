// The TrainJob reconcile pass (upstream pkg/controller/trainjob_controller.go, v2.3.0 + HEAD's
// terminal Failed condition).
#include "controller/trainjob_reconciler.h"

#include <algorithm>

#include "common/kube/meta.h"
#include "common/kube/rest_mapper.h"
#include "common/log/log.h"
#include "runtime/api/codec.h"
#include "runtime/api/conditions.h"
#include "runtime/api/defaults.h"
#include "runtime/api/kinds.h"
#include "runtime/api/labels.h"
#include "runtime/framework/constants.h"
#include "runtime/framework/trainjob.h"

namespace trainer::controller {

namespace {

bool IsJobSet(const kube::GroupVersionKind& gvk) {
  return gvk.group == api::kJobSetGVK.group && gvk.kind == api::kJobSetGVK.kind;
}

const api::Condition* FindCondition(const std::vector<api::Condition>& conditions,
                                    std::string_view type) {
  for (const api::Condition& c : conditions) {
    if (c.type == type) {
      return &c;
    }
  }
  return nullptr;
}

bool RemoveCondition(std::vector<api::Condition>& conditions, std::string_view type) {
  auto it = std::remove_if(conditions.begin(), conditions.end(),
                           [&](const api::Condition& c) { return c.type == type; });
  bool removed = it != conditions.end();
  conditions.erase(it, conditions.end());
  return removed;
}

api::Condition MakeCondition(std::string_view type, std::string_view status,
                             std::string_view reason, std::string message) {
  api::Condition c;
  c.type = type;
  c.status = status;
  c.reason = reason;
  c.message = std::move(message);
  return c;
}

// "JobSet ns/name" for messages.
std::string Describe(const json::Value& obj) {
  std::string kind = kube::GroupVersionKind::Of(obj).kind;
  return (kind.empty() ? std::string("object") : kind) + " " + kube::ObjectKeyOf(obj);
}

// The TrainJob document as the `regarding` object of an event (list items may lack kind).
json::Value RegardingOf(const json::Value& trainjob) {
  json::Value out = json::Value::Object();
  out.Set("apiVersion", api::kAPIVersion);
  out.Set("kind", api::kTrainJobKind);
  if (const json::Value* meta = trainjob.Find("metadata")) {
    out.Set("metadata", meta->Clone());
  }
  return out;
}

bool ManagedByOther(const json::Value& trainjob) {
  const json::Value* spec = trainjob.Find("spec");
  const json::Value* managed_by = spec != nullptr ? spec->Find("managedBy") : nullptr;
  if (managed_by == nullptr || !managed_by->IsString()) {
    return false;
  }
  return managed_by->AsString() != api::kTrainJobControllerManagedBy;
}

std::optional<std::chrono::system_clock::time_point> MetaTime(const json::Value& obj,
                                                              std::string_view field) {
  const json::Value* meta = obj.Find("metadata");
  const json::Value* v = meta != nullptr ? meta->Find(field) : nullptr;
  if (v == nullptr || !v->IsString()) return std::nullopt;
  return kube::ParseTime(v->AsString());
}

std::string StateOf(const api::TrainJob& job) {
  const std::vector<api::Condition>& cs = job.status.conditions;
  if (framework::IsStatusConditionTrue(cs, api::kConditionComplete)) return "Complete";
  if (framework::IsStatusConditionTrue(cs, api::kConditionFailed)) return "Failed";
  if (job.spec.suspend.value_or(false)) return "Suspended";
  for (const api::JobStatus& js : job.status.jobs_status) {
    if (js.active > 0) return "Running";
  }
  return "Created";
}

}  // namespace

std::string CreationFailedNote(std::string_view error) {
  constexpr size_t kMaxRunes = 950;
  size_t runes = 0;
  size_t cut = error.size();
  for (size_t i = 0; i < error.size(); ++i) {
    // A rune starts at every byte that is not a UTF-8 continuation byte.
    if ((static_cast<unsigned char>(error[i]) & 0xC0) != 0x80) {
      if (runes == kMaxRunes) {
        cut = i;
        break;
      }
      ++runes;
    }
  }
  std::string note = "TrainJob resources reconciliation failed: ";
  note.append(error.substr(0, cut));
  // Upstream appends " ..." when the error is longer than 950 bytes (len() counts bytes).
  if (error.size() > kMaxRunes) {
    note += " ...";
  }
  return note;
}

// An apply creates what is missing, so a 404 without a Status body means the apiserver does not
// serve the kind at all (a PodGroup whose CRD is not installed). Say so in upstream's words
// (controller-runtime's RESTMapper error) rather than "404 page not found".
StatusOr<json::Value> NoKindMatchIfNotServed(StatusOr<json::Value> applied,
                                             const kube::GroupVersionKind& gvk) {
  if (applied.ok() || !IsNotFound(applied.status()) ||
      !applied.status().message().starts_with("the server responded with HTTP 404")) {
    return applied;
  }
  return NotFoundError("no matches for kind \"" + gvk.kind + "\" in version \"" + gvk.ApiVersion() +
                       "\"");
}

bool UpToDate(const json::Value& live, std::string_view hash) {
  const json::Value* meta = live.Find("metadata");
  if (meta == nullptr) return false;
  const json::Value* annotations = meta->Find("annotations");
  const json::Value* have =
      annotations != nullptr ? annotations->Find(api::kAnnotationAppliedHash) : nullptr;
  if (have == nullptr || !have->IsString() || have->AsString() != hash) {
    return false;
  }
  // Someone else wrote the object (kubectl edit, another controller): their change may touch a
  // field we own, so apply again to take it back. Status writers do not count.
  const json::Value* managed = meta->Find("managedFields");
  if (managed != nullptr && managed->IsArray()) {
    for (const json::Value& entry : managed->elements()) {
      const json::Value* sub = entry.Find("subresource");
      if (sub != nullptr && sub->IsString() && !sub->AsString().empty()) continue;
      const json::Value* manager = entry.Find("manager");
      if (manager == nullptr || !manager->IsString() ||
          manager->AsString() != framework::kFieldManager) {
        return false;
      }
    }
  }
  return true;
}

bool JobSetAllReady(const json::Value& jobset) {
  const json::Value* spec = jobset.Find("spec");
  const json::Value* rjobs = spec != nullptr ? spec->Find("replicatedJobs") : nullptr;
  const json::Value* status = jobset.Find("status");
  const json::Value* rstatus = status != nullptr ? status->Find("replicatedJobsStatus") : nullptr;
  if (rjobs == nullptr || !rjobs->IsArray() || rjobs->empty() || rstatus == nullptr ||
      !rstatus->IsArray()) {
    return false;
  }
  for (const json::Value& rj : rjobs->elements()) {
    const json::Value* name = rj.Find("name");
    if (name == nullptr || !name->IsString()) return false;
    const json::Value* replicas = rj.Find("replicas");
    int64_t want = replicas != nullptr && replicas->IsNumber() ? replicas->AsInt() : 1;
    const json::Value* st = json::FindByKey(*rstatus, "name", name->AsString());
    if (st == nullptr) return false;
    int64_t ready = 0;
    for (const char* counter : {"ready", "succeeded"}) {
      const json::Value* v = st->Find(counter);
      ready += v != nullptr && v->IsNumber() ? v->AsInt() : 0;
    }
    if (ready < want) return false;
  }
  return true;
}

json::Value StatusMergePatch(const api::TrainJobStatus& prev, const api::TrainJobStatus& next) {
  json::Value before = api::EncodeTrainJobStatus(prev);
  json::Value after = api::EncodeTrainJobStatus(next);
  json::Value status = json::Value::Object();
  for (const json::Member& m : after.members()) {
    const json::Value* old = before.Find(m.first);
    if (old == nullptr || *old != m.second) {
      status.Set(m.first, m.second.Clone());
    }
  }
  for (const json::Member& m : before.members()) {
    if (!after.Has(m.first)) {
      status.Set(m.first, json::Value());
    }
  }
  if (status.empty()) {
    return json::Value();
  }
  json::Value patch = json::Value::Object();
  // The CRD requires a present status to have a property (minProperties: 1): clearing the last
  // field removes status itself.
  patch.Set("status", after.empty() ? json::Value() : std::move(status));
  return patch;
}

TrainJobReconciler::TrainJobReconciler(Deps deps, ReconcilerOptions options)
    : deps_(std::move(deps)), options_(options), applies_(options.apply_threads) {
  if (!deps_.now) {
    deps_.now = [] { return std::chrono::system_clock::now(); };
  }
}

std::string TrainJobReconciler::Now() const { return kube::FormatTime(deps_.now()); }

void TrainJobReconciler::ConfirmNextPass(const std::string& key) {
  std::lock_guard<std::mutex> lock(confirm_mu_);
  confirm_marks_.insert(key);
}

bool TrainJobReconciler::TakeConfirmMark(const std::string& key) {
  std::lock_guard<std::mutex> lock(confirm_mu_);
  return confirm_marks_.erase(key) > 0;
}

Status TrainJobReconciler::ConfirmLive(std::string_view ns, std::string_view name,
                                       json::Value& cached) {
  if (!deps_.get_live) return OkStatus();
  StatusOr<json::Value> fresh = deps_.get_live(ns, name);
  if (!fresh.ok()) return fresh.status();
  cached = std::move(*fresh);
  return OkStatus();
}

bool TrainJobReconciler::BeingDeleted(const json::Value& trainjob) const {
  if (MetaTime(trainjob, "deletionTimestamp").has_value()) return true;
  // A namespace being deleted deletes the TrainJob too, and refuses every write meanwhile. The
  // namespace cache may still hold a deleted namespace whose name a new one took: only a TrainJob
  // created before the deletion began can be in the namespace being deleted (creation in a
  // terminating namespace is refused), so a newer TrainJob is never taken for one going away.
  const json::Value* meta = trainjob.Find("metadata");
  const json::Value* ns = meta != nullptr ? meta->Find("namespace") : nullptr;
  if (ns == nullptr || !ns->IsString()) return false;
  StatusOr<json::Value> nso = deps_.reader->Get(api::kNamespaceGVK, "", ns->AsString());
  if (!nso.ok()) return false;
  std::optional<std::chrono::system_clock::time_point> deleted =
      MetaTime(*nso, "deletionTimestamp");
  std::optional<std::chrono::system_clock::time_point> created =
      MetaTime(trainjob, "creationTimestamp");
  return deleted && created && *created < *deleted;
}

StatusOr<json::Value> TrainJobReconciler::GetTrainJob(std::string_view ns, std::string_view name,
                                                      const std::string& key) {
  // The mark is taken first, so a TrainJob already gone from the cache leaves none behind.
  const bool confirm = TakeConfirmMark(key);
  StatusOr<json::Value> live = deps_.reader->Get(api::kTrainJobGVK, ns, name);
  if (!live.ok()) {
    return IsNotFound(live.status()) ? live.status()
                                     : live.status().WithContext("getting TrainJob " + key);
  }
  // A TrainJob being deleted gets no object writes (ReconcileTrainJob), so confirming it adds
  // nothing: a deletionTimestamp is never removed, and a stale cached copy only means the
  // TrainJob is already gone. During a foreground or namespace deletion every owned object's
  // deletion would otherwise cost a read.
  if (!confirm || BeingDeleted(*live)) {
    return live;
  }
  Status confirmed = ConfirmLive(ns, name, *live);
  if (!confirmed.ok() && !IsNotFound(confirmed)) {
    ConfirmNextPass(key);  // still unconfirmed: the retry reads again
    return confirmed.WithContext("reading TrainJob " + key + " from the apiserver");
  }
  if (!confirmed.ok()) {
    return confirmed;  // gone from the apiserver
  }
  return live;
}

ReconcileResult TrainJobReconciler::Reconcile(std::string_view ns, std::string_view name) {
  const std::string key = kube::ObjectKey(ns, name);
  StatusOr<json::Value> live = GetTrainJob(ns, name, key);
  if (!live.ok() && !IsNotFound(live.status())) {
    return {live.status()};
  }
  if (live.ok() && log::V(2)) {
    log::Debug(2, "Reconciling TrainJob", {{"trainJob", key}});
  }
  // Gone, or managed by another controller (upstream: IsTrainJobManagedByController): no
  // objects and no status at all.
  if (!live.ok() || ManagedByOther(*live)) {
    if (deps_.observer) deps_.observer->State(key, "");
    return {};
  }
  // The document moves into job->raw (no copy of it per pass): the pass reads it there.
  StatusOr<api::TrainJob> job = api::DecodeTrainJob(std::move(*live));
  if (!job.ok()) {
    return {job.status().WithContext("decoding TrainJob " + key)};
  }
  std::optional<OverlayReader::Scope> scope;
  if (deps_.overlay != nullptr) {
    scope.emplace(*deps_.overlay);
  }
  return ReconcileTrainJob(key, *job);
}

ReconcileResult TrainJobReconciler::ReconcileTrainJob(const std::string& key, api::TrainJob& job) {
  const api::TrainJobStatus prev = api::Clone(job.status);
  // Being deleted (a foreground deletion, or the namespace's): the garbage collector is removing
  // the owned objects and waits for them; applying them again would re-create them for as long
  // as the TrainJob exists, and the deletion would never finish (in a terminating namespace
  // every write is refused). Upstream v2.3.0 has no such check and re-creates them at its
  // client's rate limit.
  const bool deleting = BeingDeleted(job.raw);
  const std::string runtime_key = api::RuntimeRegistryKey(job.spec.runtime_ref);
  core::Runtime* runtime = deps_.runtimes ? deps_.runtimes(runtime_key) : nullptr;
  ObjectsOutcome objects;
  if (runtime == nullptr) {
    // Upstream sets this condition and then dereferences the missing runtime, so the condition
    // is never written. Failed is terminal: write it and stop retrying.
    SetCondition(job, api::kConditionFailed, "True", api::kReasonRuntimeNotSupported,
                 "unsupported runtime: " + runtime_key);
  } else if (!framework::IsTrainJobFinished(job) && !deleting) {
    objects = ReconcileObjects(*runtime, job);
  }
  SetSuspendedCondition(job);
  Status err = objects.error;
  if (runtime != nullptr) {
    Status status_err = SetTrainJobStatus(*runtime, job);
    // Without a JobSet (its apply just failed) there is no status to read: that is the same
    // error, already reported. A TrainJob being deleted loses its JobSet first: no error.
    if (deleting && IsNotFound(status_err)) status_err = OkStatus();
    if (err.ok()) err = status_err;
    if (options_.lifecycle_conditions && !objects.failed()) SetLifecycleConditions(job);
  }
  ReconcileResult result{.requeue_after = ReconcileDeadline(job)};
  Status patch_err = PatchStatus(job, prev);
  result.error = err.ok() ? patch_err : err;
  ReportState(key, job);
  return result;
}

TrainJobReconciler::ObjectsOutcome TrainJobReconciler::ReconcileObjects(core::Runtime& runtime,
                                                                        api::TrainJob& job) {
  ObjectsOutcome out;
  StatusOr<std::vector<json::Value>> objects = runtime.NewObjects(job);
  if (!objects.ok()) {
    out = {.error = objects.status(), .build_failed = true};
  } else {
    out = ApplyObjects(std::move(*objects));
  }
  if (out.error.ok()) {
    RemoveCondition(job.status.conditions, api::kConditionResourcesCreationFailed);
    if (out.jobset_created && deps_.observer) deps_.observer->ObjectsApplied(job);
    return out;
  }
  RecordFailure(job.raw, out.error);
  SetCondition(
      job, api::kConditionResourcesCreationFailed, "True",
      out.build_failed ? api::kReasonBuildFailed : api::kReasonApplyFailed,
      out.build_failed ? out.error.message() : out.failed_object + ": " + out.error.message());
  return out;
}

// One object of a pass on its way to the apiserver.
struct TrainJobReconciler::Pending {
  json::Value obj;
  kube::GroupVersionKind gvk;
  const kube::ResourceMapping* mapping = nullptr;
  bool created = false;  // a JobSet that did not exist
  StatusOr<json::Value> out = InternalError("not applied");
};

TrainJobReconciler::ObjectsOutcome TrainJobReconciler::ApplyObjects(
    std::vector<json::Value> objects) {
  std::vector<Pending> pending;
  for (json::Value& obj : objects) {
    Pending p;
    p.gvk = kube::GroupVersionKind::Of(obj);
    StatusOr<const kube::ResourceMapping*> mapping = kube::MappingFor(p.gvk);
    if (!mapping.ok()) {
      return {.error = mapping.status(), .failed_object = Describe(obj)};
    }
    p.mapping = *mapping;
    const Live live = PrepareApply(obj);
    if (live == Live::kCurrent) continue;
    p.created = IsJobSet(p.gvk) && live == Live::kAbsent;
    p.obj = std::move(obj);
    pending.push_back(std::move(p));
  }
  // The JobSet goes last, once everything its pods rely on exists (PodGroup, MPI Secret and
  // hostfile, the snapshot), as upstream applies its objects in builder order: if the PodGroup
  // cannot be written (CRD missing), no pod may start without gang scheduling.
  std::vector<Pending*> first, last;
  for (Pending& p : pending) {
    (IsJobSet(p.gvk) ? last : first).push_back(&p);
  }
  ObjectsOutcome out;
  for (std::vector<Pending*>* wave : {&first, &last}) {
    if (!ApplyWave(*wave, out)) break;
  }
  return out;
}

bool TrainJobReconciler::ApplyWave(const std::vector<Pending*>& wave, ObjectsOutcome& out) {
  // Concurrently: a wave costs one apply's latency, not the sum.
  std::vector<std::function<void()>> tasks;
  for (Pending* p : wave) {
    tasks.push_back([this, p] { Send(*p); });
  }
  applies_.RunAll(tasks);
  // The first failure in object order is the pass's error.
  for (Pending* p : wave) {
    if (!p->out.ok()) {
      out.error = p->out.status();
      out.failed_object = Describe(p->obj);
      if (deps_.observer) deps_.observer->ApplyError(p->gvk.kind);
      return false;
    }
    if (deps_.overlay != nullptr) deps_.overlay->Remember(std::move(*p->out));
    out.jobset_created = out.jobset_created || p->created;
  }
  return true;
}

void TrainJobReconciler::Send(Pending& p) {
  std::string ns(kube::Namespace(p.obj));
  if (deps_.overlay != nullptr) deps_.overlay->BeginWrite(p.obj);
  p.out = deps_.writer->Apply(
      p.mapping->gvr, p.mapping->namespaced ? ns : "", p.obj,
      kube::ApplyOptions{.field_manager = framework::kFieldManager, .force = true});
  if (deps_.overlay != nullptr) deps_.overlay->EndWrite(p.obj, p.out);
  p.out = NoKindMatchIfNotServed(std::move(p.out), p.gvk);
}

TrainJobReconciler::Live TrainJobReconciler::PrepareApply(json::Value& obj) {
  kube::GroupVersionKind gvk = kube::GroupVersionKind::Of(obj);
  if (json::Value* meta = obj.Find("metadata"); meta != nullptr) {
    if (json::Value* ann = meta->Find("annotations"); ann != nullptr && ann->IsObject()) {
      ann->Erase(api::kAnnotationAppliedHash);
    }
  }
  const std::string hash = json::Hash(obj);
  StatusOr<json::Value> live = deps_.reader->Get(gvk, kube::Namespace(obj), kube::Name(obj));
  if (live.ok() && UpToDate(*live, hash)) {
    if (deps_.observer) deps_.observer->ApplySkipped();
    return Live::kCurrent;
  }
  obj["metadata"]["annotations"].Set(api::kAnnotationAppliedHash, hash);
  return live.ok() ? Live::kOutdated : Live::kAbsent;
}

void TrainJobReconciler::SetCondition(api::TrainJob& job, std::string_view type,
                                      std::string_view status, std::string_view reason,
                                      std::string message) {
  framework::SetStatusCondition(job.status.conditions,
                                MakeCondition(type, status, reason, std::move(message)),
                                [this] { return Now(); });
}

void TrainJobReconciler::SetSuspendedCondition(api::TrainJob& job) {
  if (job.spec.suspend.value_or(false)) {
    SetCondition(job, api::kConditionSuspended, "True", api::kReasonSuspended,
                 api::kMessageSuspended);
  } else if (framework::IsStatusConditionTrue(job.status.conditions, api::kConditionSuspended)) {
    SetCondition(job, api::kConditionSuspended, "False", api::kReasonResumed, api::kMessageResumed);
  }
}

Status TrainJobReconciler::SetTrainJobStatus(core::Runtime& runtime, api::TrainJob& job) {
  // The runtime's status replaces the TrainJob's, keeping a deadline Failed condition.
  std::optional<api::Condition> deadline_cond;
  if (const api::Condition* c = FindCondition(job.status.conditions, api::kConditionFailed);
      c != nullptr && c->reason == api::kReasonDeadlineExceeded) {
    deadline_cond = *c;
  }
  StatusOr<std::optional<api::TrainJobStatus>> status = runtime.TrainJobStatus(job);
  if (status.ok() && status->has_value()) {
    job.status = std::move(**status);
  }
  if (deadline_cond) {
    framework::SetStatusCondition(job.status.conditions, *deadline_cond, [this] { return Now(); });
  }
  return status.status();
}

void TrainJobReconciler::SetLifecycleConditions(api::TrainJob& job) {
  if (deps_.reader->Get(api::kJobSetGVK, job.metadata.namespace_, job.metadata.name).ok()) {
    SetCondition(job, api::kConditionCreated, "True", api::kReasonResourcesCreated,
                 api::kMessageResourcesCreated);
  }
  bool running = !framework::IsTrainJobFinished(job) && !job.spec.suspend.value_or(false) &&
                 std::any_of(job.status.jobs_status.begin(), job.status.jobs_status.end(),
                             [](const api::JobStatus& js) { return js.active > 0; });
  if (running) {
    SetCondition(job, api::kConditionRunning, "True", api::kReasonJobsRunning,
                 api::kMessageJobsRunning);
  } else if (FindCondition(job.status.conditions, api::kConditionRunning) != nullptr) {
    SetCondition(job, api::kConditionRunning, "False", api::kReasonJobsNotRunning,
                 api::kMessageJobsNotRunning);
  }
}

void TrainJobReconciler::ReportState(const std::string& key, const api::TrainJob& job) {
  if (deps_.observer == nullptr) return;
  deps_.observer->State(key, StateOf(job));
  if (!framework::IsTrainJobFinished(job)) {
    StatusOr<json::Value> jobset =
        deps_.reader->Get(api::kJobSetGVK, job.metadata.namespace_, job.metadata.name);
    if (jobset.ok() && JobSetAllReady(*jobset)) deps_.observer->JobSetReady(job);
  }
}

void TrainJobReconciler::RecordFailure(const json::Value& trainjob, const Status& error) {
  if (deps_.events == nullptr) return;
  deps_.events
      ->Event(RegardingOf(trainjob), "Warning", kEventReasonCreationFailed, kEventActionReconciling,
              CreationFailedNote(error.message()))
      .IgnoreError();
}

std::optional<std::chrono::milliseconds> TrainJobReconciler::ReconcileDeadline(api::TrainJob& job) {
  const int64_t ads = job.spec.active_deadline_seconds.value_or(0);
  if (ads == 0 || framework::IsTrainJobFinished(job) || job.spec.suspend.value_or(false)) {
    return std::nullopt;
  }
  std::optional<std::chrono::system_clock::time_point> start =
      kube::ParseTime(job.metadata.creation_timestamp);
  if (const api::Condition* c = FindCondition(job.status.conditions, api::kConditionSuspended);
      c != nullptr && c->status == "False") {
    start = kube::ParseTime(c->last_transition_time);
  }
  if (!start) {
    return std::nullopt;
  }
  const auto deadline = *start + std::chrono::seconds(ads);
  const auto now = deps_.now();
  if (now > deadline) {
    SetCondition(job, api::kConditionFailed, "True", api::kReasonDeadlineExceeded,
                 api::kMessageDeadlineExceeded);
    // Errors other than NotFound are only logged upstream; the next pass (Failed is terminal)
    // does not retry, so we do not either.
    deps_.writer->Delete(kube::kJobSets, job.metadata.namespace_, job.metadata.name).IgnoreError();
    return std::nullopt;
  }
  auto until = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
  return std::max(until, std::chrono::milliseconds(1000));
}

Status TrainJobReconciler::PatchStatus(const api::TrainJob& job, const api::TrainJobStatus& prev) {
  json::Value patch = StatusMergePatch(prev, job.status);
  if (patch.IsNull()) {
    return OkStatus();
  }
  StatusOr<json::Value> out = deps_.writer->PatchStatus(
      kube::kTrainJobs, job.metadata.namespace_, job.metadata.name, kube::PatchType::kMerge, patch);
  if (!out.ok() && !IsNotFound(out.status())) {
    return out.status().WithContext("patching status of TrainJob " +
                                    kube::ObjectKey(job.metadata.namespace_, job.metadata.name));
  }
  return OkStatus();
}

}  // namespace trainer::controller
