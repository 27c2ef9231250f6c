// The wiring of trainer-controller.
#include "controller/manager.h"

#include <malloc.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/informer/informer.h"
#include "common/kube/curl/client.h"
#include "common/kube/curl/config.h"
#include "common/kube/events.h"
#include "common/kube/meta.h"
#include "common/kube/rest_mapper.h"
#include "common/leader/elector.h"
#include "common/log/log.h"
#include "common/metrics/metrics.h"
#include "controller/cache_reader.h"
#include "controller/metrics.h"
#include "controller/overlay_reader.h"
#include "controller/own_writes.h"
#include "controller/runtime_reconciler.h"
#include "controller/trainjob_reconciler.h"
#include "controller/worker_pool.h"
#include "runtime/core/registry.h"

namespace trainer::controller {

namespace {

constexpr char kIndexTrainingRuntime[] = "trainingRuntime";
constexpr char kIndexClusterTrainingRuntime[] = "clusterTrainingRuntime";

// The TrainJob controlling `obj` ("ns/name"), or "" (upstream handler.EnqueueRequestForOwner
// with OnlyControllerOwner).
std::string ControllerTrainJob(const json::Value& obj) {
  const json::Value* meta = obj.Find("metadata");
  const json::Value* refs = meta != nullptr ? meta->Find("ownerReferences") : nullptr;
  if (refs == nullptr || !refs->IsArray()) return "";
  for (const json::Value& ref : refs->elements()) {
    const json::Value* controller = ref.Find("controller");
    const json::Value* kind = ref.Find("kind");
    const json::Value* api_version = ref.Find("apiVersion");
    const json::Value* name = ref.Find("name");
    if (controller == nullptr || !controller->AsBool() || kind == nullptr || !kind->IsString() ||
        kind->AsString() != api::kTrainJobKind || api_version == nullptr ||
        !api_version->IsString() || name == nullptr || !name->IsString()) {
      continue;
    }
    if (api_version->AsString().rfind(std::string(api::kGroup) + "/", 0) != 0) continue;
    return kube::ObjectKey(kube::Namespace(obj), name->AsString());
  }
  return "";
}

// Upstream pkg/runtime/indexer: the runtime a TrainJob references, per kind.
std::vector<std::string> RuntimeIndex(const json::Value& tj, std::string_view want_kind) {
  const json::Value* spec = tj.Find("spec");
  const json::Value* ref = spec != nullptr ? spec->Find("runtimeRef") : nullptr;
  if (ref == nullptr || !ref->IsObject()) return {};
  auto str = [&](std::string_view k, std::string_view def) -> std::string {
    const json::Value* v = ref->Find(k);
    return v != nullptr && v->IsString() ? v->AsString() : std::string(def);
  };
  // CRD defaults: apiGroup trainer.kubeflow.org, kind ClusterTrainingRuntime.
  if (str("apiGroup", api::kGroup) != api::kGroup ||
      str("kind", api::kClusterTrainingRuntimeKind) != want_kind) {
    return {};
  }
  std::string name = str("name", "");
  if (name.empty()) return {};
  if (want_kind == api::kTrainingRuntimeKind) {
    return {kube::ObjectKey(kube::Namespace(tj), name)};
  }
  return {name};
}

// Cache trimming (memory). managedFields keep only the manager list the applied-hash rule reads
// (UpToDate): without it an edit by someone else would look up to date and never be taken back.
void SlimManagedFields(json::Value& obj) {
  json::Value* meta = obj.Find("metadata");
  json::Value* mf = meta != nullptr ? meta->Find("managedFields") : nullptr;
  if (mf == nullptr || !mf->IsArray()) return;
  json::Value slim = json::Value::Array();
  for (json::Value& e : mf->elements()) {
    json::Value s = json::Value::Object();
    for (const char* k : {"manager", "operation", "subresource"}) {
      if (json::Value* v = e.Find(k)) s.Set(k, std::move(*v));
    }
    slim.PushBack(std::move(s));
  }
  *mf = std::move(slim);
}

// JobSets keep what the controller reads (metadata, spec.suspend, replicatedJobs names and
// replicas, status); the rest of spec (pod templates, network and policies) is never read back.
void TrimJobSet(json::Value& js) {
  SlimManagedFields(js);
  if (json::Value* spec = js.Find("spec"); spec != nullptr && spec->IsObject()) {
    json::Value slim = json::Value::Object();
    if (json::Value* suspend = spec->Find("suspend")) slim.Set("suspend", std::move(*suspend));
    if (json::Value* rjobs = spec->Find("replicatedJobs"); rjobs != nullptr && rjobs->IsArray()) {
      json::Value kept = json::Value::Array();
      for (json::Value& rj : rjobs->elements()) {
        json::Value k = json::Value::Object();
        for (const char* f : {"name", "replicas"}) {
          if (json::Value* v = rj.Find(f)) k.Set(f, std::move(*v));
        }
        kept.PushBack(std::move(k));
      }
      slim.Set("replicatedJobs", std::move(kept));
    }
    *spec = std::move(slim);
  }
}

// ConfigMaps and Secrets not controlled by a TrainJob are cached as bare metadata: the cache must
// watch them all (an owner filter is not a selector) but never reads their data.
void TrimUnowned(json::Value& obj) {
  if (!ControllerTrainJob(obj).empty()) {
    SlimManagedFields(obj);
    return;
  }
  if (json::Value* meta = obj.Find("metadata")) meta->Erase("managedFields");
  obj.Erase("data");
  obj.Erase("binaryData");
  obj.Erase("stringData");
}

// Namespaces are cached as name, uid, resourceVersion and deletionTimestamp: all the reconciler
// reads (TrainJobReconciler::BeingDeleted).
void NamespaceMetadata(json::Value& ns) {
  json::Value* meta = ns.Find("metadata");
  json::Value slim = json::Value::Object();
  if (meta != nullptr) {
    for (const char* k :
         {"name", "uid", "resourceVersion", "creationTimestamp", "deletionTimestamp"}) {
      if (json::Value* v = meta->Find(k)) slim.Set(k, std::move(*v));
    }
  }
  ns.Erase("spec");
  ns.Erase("status");
  ns.Set("metadata", std::move(slim));
}

class ManagerImpl final : public Manager {
 public:
  explicit ManagerImpl(const Options& o) : options_(o) {}

