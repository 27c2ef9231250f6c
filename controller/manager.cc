// The wiring of trainer-controller (see manager.h).
#include "controller/manager.h"

#include <malloc.h>

#include <algorithm>
#include <atomic>
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
#include "common/metrics/workqueue.h"
#include "controller/cache_reader.h"
#include "controller/caches.h"
#include "controller/metrics.h"
#include "controller/overlay_reader.h"
#include "controller/own_writes.h"
#include "controller/progress.h"
#include "controller/runtime_reconciler.h"
#include "controller/syncing_reader.h"
#include "controller/trainjob_reconciler.h"
#include "controller/worker_pool.h"
#include "runtime/api/kinds.h"
#include "runtime/core/registry.h"
#include "runtime/features/features.h"
#include "runtime/framework/indexer.h"

namespace trainer::controller {

namespace {

using kube::GroupVersionKind;

// JobSet is not optional: every TrainJob becomes one. Without its CRD the JobSet cache never
// syncs, so the controller stays not ready and never campaigns for the Lease; this says why, in
// the log at start and on every failed readiness probe.
constexpr std::string_view kJobSetMissing =
    "JobSet is not installed: the CRD jobsets.jobset.x-k8s.io is missing. trainer-controller "
    "turns every TrainJob into a JobSet and waits until the CRD exists; install JobSet v0.12.0 "
    "(kubectl apply --server-side -k deploy/overlays/jobset, or the chart's jobset.install)";

// A kind the controller watches for the plugins, and how its events map to TrainJobs.
struct WatchedKind {
  informer::Informer* informer = nullptr;
  bool owned = false;                             // the controlling TrainJob
  std::vector<framework::TrainJobsFor> mappings;  // plugins' mappings
};

class ManagerImpl final : public Manager {
 public:
  ManagerImpl(const Options& o, kube::Client* client) : options_(o), client_(client) {}

  Status Init(service::Frame& frame);
  Status Run(std::stop_token stop) override;

 private:
  Status NewClient();
  informer::Informer& AddInformer(const GroupVersionKind& gvk, informer::InformerOptions io);
  Status AddTrainJobAndRuntimeCaches();
  void AddNamespaceCache();
  Status AddWatchedCaches();
  Status AddIndexes();
  void NewReconcilers();
  void NewPools(metrics::Registry& registry);
  void WireTrainJobEvents();
  void WireRuntimeEvents();
  void WireWatchedEvents(const WatchedKind& kind);
  void WireProgress(metrics::Registry& registry);
  bool TrainJobStatusEnabled() const {
    return plugin_config_.feature_gates.Enabled(features::kTrainJobStatus);
  }
  bool IsWebhookSecret(const json::Value& obj) const {
    return kube::Namespace(obj) == plugin_config_.operator_namespace &&
           kube::Name(obj) == plugin_config_.webhook_secret_name;
  }
  // Trims an applied object as its kind's cache does (for the overlay); kinds without a cache
  // stay whole. Reads watched_ only, which is complete before any pass runs.
  void ShapeAsCached(json::Value& obj) const;
  void RetryWaiting(const char* index, const std::string& value, const informer::Informer& from);
  void EnqueueTrainJob(const std::string& key, const informer::Informer& from) {
    EnqueueTrainJob(key, from.HasSynced());
  }
  void EnqueueTrainJob(const std::string& key, bool live);
  void StartControllers();
  void StopControllers();
  std::vector<informer::Informer*> AllCaches() const;
  std::vector<informer::Informer*> ServingCaches() const;
  bool WaitForCaches(const std::vector<informer::Informer*>& caches, std::stop_token stop);
  void SyncRest(std::stop_token stop);
  Status CachesSynced() const;
  Status RunLeading(std::stop_token stop);

