// Informer: a list-then-watch cache of one resource, client-go's SharedIndexInformer (Reflector
// + DeltaFIFO + Indexer) reduced to what our controllers use:
//  - lists page by page (each page cached before the next is requested; an expired continue
//    token falls back to one full list, as client-go's pager) and then watches from the list's
//    resourceVersion, with bookmarks;
//  - when a watch ends (server timeout, 5-10 min) it re-watches from the last resourceVersion
//    seen; on connection errors it retries with the reflector's backoff (800 ms -> 30 s, reset
//    after 2 min of health); on 410 Gone (the version was compacted) it relists and reconciles
//    the cache with the list (deletes for what vanished);
//  - optional label/field selectors, managedFields stripping and a transform to shrink objects;
//  - compact storage by default (common/informer/store.h), indexers, event handlers, HasSynced,
//    periodic resync.
// Threads: one watch thread per informer; handlers run on it, one event at a time, in stream
// order (resync updates come from a resync thread but are serialized with the rest). Handlers
// must be quick: enqueue a key, never block on the network.
//
//   informer::Informer trainjobs(client, {.gvr = kube::kTrainJobs});
//   trainjobs.AddIndexer("runtime", [](const json::Value& o) { ... });
//   trainjobs.AddEventHandler({.on_add = [&](const json::Value& o) { q.Add(kube::ObjectKeyOf(o));
//   }}); trainjobs.Start(); trainjobs.WaitForSync(std::chrono::seconds(60));
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "common/flowcontrol/backoff.h"
#include "common/informer/store.h"
#include "common/kube/client.h"

namespace trainer::informer {

struct InformerOptions {
  kube::GroupVersionResource gvr;
  std::string ns;  // "" = all namespaces
  std::string label_selector;
  std::string field_selector;
  bool strip_managed_fields = true;
  StoreMode store_mode = StoreMode::kCompact;
  // Further trimming before an object is cached and handed to handlers (e.g. drop status fields
  // nobody reads). Runs on the watch thread.
  std::function<void(json::Value&)> transform;
  // Parts of each object that strip_managed_fields and the transform drop whatever they hold
  // (e.g. {"spec", "replicatedJobs", "*", "template"} when the transform keeps only names):
  // lists and watch events leave them out while decoding, so they are never built. Naming anything
  // the cache keeps would lose it; metadata.managedFields is added when strip_managed_fields is
  // set.
  json::SkipPaths skip;
  std::chrono::milliseconds resync{0};  // 0 = no periodic resync
  int64_t page_size = 0;                // items per list request; 0 = one request (see ListPages)
  flowcontrol::BackoffPolicy backoff = flowcontrol::BackoffPolicy::Reflector();
  std::chrono::seconds watch_timeout{0};            // 0 = random 5-10 min
  std::chrono::milliseconds watch_idle_timeout{0};  // 0 = see kube::WatchOptions
  std::string name;  // for logs and probes; defaults to "<resource>.<group>" (see Name())
};

struct EventHandler {
  std::function<void(const json::Value& obj)> on_add;
  std::function<void(const json::Value& old_obj, const json::Value& new_obj)> on_update;
  // The last state known: the watch's DELETED object, or the cached one when a relist found the
  // object gone.
  std::function<void(const json::Value& obj)> on_delete;
};

class Informer {
 public:
  Informer(kube::Client& client, InformerOptions options);
  ~Informer();  // Stop()
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Before or after Start. A handler added after the cache has objects first receives an add
  // for each of them (as client-go does), then live events.
  Status AddIndexer(const std::string& name, IndexFunc fn) {
    return store_.AddIndexer(name, std::move(fn));
  }
  void AddEventHandler(EventHandler handler);

  void Start();
  void Stop();

  // True once the first list is in the cache and its adds were delivered.
  bool HasSynced() const { return synced_.load(); }
  // Waits for HasSynced; false on timeout or stop.
  bool WaitForSync(std::chrono::milliseconds timeout) const;

  // InformerOptions::name, else Go's GroupResource form: "podgroups.scheduling.volcano.sh".
  std::string Name() const;
  // Why the cache is not synced: the error of the latest failed list (OK before the first
  // attempt and once a list succeeds), e.g. NotFound while the resource is not served because its
  // CRD is not installed.
  Status LastError() const;

  const Store& store() const { return store_; }
  // Strips managedFields and runs the transform on `obj` as this informer does before caching
  // (InformerOptions), for objects that stand in for cached ones.
  void Prepare(json::Value& obj) const;
  std::string LastSyncResourceVersion() const;
  // What lists and watch events leave out of each object (InformerOptions::skip, and
  // managedFields when stripped).
  const json::SkipPaths& list_skip() const { return list_skip_; }

  // Counters for tests and debugging.
  int lists() const { return lists_.load(); }
  int watches() const { return watches_.load(); }

 private:
  void Run(std::stop_token stop);
  void ResyncLoop(std::stop_token stop);
  Status ListAndWatch(std::stop_token stop);
  Status ListPages(std::stop_token stop);
  // `seen` (null when the list cannot have missed anything cached) collects the listed keys.
  void ApplyListItem(json::Value item, std::unordered_set<std::string>* seen);
  void FinishList(const std::unordered_set<std::string>* seen, const std::string& rv);
  bool ApplyEvent(kube::WatchEvent& e);
  void Notify(const json::Value* old, const json::Value& obj);
  void SetResourceVersion(std::string_view rv);
  bool SleepFor(std::chrono::steady_clock::duration d, std::stop_token stop);

  kube::Client& client_;
  const InformerOptions options_;
  // options_.skip, and managedFields when stripped: what lists and watches leave out.
  const json::SkipPaths list_skip_;
  Store store_;
  flowcontrol::Backoff backoff_;

  std::mutex handlers_mu_;  // serializes handler calls and handler registration
  std::vector<EventHandler> handlers_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;  // sync waiters, sleeping reflector
  std::string last_rv_;
  Status last_error_;  // guarded by mu_
  std::atomic<bool> synced_{false};
  static constexpr int64_t kFallbackPage = 500;
  bool page_next_list_ = false;  // the last one-request list failed; watch thread only
  std::atomic<int> lists_{0};
  std::atomic<int> watches_{0};
  std::chrono::steady_clock::time_point started_;  // Start(), for the synced log
  std::jthread thread_;
  std::jthread resync_thread_;
};

}  // namespace trainer::informer