  Status Init(service::Frame& frame);
  Status Run(std::stop_token stop) override;

 private:
  informer::Informer& AddInformer(const kube::GroupVersionResource& gvr,
                                  const framework::GroupVersionKind& gvk,
                                  std::function<void(json::Value&)> transform = {},
                                  bool strip = true);
  void EnqueueTrainJob(const std::string& key, const informer::Informer& from);
  void WireHandlers();
  void StartControllers();
  void StopControllers();

  const Options options_;
  std::unique_ptr<kube::CurlClient> client_;
  std::string identity_;
  std::string lease_namespace_;
  std::vector<std::unique_ptr<informer::Informer>> informers_;
  informer::Informer* trainjobs_ = nullptr;
  informer::Informer* trs_ = nullptr;
  informer::Informer* ctrs_ = nullptr;
  // Not in informers_: nothing waits for it (see Init).
  std::unique_ptr<informer::Informer> namespaces_;
  CacheReader cache_;
  // Held events that were not our echo go straight to the queue: they are live changes.
  OwnWrites own_writes_{[this](const std::string& key) {
    if (!key.empty()) trainjob_pool_->Add(key);
  }};
  std::unique_ptr<OverlayReader> overlay_;
  std::unique_ptr<core::Runtimes> runtimes_;
  std::unique_ptr<kube::EventRecorder> events_;
  std::unique_ptr<PrometheusWorkqueueMetrics> queue_metrics_;
  std::unique_ptr<TrainJobMetrics> trainjob_metrics_;
  std::unique_ptr<TrainJobReconciler> trainjob_reconciler_;
  std::unique_ptr<RuntimeReconciler> tr_reconciler_, ctr_reconciler_;
  std::unique_ptr<WorkerPool> trainjob_pool_, tr_pool_, ctr_pool_;
  std::mutex mu_;
  bool controllers_running_ = false;
};

informer::Informer& ManagerImpl::AddInformer(const kube::GroupVersionResource& gvr,
                                             const framework::GroupVersionKind& gvk,
                                             std::function<void(json::Value&)> transform,
                                             bool strip) {
  informer::InformerOptions io;
  io.gvr = gvr;
  io.transform = std::move(transform);
  io.strip_managed_fields = strip;
  io.name = gvr.resource;
  informers_.push_back(std::make_unique<informer::Informer>(*client_, std::move(io)));
  cache_.Add(gvk, &informers_.back()->store());
  return *informers_.back();
}

Status ManagerImpl::Init(service::Frame& frame) {
  ASSIGN_OR_RETURN(kube::RestConfig rest, kube::LoadConfig(options_.kubeconfig));
  lease_namespace_ = options_.leader_election_namespace.empty()
                         ? rest.default_namespace
                         : options_.leader_election_namespace;
  kube::ClientOptions co;
  co.qps = options_.kube_api_qps;
  co.burst = options_.kube_api_burst;
  co.user_agent = "trainer-controller";
  ASSIGN_OR_RETURN(client_, kube::CurlClient::New(std::move(rest), co));
  identity_ = leader::DefaultIdentity();

  metrics::Registry& registry = frame.registry();
  queue_metrics_ = std::make_unique<PrometheusWorkqueueMetrics>(registry);
  trainjob_metrics_ = std::make_unique<TrainJobMetrics>(registry);

  trainjobs_ = &AddInformer(kube::kTrainJobs, {api::kGroup, api::kVersion, api::kTrainJobKind});
  trs_ = &AddInformer(kube::kTrainingRuntimes, framework::TrainingRuntimeGVK());
  ctrs_ = &AddInformer(kube::kClusterTrainingRuntimes, framework::ClusterTrainingRuntimeGVK());
  AddInformer(kube::kJobSets, framework::JobSetGVK(), TrimJobSet, /*strip=*/false);
  AddInformer(kube::kConfigMaps, framework::ConfigMapGVK(), TrimUnowned, /*strip=*/false);
  AddInformer(kube::kSecrets, {"", "v1", "Secret"}, TrimUnowned, /*strip=*/false);
  for (const kube::GroupVersionKind* gvk :
       {&kube::kSchedulerPluginsPodGroupKind, &kube::kVolcanoPodGroupKind}) {
    StatusOr<bool> installed = kube::IsInstalled(*client_, *gvk);
    if (installed.ok() && *installed) {
      ASSIGN_OR_RETURN(const kube::ResourceMapping* m, kube::MappingFor(*gvk));
      // The applied-hash rule needs the managers to see someone else's edit of a suspended
      // TrainJob's PodGroup and take it back, as upstream's re-apply does.
      AddInformer(m->gvr, {gvk->group, gvk->version, gvk->kind}, SlimManagedFields,
                  /*strip=*/false);
    }
  }
  // Namespaces, so that a TrainJob whose namespace is being deleted gets no writes (every one
  // would be refused) and no confirming reads. Neither readiness nor the workers wait for this
  // cache: until it has synced, or without the RBAC to list namespaces, passes behave as if no
  // namespace were being deleted, as before.
  informer::InformerOptions nso;
  nso.gvr = kube::kNamespaces;
  nso.transform = NamespaceMetadata;
  nso.name = "namespaces";
  namespaces_ = std::make_unique<informer::Informer>(*client_, std::move(nso));
  cache_.Add({"", "v1", "Namespace"}, &namespaces_->store());
  RETURN_IF_ERROR(trainjobs_->AddIndexer(kIndexTrainingRuntime, [](const json::Value& o) {
    return RuntimeIndex(o, api::kTrainingRuntimeKind);
  }));
  RETURN_IF_ERROR(trainjobs_->AddIndexer(kIndexClusterTrainingRuntime, [](const json::Value& o) {
    return RuntimeIndex(o, api::kClusterTrainingRuntimeKind);
  }));

  overlay_ = std::make_unique<OverlayReader>(cache_, &own_writes_);
  ASSIGN_OR_RETURN(runtimes_, core::Runtimes::New(*overlay_, [] {
                     return kube::FormatTime(std::chrono::system_clock::now());
                   }));
  events_ =
      std::make_unique<kube::EventRecorder>(*client_, kTrainJobReportingController, identity_);

  TrainJobReconciler::Deps deps;
  deps.reader = overlay_.get();
  deps.overlay = overlay_.get();
  deps.writer = client_.get();
  deps.runtimes = [this](std::string_view key) { return runtimes_->Find(key); };
  deps.events = events_.get();
  deps.observer = trainjob_metrics_.get();
  deps.get_live = [this](std::string_view ns, std::string_view name) {
    return client_->Get(kube::kTrainJobs, ns, name);
  };
  // A pass applies up to ~3 objects in a wave; the worker applies one of them itself.
  trainjob_reconciler_ = std::make_unique<TrainJobReconciler>(
      std::move(deps),
      ReconcilerOptions{.lifecycle_conditions = options_.lifecycle_conditions,
                        .apply_threads = 2 * static_cast<size_t>(options_.trainjob_workers)});

  auto in_use = [this](bool cluster) {
    return [this, cluster](std::string_view ns, std::string_view name) {
      return cluster ? !trainjobs_->store().KeysByIndex(kIndexClusterTrainingRuntime, name).empty()
                     : !trainjobs_->store()
                            .KeysByIndex(kIndexTrainingRuntime, kube::ObjectKey(ns, name))
                            .empty();
    };
  };
  tr_reconciler_ = std::make_unique<RuntimeReconciler>(
      RuntimeReconciler::Deps{&cache_, client_.get(), in_use(false)}, false,
      options_.protect_runtimes_in_use);
  ctr_reconciler_ = std::make_unique<RuntimeReconciler>(
      RuntimeReconciler::Deps{&cache_, client_.get(), in_use(true)}, true,
      options_.protect_runtimes_in_use);

  auto split = [](const std::string& key) { return kube::SplitObjectKey(key); };
  trainjob_pool_ = std::make_unique<WorkerPool>(
      WorkerPoolOptions{.name = kTrainJobControllerName,
                        .workers = options_.trainjob_workers,
                        .reconcile =
                            [this, split](const std::string& key) {
                              auto [ns, name] = split(key);
                              return trainjob_reconciler_->Reconcile(ns, name);
                            }},
      registry, queue_metrics_.get());
  tr_pool_ = std::make_unique<WorkerPool>(
      WorkerPoolOptions{.name = kTrainingRuntimeControllerName,
                        .workers = options_.runtime_workers,
                        .reconcile =
                            [this, split](const std::string& key) {
                              auto [ns, name] = split(key);
                              return tr_reconciler_->Reconcile(ns, name);
                            }},
      registry, queue_metrics_.get());
  ctr_pool_ = std::make_unique<WorkerPool>(
      WorkerPoolOptions{
          .name = kClusterTrainingRuntimeControllerName,
          .workers = options_.runtime_workers,
          .reconcile =
              [this](const std::string& key) { return ctr_reconciler_->Reconcile("", key); }},
      registry, queue_metrics_.get());
  WireHandlers();
  frame.probes().AddReadyz("readyz", [this]() -> Status {
    for (const auto& i : informers_) {
      if (!i->HasSynced()) return UnavailableError("caches are not synced");
    }
    return OkStatus();
  });
  return OkStatus();
}

void ManagerImpl::EnqueueTrainJob(const std::string& key, const informer::Informer& from) {
  if (key.empty()) return;
  // Keys from a cache's first list go behind live events, so after a restart a new TrainJob is
  // served at once rather than after every converged one.
  if (from.HasSynced()) {
    trainjob_pool_->Add(key);
  } else {
    trainjob_pool_->AddBackground(key);
  }
}

void ManagerImpl::WireHandlers() {
  informer::Informer& tj = *trainjobs_;
  auto runtime_of = [this](const json::Value& o) {
    for (const std::string& k : RuntimeIndex(o, api::kTrainingRuntimeKind)) tr_pool_->Add(k);
    for (const std::string& k : RuntimeIndex(o, api::kClusterTrainingRuntimeKind)) {
      ctr_pool_->Add(k);
    }
  };
  const bool protect = options_.protect_runtimes_in_use;
  tj.AddEventHandler({.on_add =
                          [this, &tj, runtime_of, protect](const json::Value& o) {
                            EnqueueTrainJob(kube::ObjectKeyOf(o), tj);
                            if (protect) runtime_of(o);
                          },
                      .on_update =
                          [this, &tj](const json::Value&, const json::Value& o) {
                            EnqueueTrainJob(kube::ObjectKeyOf(o), tj);
                          },
                      .on_delete =
                          [this, &tj, runtime_of, protect](const json::Value& o) {
                            EnqueueTrainJob(kube::ObjectKeyOf(o), tj);
                            if (protect) runtime_of(o);
                          }});
  for (const auto& inf : informers_) {
    informer::Informer* i = inf.get();
    if (i == trainjobs_ || i == trs_ || i == ctrs_) continue;
    // The events of our own applies are skipped: the pass that wrote them saw the result.
    i->AddEventHandler({.on_add =
                            [this, i](const json::Value& o) {
                              std::string key = ControllerTrainJob(o);
                              if (own_writes_.Absorb(o, {key})) return;
                              EnqueueTrainJob(key, *i);
                            },
                        .on_update =
                            [this, i](const json::Value& old_obj, const json::Value& o) {
                              std::string key = ControllerTrainJob(o);
                              std::string old_key = ControllerTrainJob(old_obj);
                              std::vector<std::string> owners{key};
                              if (old_key != key) owners.push_back(old_key);
                              if (own_writes_.Absorb(o, owners)) return;
                              for (const std::string& k : owners) EnqueueTrainJob(k, *i);
                            },
                        .on_delete =
                            [this, i](const json::Value& o) {
                              std::string key = ControllerTrainJob(o);
                              if (!key.empty()) trainjob_reconciler_->ConfirmNextPass(key);
                              EnqueueTrainJob(key, *i);
                            }});
  }
  // Runtime events: the runtime controllers, and TrainJobs still waiting for their runtime
  // (no snapshot yet: a TrainJob with a snapshot never reads the live runtime again).
  auto retry_waiting = [this](const char* index, const std::string& value,
                              const informer::Informer& from) {
    const informer::Store* cms = cache_.StoreFor("", "ConfigMap");
    for (const std::string& key : trainjobs_->store().KeysByIndex(index, value)) {
      auto [ns, name] = kube::SplitObjectKey(key);
      if (cms != nullptr && cms->Has(kube::ObjectKey(ns, name + "-runtime-snapshot"))) continue;
      // A snapshot missing from a synced cache may have gone with its TrainJob (see
      // ConfirmNextPass); during the first lists absence means nothing yet.
      if (from.HasSynced()) trainjob_reconciler_->ConfirmNextPass(key);
      EnqueueTrainJob(key, from);
    }
  };
  trs_->AddEventHandler({.on_add =
                             [this, retry_waiting](const json::Value& o) {
                               tr_pool_->Add(kube::ObjectKeyOf(o));
                               retry_waiting(kIndexTrainingRuntime, kube::ObjectKeyOf(o), *trs_);
                             },
                         .on_update =
                             [this, retry_waiting](const json::Value&, const json::Value& o) {
                               tr_pool_->Add(kube::ObjectKeyOf(o));
                               retry_waiting(kIndexTrainingRuntime, kube::ObjectKeyOf(o), *trs_);
                             },
                         .on_delete = [](const json::Value&) {}});
  ctrs_->AddEventHandler(
      {.on_add =
           [this, retry_waiting](const json::Value& o) {
             ctr_pool_->Add(std::string(kube::Name(o)));
             retry_waiting(kIndexClusterTrainingRuntime, std::string(kube::Name(o)), *ctrs_);
           },
       .on_update =
           [this, retry_waiting](const json::Value&, const json::Value& o) {
             ctr_pool_->Add(std::string(kube::Name(o)));
             retry_waiting(kIndexClusterTrainingRuntime, std::string(kube::Name(o)), *ctrs_);
           },
       .on_delete = [](const json::Value&) {}});
}

void ManagerImpl::StartControllers() {
  std::lock_guard<std::mutex> lock(mu_);
  if (controllers_running_) return;
  controllers_running_ = true;
  log::Info("starting controllers",
            {{"trainjob_workers", std::to_string(options_.trainjob_workers)}});
  trainjob_pool_->Start();
  tr_pool_->Start();
  ctr_pool_->Start();
}

void ManagerImpl::StopControllers() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!controllers_running_) return;
  controllers_running_ = false;
  log::Info("stopping controllers: waiting for in-flight reconciles");
  trainjob_pool_->Stop();
  tr_pool_->Stop();
  ctr_pool_->Stop();
}

