// Informer implementation: the reflector loop, list reconciliation, event dispatch.
#include "common/informer/informer.h"

#include <unordered_set>

#include "common/kube/meta.h"
#include "common/log/log.h"

namespace trainer::informer {

using SteadyClock = std::chrono::steady_clock;

namespace {

json::SkipPaths ListSkip(const InformerOptions& o) {
  json::SkipPaths skip = o.skip;
  if (o.strip_managed_fields) skip.Add({"metadata", "managedFields"});
  return skip;
}

}  // namespace

Informer::Informer(kube::Client& client, InformerOptions options)
    : client_(client),
      options_(std::move(options)),
      list_skip_(ListSkip(options_)),
      store_(options_.store_mode),
      backoff_(options_.backoff) {}

Informer::~Informer() { Stop(); }

void Informer::AddEventHandler(EventHandler handler) {
  std::lock_guard<std::mutex> lock(handlers_mu_);
  if (handler.on_add) {
    for (const ObjectPtr& obj : store_.List()) handler.on_add(*obj);
  }
  handlers_.push_back(std::move(handler));
}

void Informer::Start() {
  if (thread_.joinable()) return;
  started_ = SteadyClock::now();
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
  if (options_.resync.count() > 0) {
    resync_thread_ = std::jthread([this](std::stop_token stop) { ResyncLoop(stop); });
  }
}

void Informer::Stop() {
  thread_.request_stop();
  resync_thread_.request_stop();
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (resync_thread_.joinable()) resync_thread_.join();
}

bool Informer::WaitForSync(std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return synced_.load(); });
}

std::string Informer::LastSyncResourceVersion() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_rv_;
}

void Informer::SetResourceVersion(std::string_view rv) {
  if (rv.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  last_rv_ = std::string(rv);
}

bool Informer::SleepFor(SteadyClock::duration d, std::stop_token stop) {
  // Registered before taking mu_: the callback runs inline if stop was already requested.
  std::stop_callback wake(stop, [this] {
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, d, [&] { return stop.stop_requested(); });
  return !stop.stop_requested();
}

void Informer::Prepare(json::Value& obj) const {
  if (options_.strip_managed_fields) kube::StripManagedFields(obj);
  if (options_.transform) options_.transform(obj);
}

namespace {

std::string InformerName(const InformerOptions& o) {
  if (!o.name.empty()) return o.name;
  // Resources of the same name in two groups (Volcano's and scheduler-plugins' "podgroups")
  // need the group to be told apart; the version does not.
  return o.gvr.group.empty() ? o.gvr.resource : o.gvr.resource + "." + o.gvr.group;
}

}  // namespace

void Informer::Run(std::stop_token stop) {
  const std::string name = InformerName(options_);
  while (!stop.stop_requested()) {
    Status s = ListAndWatch(stop);
    if (stop.stop_requested()) break;
    if (IsGone(s)) {
      log::Info("informer relisting: resource version too old",
                {{"informer", name}, {"error", s.message()}});
      continue;  // relist at once, as the reflector does
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_error_ = s;
    }
    const auto delay = backoff_.Next(SteadyClock::now());
    log::Warn(
        "informer list failed; retrying",
        {{"informer", name},
         {"error", s.ToString()},
         {"retry_in_ms",
          std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(delay).count())}});
    if (!SleepFor(delay, stop)) break;
  }
}

Status Informer::ListAndWatch(std::stop_token stop) {
  RETURN_IF_ERROR(ListPages(stop));

  const std::string name = InformerName(options_);
  while (!stop.stop_requested()) {
    kube::WatchOptions wo;
    wo.label_selector = options_.label_selector;
    wo.field_selector = options_.field_selector;
    wo.resource_version = LastSyncResourceVersion();
    wo.allow_bookmarks = true;
    wo.timeout = options_.watch_timeout;
    wo.idle_timeout = options_.watch_idle_timeout;
    wo.skip = &list_skip_;
    ++watches_;
    const auto started = SteadyClock::now();
    Status s = client_.Watch(
        options_.gvr, options_.ns, wo, [this](kube::WatchEvent& e) { return ApplyEvent(e); }, stop);
    if (stop.stop_requested()) return CancelledError("informer stopped");
    if (s.ok()) continue;  // the server closed the watch (its timeout): watch again
    if (IsGone(s)) return s;
    // A watch that ran healthy for a while proves the server fine: start backoff afresh.
    if (SteadyClock::now() - started > std::chrono::seconds(30)) backoff_.Reset();
    const auto delay = backoff_.Next(SteadyClock::now());
    log::Warn(
        "informer watch ended; re-watching from the last resource version",
        {{"informer", name},
         {"error", s.ToString()},
         {"resource_version", wo.resource_version},
         {"retry_in_ms",
          std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(delay).count())}});
    if (!SleepFor(delay, stop)) return CancelledError("informer stopped");
  }
  return CancelledError("informer stopped");
}

namespace {

std::string ContinueToken(const json::Value& list) {
  const json::Value* meta = list.Find("metadata");
  const json::Value* c = meta != nullptr ? meta->Find("continue") : nullptr;
  return c != nullptr && c->IsString() ? c->AsString() : std::string();
}

}  // namespace