  const Options options_;
  std::unique_ptr<kube::CurlClient> own_client_;
  kube::Client* client_;
  std::string identity_;
  std::string lease_namespace_;
  std::vector<std::unique_ptr<informer::Informer>> informers_;
  informer::Informer* trainjobs_ = nullptr;
  informer::Informer* trs_ = nullptr;
  informer::Informer* ctrs_ = nullptr;
  informer::Informer* jobsets_ = nullptr;
  // client-go's leader_election_master_status for the Lease, with --leader-elect.
  prometheus::Gauge* master_status_ = nullptr;
  // Not in informers_: nothing waits for it (see AddNamespaceCache).
  std::unique_ptr<informer::Informer> namespaces_;
  std::map<GroupVersionKind, WatchedKind> watched_;
  CacheReader cache_;
  // The caches, and the apiserver for owned kinds still on their first list (serve_early_).
  SyncingReader syncing_{cache_};
  // Live TrainJob events are served once the TrainJob and runtime caches have synced, while the
  // owned kinds' caches still list (their keys wait in the held background lane). Only when the
  // JobSet CRD is installed at start: without it the controller stays not ready.
  bool serve_early_ = false;
  // Held events that were not our echo go straight to the queue: they are live changes.
  OwnWrites own_writes_{[this](const std::string& key) {
    if (!key.empty()) trainjob_pool_->Add(key);
  }};
  std::unique_ptr<OverlayReader> overlay_;
  std::unique_ptr<core::Runtimes> runtimes_;
  // What plugins read of the configuration (feature gates, the status server's Service, port
  // and certificate Secret).
  framework::Config plugin_config_;
  std::shared_ptr<ProgressMetrics> progress_;  // gate TrainJobStatus
  std::unique_ptr<kube::EventRecorder> events_;
  std::unique_ptr<metrics::PrometheusWorkqueueMetrics> queue_metrics_;
  std::unique_ptr<TrainJobMetrics> trainjob_metrics_;
  std::unique_ptr<TrainJobReconciler> trainjob_reconciler_;
  std::unique_ptr<RuntimeReconciler> tr_reconciler_, ctr_reconciler_;
  std::unique_ptr<WorkerPool> trainjob_pool_, tr_pool_, ctr_pool_;
  std::mutex mu_;
  bool controllers_running_ = false;
};

Status ManagerImpl::NewClient() {
  std::string default_namespace = "default";
  if (client_ == nullptr) {
    ASSIGN_OR_RETURN(kube::RestConfig rest, kube::LoadConfig(options_.kubeconfig));
    default_namespace = kube::OperatorNamespace(rest);
    kube::ClientOptions co;
    co.qps = options_.kube_api_qps;
    co.burst = options_.kube_api_burst;
    co.user_agent = "trainer-controller";
    ASSIGN_OR_RETURN(own_client_, kube::CurlClient::New(std::move(rest), co));
    client_ = own_client_.get();
  }
  lease_namespace_ = options_.leader_election_namespace.empty()
                         ? default_namespace
                         : options_.leader_election_namespace;
  identity_ = leader::DefaultIdentity();
  plugin_config_.feature_gates = options_.feature_gates;
  plugin_config_.operator_namespace = options_.webhook_secret_namespace.empty()
                                          ? default_namespace
                                          : options_.webhook_secret_namespace;
  plugin_config_.webhook_service_name = options_.webhook_service_name;
  plugin_config_.webhook_secret_name = options_.webhook_secret_name;
  plugin_config_.status_server_port = options_.status_server_port;
  return OkStatus();
}

Status ManagerImpl::Init(service::Frame& frame) {
  RETURN_IF_ERROR(NewClient());
  metrics::Registry& registry = frame.registry();
  queue_metrics_ = std::make_unique<metrics::PrometheusWorkqueueMetrics>(registry);
  trainjob_metrics_ = std::make_unique<TrainJobMetrics>(registry);
  overlay_ = std::make_unique<OverlayReader>(syncing_, &own_writes_,
                                             [this](json::Value& obj) { ShapeAsCached(obj); });
  ASSIGN_OR_RETURN(runtimes_,
                   core::Runtimes::New(
                       *overlay_, [] { return kube::FormatTime(std::chrono::system_clock::now()); },
                       plugins::Registry(), plugin_config_));
  RETURN_IF_ERROR(AddTrainJobAndRuntimeCaches());
  RETURN_IF_ERROR(AddWatchedCaches());
  if (auto it = watched_.find(api::kJobSetGVK); it != watched_.end()) {
    jobsets_ = it->second.informer;
  }
  if (StatusOr<bool> jobset = kube::IsInstalled(*client_, kube::kJobSetKind); jobset.ok()) {
    if (!*jobset) log::Error(kJobSetMissing);
    serve_early_ = *jobset;
  }
  RETURN_IF_ERROR(AddIndexes());
  AddNamespaceCache();
  NewReconcilers();
  NewPools(registry);
  if (serve_early_) trainjob_pool_->HoldBackground();
  WireTrainJobEvents();
  WireRuntimeEvents();
  for (const auto& [gvk, kind] : watched_) {
    WireWatchedEvents(kind);
  }
  WireProgress(registry);
  if (options_.leader_elect) {
    master_status_ = &leader::MasterStatusGauge(registry, options_.leader_election_id);
  }
  frame.probes().AddReadyz("readyz", [this] { return CachesSynced(); });
  return OkStatus();
}

// OK once the caches that serving needs have their first list; otherwise which caches wait, and
// why. A JobSet CRD that went missing is named even while its cache is not one of them.
Status ManagerImpl::CachesSynced() const {
  if (jobsets_ != nullptr && !jobsets_->HasSynced() && IsNotFound(jobsets_->LastError())) {
    return UnavailableError(std::string(kJobSetMissing));
  }
  std::string waiting;
  for (const informer::Informer* i : ServingCaches()) {
    if (i->HasSynced()) continue;
    const Status why = i->LastError();
    waiting += (waiting.empty() ? "" : ", ") + i->Name();
    if (!why.ok()) waiting += " (" + why.message() + ")";
  }
  if (waiting.empty()) return OkStatus();
  return UnavailableError("caches are not synced: " + waiting);
}

informer::Informer& ManagerImpl::AddInformer(const GroupVersionKind& gvk,
                                             informer::InformerOptions io) {
  informers_.push_back(std::make_unique<informer::Informer>(*client_, std::move(io)));
  cache_.Add(gvk, &informers_.back()->store());
  return *informers_.back();
}

Status ManagerImpl::AddTrainJobAndRuntimeCaches() {
  auto plain = [](const kube::GroupVersionResource& gvr) {
    return informer::InformerOptions{.gvr = gvr};
  };
  trainjobs_ = &AddInformer(api::kTrainJobGVK, plain(kube::kTrainJobs));
  trs_ = &AddInformer(api::kTrainingRuntimeGVK, plain(kube::kTrainingRuntimes));
  ctrs_ = &AddInformer(api::kClusterTrainingRuntimeGVK, plain(kube::kClusterTrainingRuntimes));
  RETURN_IF_ERROR(trainjobs_->AddIndexer(framework::kTrainJobRuntimeRefKey,
                                         framework::TrainJobTrainingRuntimeRef));
  return trainjobs_->AddIndexer(framework::kTrainJobClusterRuntimeRefKey,
                                framework::TrainJobClusterTrainingRuntimeRef);
}

// Namespaces, so that a TrainJob whose namespace is being deleted gets no writes (every one would
// be refused) and no confirming reads. Neither readiness nor the workers wait for this cache:
// until it has synced, or without the RBAC to list namespaces, passes behave as if no namespace
// were being deleted.
void ManagerImpl::AddNamespaceCache() {
  namespaces_ = std::make_unique<informer::Informer>(
      *client_,
      informer::InformerOptions{.gvr = kube::kNamespaces, .transform = NamespaceMetadata});
  cache_.Add({"", "v1", "Namespace"}, &namespaces_->store());
}

// One informer per kind the plugins watch (upstream: each plugin's ReconcilerBuilders), skipping
// the watches of kinds that are not installed.
Status ManagerImpl::AddWatchedCaches() {
  std::map<GroupVersionKind, bool> installed;
  std::vector<framework::Watch> watches = runtimes_->Watches();
  // The TrainJobStatus plugin reads the webhook certificate Secret (and owns no Secret).
  if (TrainJobStatusEnabled()) watches.push_back({.gvk = api::kSecretGVK});
  for (const framework::Watch& w : watches) {
    if (w.only_if_installed) {
      const GroupVersionKind& need = *w.only_if_installed;
      if (!installed.contains(need)) {
        StatusOr<bool> is = kube::IsInstalled(*client_, {need.group, need.version, need.kind});
        installed[need] = is.ok() && *is;
        if (!installed[need]) {
          log::Info("not watching what needs a kind that is not installed",
                    {{"kind", need.kind + "." + need.group}});
        }
      }
      if (!installed[need]) continue;
    }
    WatchedKind& kind = watched_[w.gvk];
    if (kind.informer == nullptr) {
      ASSIGN_OR_RETURN(const kube::ResourceMapping* m,
                       kube::MappingFor({w.gvk.group, w.gvk.version, w.gvk.kind}));
      informer::InformerOptions io = CacheOptions(w, m->gvr);
      if (w.gvk == api::kSecretGVK && TrainJobStatusEnabled()) {
        io.strip_managed_fields = false;
        io.transform = [this, owned = std::move(io.transform)](json::Value& o) {
          if (IsWebhookSecret(o)) {
            KeepCACertOnly(o);
          } else if (owned) {
            owned(o);
          }
        };
      }
      kind.informer = &AddInformer(w.gvk, std::move(io));
      const informer::Informer* inf = kind.informer;
      syncing_.Add(w.gvk, {.synced = [inf] { return inf->HasSynced(); },
                           .get = [this, inf, gvr = m->gvr](std::string_view ns,
                                                            std::string_view name) {
                             StatusOr<json::Value> obj = client_->Get(gvr, ns, name);
                             if (obj.ok()) inf->Prepare(*obj);
                             return obj;
                           }});
    }
    kind.owned = kind.owned || w.owned_by_trainjob;
    if (w.trainjobs_for != nullptr && std::find(kind.mappings.begin(), kind.mappings.end(),
                                                w.trainjobs_for) == kind.mappings.end()) {
      kind.mappings.push_back(w.trainjobs_for);
    }
  }
  return OkStatus();
}

Status ManagerImpl::AddIndexes() {
  for (const framework::Index& index : runtimes_->Indexes()) {
    informer::Informer* inf = nullptr;
    if (index.gvk == api::kTrainingRuntimeGVK) inf = trs_;
    if (index.gvk == api::kClusterTrainingRuntimeGVK) inf = ctrs_;
    if (index.gvk == api::kTrainJobGVK) inf = trainjobs_;
    if (auto it = watched_.find(index.gvk); it != watched_.end()) inf = it->second.informer;
    if (inf == nullptr) continue;  // a kind not watched (not installed)
    RETURN_IF_ERROR(inf->AddIndexer(index.name, index.values));
  }
  return OkStatus();
}

void ManagerImpl::NewReconcilers() {
  events_ =
      std::make_unique<kube::EventRecorder>(*client_, kTrainJobReportingController, identity_);
  TrainJobReconciler::Deps deps;
  deps.reader = overlay_.get();
  deps.overlay = overlay_.get();
  deps.writer = client_;
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
  auto in_use = [this](const char* index) {
    return [this, index](std::string_view ns, std::string_view name) {
      std::string value = ns.empty() ? std::string(name) : kube::ObjectKey(ns, name);
      return !trainjobs_->store().KeysByIndex(index, value).empty();
    };
  };
  tr_reconciler_ = std::make_unique<RuntimeReconciler>(
      RuntimeReconciler::Deps{&cache_, client_, in_use(framework::kTrainJobRuntimeRefKey)}, false,
      options_.protect_runtimes_in_use);
  ctr_reconciler_ = std::make_unique<RuntimeReconciler>(
      RuntimeReconciler::Deps{&cache_, client_, in_use(framework::kTrainJobClusterRuntimeRefKey)},
      true, options_.protect_runtimes_in_use);
}

void ManagerImpl::NewPools(metrics::Registry& registry) {
  auto pool = [&](const char* name, const kube::GroupVersionKind& gvk, int workers,
                  RuntimeReconciler* runtime) {
    return std::make_unique<WorkerPool>(
        WorkerPoolOptions{.name = name,
                          .group = gvk.group,
                          .kind = gvk.kind,
                          .workers = workers,
                          .reconcile =
                              [this, runtime](const std::string& key) {
                                auto [ns, name] = kube::SplitObjectKey(key);
                                return runtime != nullptr
                                           ? runtime->Reconcile(ns, name)
                                           : trainjob_reconciler_->Reconcile(ns, name);
                              }},
        registry, queue_metrics_.get());
  };
  trainjob_pool_ =
      pool(kTrainJobControllerName, api::kTrainJobGVK, options_.trainjob_workers, nullptr);
  tr_pool_ = pool(kTrainingRuntimeControllerName, api::kTrainingRuntimeGVK,
                  options_.runtime_workers, tr_reconciler_.get());
  ctr_pool_ = pool(kClusterTrainingRuntimeControllerName, api::kClusterTrainingRuntimeGVK,
                   options_.runtime_workers, ctr_reconciler_.get());
}

void ManagerImpl::EnqueueTrainJob(const std::string& key, bool live) {
  if (key.empty()) return;
  // Keys from a cache's first list go behind live events, so after a restart a new TrainJob is
  // served at once rather than after every converged one.
  if (live) {
    trainjob_pool_->Add(key);
  } else {
    trainjob_pool_->AddBackground(key);
  }
}

void ManagerImpl::WireTrainJobEvents() {
  informer::Informer& tj = *trainjobs_;
  // With runtime protection, a TrainJob's arrival or departure changes its runtime's finalizer.
  auto runtime_of = [this](const json::Value& o) {
    if (!options_.protect_runtimes_in_use) return;
    for (const std::string& k : framework::TrainJobTrainingRuntimeRef(o)) tr_pool_->Add(k);
    for (const std::string& k : framework::TrainJobClusterTrainingRuntimeRef(o)) ctr_pool_->Add(k);
  };
  tj.AddEventHandler({.on_add =
                          [this, &tj, runtime_of](const json::Value& o) {
                            EnqueueTrainJob(kube::ObjectKeyOf(o), tj);
                            runtime_of(o);
                          },
                      .on_update =
                          [this, &tj, status = TrainJobStatusEnabled()](const json::Value& old_obj,
                                                                        const json::Value& o) {
                            // A progress report is the status server's business alone.
                            if (status && OnlyTrainerStatusChanged(old_obj, o)) return;
                            EnqueueTrainJob(kube::ObjectKeyOf(o), tj);
                          },
                      .on_delete =
                          [this, &tj, runtime_of](const json::Value& o) {
                            EnqueueTrainJob(kube::ObjectKeyOf(o), tj);
                            runtime_of(o);
                          }});
}

void ManagerImpl::ShapeAsCached(json::Value& obj) const {
  const GroupVersionKind gvk = GroupVersionKind::Of(obj);
  for (const auto& [watched, kind] : watched_) {
    if (watched.group == gvk.group && watched.kind == gvk.kind) {
      kind.informer->Prepare(obj);
      return;
    }
  }
}

// Runtime events: the runtime controllers, and TrainJobs still waiting for their runtime (no
// snapshot yet: a TrainJob with a snapshot never reads the live runtime again).
void ManagerImpl::RetryWaiting(const char* index, const std::string& value,
                               const informer::Informer& from) {
  const informer::Store* cms = cache_.StoreFor("", "ConfigMap");
  auto cms_informer = watched_.find(api::kConfigMapGVK);
  const bool snapshots_listed = cms_informer == watched_.end() ||
                                cms_informer->second.informer->HasSynced();
  for (const std::string& key : trainjobs_->store().KeysByIndex(index, value)) {
    auto [ns, name] = kube::SplitObjectKey(key);
    if (cms != nullptr && cms->Has(kube::ObjectKey(ns, name + "-runtime-snapshot"))) continue;
    // A snapshot missing from a synced cache may have gone with its TrainJob (see
    // ConfirmNextPass); during the first lists absence means nothing yet, and the key waits
    // for them in the background lane.
    const bool live = from.HasSynced() && snapshots_listed;
    if (live) trainjob_reconciler_->ConfirmNextPass(key);
    EnqueueTrainJob(key, live);
  }
}

void ManagerImpl::WireRuntimeEvents() {
  auto handlers = [this](informer::Informer* inf, WorkerPool* pool, const char* index) {
    auto on_change = [this, inf, pool, index](const json::Value& o) {
      pool->Add(kube::ObjectKeyOf(o));
      RetryWaiting(index, kube::ObjectKeyOf(o), *inf);
    };
    inf->AddEventHandler(
        {.on_add = on_change,
         .on_update =
             [on_change, pool](const json::Value& old_obj, const json::Value& o) {
               if (RuntimeChangeReachesTrainJobs(old_obj, o)) {
                 on_change(o);
               } else {
                 pool->Add(kube::ObjectKeyOf(o));  // its finalizer is the runtime controller's
               }
             },
         .on_delete = [](const json::Value&) {}});
  };
  handlers(trs_, tr_pool_.get(), framework::kTrainJobRuntimeRefKey);
  handlers(ctrs_, ctr_pool_.get(), framework::kTrainJobClusterRuntimeRefKey);
}

void ManagerImpl::WireWatchedEvents(const WatchedKind& kind) {
  informer::Informer* i = kind.informer;
  // The TrainJobs an event concerns; the events of our own applies are skipped (the pass that
  // wrote them saw the result).
  auto concerned = [this, kind](const json::Value* old_obj, const json::Value& o, bool deleted) {
    std::vector<std::string> keys;
    if (kind.owned) {
      keys.push_back(ControllerTrainJob(o));
      if (old_obj != nullptr && ControllerTrainJob(*old_obj) != keys[0]) {
        keys.push_back(ControllerTrainJob(*old_obj));
      }
      if (!deleted && own_writes_.Absorb(o, keys)) keys.clear();
      if (deleted && !keys[0].empty()) trainjob_reconciler_->ConfirmNextPass(keys[0]);
    }
    for (framework::TrainJobsFor map : kind.mappings) {
      for (std::string& k : map(o, cache_)) keys.push_back(std::move(k));
    }
    return keys;
  };
  auto enqueue = [this, i](const std::vector<std::string>& keys) {
    for (const std::string& k : keys) EnqueueTrainJob(k, *i);
  };
  i->AddEventHandler(
      {.on_add = [=](const json::Value& o) { enqueue(concerned(nullptr, o, false)); },
       .on_update = [=](const json::Value& old_obj,
                        const json::Value& o) { enqueue(concerned(&old_obj, o, false)); },
       .on_delete = [=](const json::Value& o) { enqueue(concerned(nullptr, o, true)); }});
}

// With TrainJobStatus: progress metrics from the TrainJob cache, and every TrainJob reconciled
// again when the webhook certificate's CA changes, so that their tls-config ConfigMaps follow.
void ManagerImpl::WireProgress(metrics::Registry& registry) {
  if (!TrainJobStatusEnabled()) return;
  progress_ = std::make_shared<ProgressMetrics>(options_.progress_stale_after);
  registry.AddCollectable(progress_);
  log::Info(
      "TrainJobStatus: trainer pods report to the status server",
      {{"service", plugin_config_.webhook_service_name + "." + plugin_config_.operator_namespace +
                       ".svc:" + std::to_string(options_.status_server_port)},
       {"secret", plugin_config_.operator_namespace + "/" + plugin_config_.webhook_secret_name}});
  ProgressMetrics* progress = progress_.get();
  trainjobs_->AddEventHandler(
      {.on_add = [progress](const json::Value& o) { progress->Observe(o); },
       .on_update = [progress](const json::Value&, const json::Value& o) { progress->Observe(o); },
       .on_delete = [progress](const json::Value& o) { progress->Forget(o); }});
  informer::Informer* secrets = watched_.at(api::kSecretGVK).informer;
  secrets->AddEventHandler(
      {.on_add = {},
       .on_update =
           [this, secrets](const json::Value& old_obj, const json::Value& o) {
             if (!IsWebhookSecret(o) || !secrets->HasSynced() ||
                 PublishedCAsOf(old_obj) == PublishedCAsOf(o)) {
               return;
             }
             log::Info("the webhook certificate's CA changed: updating every TrainJob's tls-config",
                       {{"secret", kube::ObjectKeyOf(o)}});
             for (const std::string& key : trainjobs_->store().Keys()) {
               trainjob_pool_->AddBackground(key);
             }
           },
       .on_delete = {}});
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

// Workers never read an unsynced cache as the truth (controller-runtime waits for every cache):
// one would report a present runtime or snapshot as missing. With serve_early_ they start once
// the TrainJobs and runtimes are listed, and read the owned kinds still listing from the
// apiserver (SyncingReader); otherwise every cache comes first. Every list starts at once either
// way: the apiserver encodes each list on one goroutine, so the JobSets' (the longest) overlaps
// the others rather than waiting for them.
std::vector<informer::Informer*> ManagerImpl::ServingCaches() const {
  if (serve_early_) return {trainjobs_, trs_, ctrs_};
  return AllCaches();
}

std::vector<informer::Informer*> ManagerImpl::AllCaches() const {
  std::vector<informer::Informer*> all;
  for (const auto& i : informers_) all.push_back(i.get());
  return all;
}

// False when stopped meanwhile.
bool ManagerImpl::WaitForCaches(const std::vector<informer::Informer*>& caches,
                                std::stop_token stop) {
  for (const informer::Informer* i : caches) {
    while (!i->WaitForSync(std::chrono::milliseconds(200))) {
      if (stop.stop_requested()) return false;
    }
  }
  return true;
}

// Once every cache has synced: the first lists' keys may run, and the lists' parsed pages, freed,
// go back to the kernel so steady-state RSS reflects the compact caches.
void ManagerImpl::SyncRest(std::stop_token stop) {
  if (!WaitForCaches(AllCaches(), stop)) return;
  log::Info("caches synced", {{"informers", std::to_string(informers_.size())}});
  trainjob_pool_->ReleaseBackground();
  malloc_trim(0);
}

Status ManagerImpl::Run(std::stop_token stop) {
  namespaces_->Start();
  for (const auto& i : informers_) i->Start();
  const std::vector<informer::Informer*> serving = ServingCaches();
  Status result;
  if (WaitForCaches(serving, stop)) {
    if (serve_early_) {
      const auto listing = std::count_if(informers_.begin(), informers_.end(),
                                         [](const auto& i) { return !i->HasSynced(); });
      log::Info("TrainJobs and runtimes listed: serving live events while the other kinds list",
                {{"listing", std::to_string(listing)}});
    }
    std::jthread rest([this](std::stop_token s) { SyncRest(s); });
    if (options_.leader_elect) {
      result = RunLeading(stop);
    } else {
      StartControllers();
      service::ServeUntilStopped().Run(stop).IgnoreError();
      StopControllers();
    }
  }
  for (const auto& i : informers_) i->Stop();
  namespaces_->Stop();
  return result;
}

// Controllers run while this replica holds the Lease; an error when it was lost.
Status ManagerImpl::RunLeading(std::stop_token stop) {
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
                                   .retry_period = options_.retry_period,
                                   .master_status = master_status_},
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
    return UnavailableError("leader election lost");
  }
  return OkStatus();
}

}  // namespace

StatusOr<std::unique_ptr<service::Runnable>> Manager::New(const Options& options,
                                                          service::Frame& frame,
                                                          kube::Client* client) {
  auto m = std::make_unique<ManagerImpl>(options, client);
  RETURN_IF_ERROR(m->Init(frame));
  return std::unique_ptr<service::Runnable>(std::move(m));
}

}  // namespace trainer::controller