Status ManagerImpl::Run(std::stop_token stop) {
  namespaces_->Start();
  for (const auto& i : informers_) i->Start();
  // Workers read only synced caches (controller-runtime waits the same way): an unsynced cache
  // would report a present runtime or snapshot as missing.
  for (const auto& i : informers_) {
    while (!i->WaitForSync(std::chrono::milliseconds(200))) {
      if (stop.stop_requested()) {
        for (const auto& j : informers_) j->Stop();
        namespaces_->Stop();
        return OkStatus();
      }
    }
  }
  log::Info("caches synced", {{"informers", std::to_string(informers_.size())}});
  // The first lists' pages were parsed into DOMs and freed; hand that heap back to the kernel
  // so steady-state RSS reflects the compact caches.
  malloc_trim(0);

  Status result;
  if (!options_.leader_elect) {
    StartControllers();
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, stop, [] { return false; });
    StopControllers();
  } else {
    std::stop_source elector_stop;
    std::atomic<bool> lost{false};
    std::atomic<bool> done{false};
    leader::LeaderElector elector(
        *client_,
        leader::LeaderElectionConfig{.lease_namespace = lease_namespace_,
                                     .lease_name = options_.leader_election_id,
                                     .identity = identity_,
                                     .lease_duration = options_.lease_duration,
                                     .renew_deadline = options_.renew_deadline,
                                     .retry_period = options_.retry_period},
        leader::LeaderCallbacks{.on_started_leading = [this] { StartControllers(); },
                                .on_stopped_leading =
                                    [this, &elector_stop, &lost] {
                                      if (!elector_stop.stop_requested()) lost = true;
                                      StopControllers();
                                    },
                                .on_new_leader =
                                    [](const std::string& id) {
                                      log::Info("leader", {{"identity", id}});
                                    }});
    std::thread t([&] {
      elector.Run(elector_stop.get_token());
      done = true;
    });
    std::mutex m;
    std::condition_variable_any cv;
    {
      std::unique_lock<std::mutex> lock(m);
      while (!stop.stop_requested() && !done) {
        cv.wait_for(lock, stop, std::chrono::milliseconds(200), [] { return false; });
      }
    }
    // Finish in-flight work before the Lease is released, so the next leader never races us.
    StopControllers();
    elector_stop.request_stop();
    t.join();
    if (lost && !stop.stop_requested()) {
      result = UnavailableError("leader election lost");
    }
  }
  for (const auto& i : informers_) i->Stop();
  namespaces_->Stop();
  return result;
}

}  // namespace

StatusOr<std::unique_ptr<service::Runnable>> Manager::New(const Options& options,
                                                          service::Frame& frame) {
  auto m = std::make_unique<ManagerImpl>(options);
  RETURN_IF_ERROR(m->Init(frame));
  return std::unique_ptr<service::Runnable>(std::move(m));
}

}  // namespace trainer::controller