Status Informer::ListPages(std::stop_token stop) {
  // Quorum read. Items are trimmed, compacted and handed to handlers as they are decoded
  // (Client::ListEach), so the full documents of a large list are never in memory at once. By
  // default in one request: the apiserver serves a whole list from its watch cache, while each
  // page after the first costs it a read of its own (measured with 50,000 JobSets on kube-
  // apiserver 1.36: ~4x the CPU in 500-item pages). page_size > 0 pages as client-go's pager.
  kube::ListOptions lo;
  lo.label_selector = options_.label_selector;
  lo.field_selector = options_.field_selector;
  // After a one-request list failed (it may have outlasted the apiserver's request timeout on
  // a huge collection), the next attempt pages, as lists did before.
  lo.limit = options_.page_size > 0 ? options_.page_size : (page_next_list_ ? kFallbackPage : 0);
  lo.skip = &list_skip_;
  // What the list holds, to delete the rest when it ends; nothing to delete after a list into an
  // empty cache (a first list: at 100,000 objects the keys' set cost ~2% of a restart's CPU).
  std::unordered_set<std::string> seen;
  bool track = store_.size() > 0;
  std::string rv;
  auto on_item = [&](json::Value& item) {
    if (stop.stop_requested()) return CancelledError("informer stopped");
    ApplyListItem(std::move(item), track ? &seen : nullptr);
    return OkStatus();
  };
  while (true) {
    StatusOr<json::Value> page = client_.ListEach(options_.gvr, options_.ns, lo, on_item);
    if (!page.ok() && IsGone(page.status()) && !lo.continue_token.empty()) {
      // The continue token expired (etcd compacted its snapshot): like client-go's pager, list
      // everything in one request at the current version. The cache then reconciles with that
      // list alone; what the earlier pages delivered is re-checked against it.
      log::Info("informer list continuation expired; listing in one request",
                {{"informer", InformerName(options_)}, {"error", page.status().message()}});
      lo.limit = 0;
      lo.continue_token.clear();
      seen.clear();
      track = true;  // the earlier pages are cached: what this list lacks must go
      rv.clear();
      page = client_.ListEach(options_.gvr, options_.ns, lo, on_item);
    }
    if (stop.stop_requested()) return CancelledError("informer stopped");
    if (!page.ok()) {
      if (lo.limit == 0 && !IsGone(page.status())) page_next_list_ = true;
      return page.status().WithContext("listing " + options_.gvr.ToString());
    }
    // Continue tokens pin the first page's snapshot: its version is the list's.
    if (rv.empty()) rv = std::string(kube::ResourceVersion(*page));
    const std::string next = ContinueToken(*page);
    if (next.empty()) break;
    lo.continue_token = next;
  }
  ++lists_;
  page_next_list_ = false;
  FinishList(track ? &seen : nullptr, rv);
  return OkStatus();
}

void Informer::ApplyListItem(json::Value item, std::unordered_set<std::string>* seen) {
  Prepare(item);
  std::string key = kube::ObjectKeyOf(item);
  auto obj = std::make_shared<const json::Value>(std::move(item));
  std::lock_guard<std::mutex> hlock(handlers_mu_);
  ObjectPtr old = store_.Upsert(key, obj, !handlers_.empty());
  if (seen != nullptr) seen->insert(std::move(key));
  Notify(old.get(), *obj);
}

void Informer::FinishList(const std::unordered_set<std::string>* seen, const std::string& rv) {
  if (seen != nullptr) {
    // Whatever the list no longer has was deleted while we were not watching.
    std::lock_guard<std::mutex> hlock(handlers_mu_);
    for (const std::string& key : store_.Keys()) {
      if (seen->count(key) != 0) continue;
      ObjectPtr gone = store_.Delete(key);
      if (gone == nullptr) continue;
      for (const EventHandler& h : handlers_) {
        if (h.on_delete) h.on_delete(*gone);
      }
    }
  }
  SetResourceVersion(rv);
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_error_ = OkStatus();
  }
  if (!synced_.exchange(true)) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cv_.notify_all();
    }
    // Where a restart's seconds go: each cache's first list ends here, concurrently with the
    // others'.
    const auto took = std::chrono::duration<double>(SteadyClock::now() - started_).count();
    log::Info("informer synced", {{"informer", InformerName(options_)},
                                  {"objects", std::to_string(store_.size())},
                                  {"seconds", std::to_string(took)}});
  }
}

std::string Informer::Name() const { return InformerName(options_); }

Status Informer::LastError() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

// The handlers' add (no `old`) or update for an object just stored; handlers_mu_ held. They read
// the stored object itself: it is immutable from here on.
void Informer::Notify(const json::Value* old, const json::Value& obj) {
  for (const EventHandler& h : handlers_) {
    if (old == nullptr) {
      if (h.on_add) h.on_add(obj);
    } else if (h.on_update) {
      h.on_update(*old, obj);
    }
  }
}

bool Informer::ApplyEvent(kube::WatchEvent& e) {
  const std::string rv(kube::ResourceVersion(e.object));
  if (e.type == kube::WatchEventType::kBookmark) {
    SetResourceVersion(rv);
    return true;
  }
  Prepare(e.object);
  std::string key = kube::ObjectKeyOf(e.object);
  std::lock_guard<std::mutex> hlock(handlers_mu_);
  if (e.type == kube::WatchEventType::kDeleted) {
    store_.Delete(key);
    for (const EventHandler& h : handlers_) {
      if (h.on_delete) h.on_delete(e.object);
    }
  } else {
    auto obj = std::make_shared<const json::Value>(std::move(e.object));
    ObjectPtr old = store_.Upsert(key, obj, !handlers_.empty());
    Notify(old.get(), *obj);
  }
  SetResourceVersion(rv);
  return true;
}

void Informer::ResyncLoop(std::stop_token stop) {
  while (SleepFor(options_.resync, stop)) {
    if (!synced_.load()) continue;
    std::lock_guard<std::mutex> hlock(handlers_mu_);
    for (const ObjectPtr& obj : store_.List()) {
      for (const EventHandler& h : handlers_) {
        if (h.on_update) h.on_update(*obj, *obj);
      }
    }
  }
}

}  // namespace trainer::informer
