// FakeClient implementation.
#include "common/kube/testing/fake_client.h"

#include <chrono>

#include "common/kube/meta.h"

namespace trainer::kube::testing {

std::string QualifiedResource(const GroupVersionResource& gvr) {
  return gvr.group.empty() ? gvr.resource : gvr.resource + "." + gvr.group;
}

void ApplyMergePatch(json::Value& target, const json::Value& patch) {
  if (!patch.IsObject()) {
    target = patch.Clone();
    return;
  }
  if (!target.IsObject()) target = json::Value::Object();
  for (const json::Member& m : patch.members()) {
    if (m.second.IsNull()) {
      target.Erase(m.first);
    } else {
      ApplyMergePatch(target[m.first], m.second);
    }
  }
}

namespace {

Status NotFound(const GroupVersionResource& gvr, std::string_view name) {
  return NotFoundError(QualifiedResource(gvr) + " \"" + std::string(name) + "\" not found")
      .set_http_code(404);
}

Status Conflict(const GroupVersionResource& gvr, std::string_view name) {
  return ConflictError("Operation cannot be fulfilled on " + QualifiedResource(gvr) + " \"" +
                       std::string(name) +
                       "\": the object has been modified; please apply your changes to the "
                       "latest version and try again")
      .set_http_code(409);
}

bool MatchesLabels(const json::Value& obj, std::string_view selector) {
  // Equality terms only ("a=b,c=d"): enough for tests.
  while (!selector.empty()) {
    const size_t comma = selector.find(',');
    std::string_view term = selector.substr(0, comma);
    const size_t eq = term.find('=');
    if (eq != std::string_view::npos) {
      const std::string key(term.substr(0, eq));
      std::string_view want = term.substr(eq + 1);
      if (!want.empty() && want.front() == '=') want.remove_prefix(1);
      const json::Value* meta = obj.Find("metadata");
      const json::Value* labels = meta ? meta->Find("labels") : nullptr;
      const json::Value* v = labels ? labels->Find(key) : nullptr;
      if (v == nullptr || !v->IsString() || v->AsString() != want) return false;
    }
    if (comma == std::string_view::npos) break;
    selector.remove_prefix(comma + 1);
  }
  return true;
}

}  // namespace

void FakeClient::Seed(const GroupVersionResource& gvr, json::Value obj) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string ns(Namespace(obj));
  StoreLocked(gvr, ns, std::move(obj), true).status().IgnoreError();
}

void FakeClient::FailNext(const std::string& verb, Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  failures_[verb].push_back(std::move(status));
}

void FakeClient::Compact() {
  std::lock_guard<std::mutex> lock(mu_);
  compacted_rv_ = rv_;
  log_.clear();
}

void FakeClient::CloseWatches() {
  std::lock_guard<std::mutex> lock(mu_);
  ++close_generation_;
  cv_.notify_all();
}

void FakeClient::SetWatchesDown(bool down) {
  std::lock_guard<std::mutex> lock(mu_);
  watches_down_ = down;
  ++close_generation_;
  cv_.notify_all();
}

int FakeClient::Calls(const std::string& verb) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = calls_.find(verb);
  return it == calls_.end() ? 0 : it->second;
}

std::string FakeClient::CurrentResourceVersion() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::to_string(rv_);
}

Status FakeClient::TakeFailure(const std::string& verb) {
  ++calls_[verb];
  auto it = failures_.find(verb);
  if (it == failures_.end() || it->second.empty()) return OkStatus();
  Status s = it->second.front();
  it->second.pop_front();
  return s;
}

void FakeClient::LogLocked(const GroupVersionResource& gvr, std::string_view ns,
                           WatchEventType type, const json::Value& obj) {
  log_.push_back({rv_, gvr, std::string(ns), type, obj.Clone()});
  cv_.notify_all();
}

StatusOr<json::Value> FakeClient::StoreLocked(const GroupVersionResource& gvr, std::string_view ns,
                                              json::Value obj, bool create) {
  const std::string name(Name(obj));
  if (name.empty()) return InvalidError("name or generateName is required").set_http_code(422);
  Key key{gvr, std::string(ns), name};
  auto it = objects_.find(key);
  if (create && it != objects_.end()) {
    return AlreadyExistsError(QualifiedResource(gvr) + " \"" + name + "\" already exists")
        .set_http_code(409);
  }
  if (!create && it == objects_.end()) return NotFound(gvr, name);
  json::Value& meta = obj["metadata"];
  if (!ns.empty()) meta.Set("namespace", ns);
  if (create) {
    meta.Set("uid", "fake-uid-" + std::to_string(++uid_));
    meta.Set("creationTimestamp", FormatTime(std::chrono::system_clock::now()));
    meta.Set("generation", 1);
  } else {
    const json::Value& old_meta = it->second["metadata"];
    for (const char* field : {"uid", "creationTimestamp", "generation"}) {
      if (const json::Value* v = old_meta.Find(field)) meta.Set(field, v->Clone());
    }
  }
  meta.Set("resourceVersion", std::to_string(++rv_));
  json::Value stored = obj.Clone();
  LogLocked(gvr, ns, create ? WatchEventType::kAdded : WatchEventType::kModified, stored);
  objects_[key] = std::move(stored);
  return obj;
}

StatusOr<json::Value> FakeClient::Get(const GroupVersionResource& gvr, std::string_view ns,
                                      std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(TakeFailure("get"));
  auto it = objects_.find(Key{gvr, std::string(ns), std::string(name)});
  if (it == objects_.end()) return NotFound(gvr, name);
  return it->second.Clone();
}

void FakeClient::HoldLists(const GroupVersionResource& gvr, bool hold) {
  std::lock_guard<std::mutex> lock(mu_);
  if (hold) {
    held_lists_.insert(gvr);
  } else {
    held_lists_.erase(gvr);
  }
  cv_.notify_all();
}

StatusOr<json::Value> FakeClient::List(const GroupVersionResource& gvr, std::string_view ns,
                                       const ListOptions& options) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::seconds(30), [&] { return !held_lists_.contains(gvr); });
  RETURN_IF_ERROR(TakeFailure("list"));
  if (!options.continue_token.empty()) RETURN_IF_ERROR(TakeFailure("list-continue"));
  json::Value items = json::Value::Array();
  int64_t skip = options.continue_token.empty() ? 0 : std::stoll(options.continue_token);
  int64_t index = 0;
  std::string next;
  for (const auto& [key, obj] : objects_) {
    if (std::get<0>(key) != gvr || (!ns.empty() && std::get<1>(key) != ns)) continue;
    if (!MatchesLabels(obj, options.label_selector)) continue;
    if (index++ < skip) continue;
    if (options.limit > 0 && static_cast<int64_t>(items.size()) == options.limit) {
      next = std::to_string(index - 1);
      break;
    }
    items.PushBack(obj.Clone());
  }
  json::Value list = json::Value::Object();
  list.Set("kind", "List");
  list["metadata"].Set("resourceVersion", std::to_string(rv_));
  if (!next.empty()) list["metadata"].Set("continue", next);
  list.Set("items", std::move(items));
  // Decoded as the real client does, leaving out what the caller skips.
  if (options.skip != nullptr) {
    return json::Parse(json::Write(list), options.skip->Under({"items", "*"}));
  }
  return list;
}

StatusOr<json::Value> FakeClient::Create(const GroupVersionResource& gvr, std::string_view ns,
                                         const json::Value& obj, const CreateOptions&) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(TakeFailure("create"));
  return StoreLocked(gvr, ns, obj.Clone(), true);
}

StatusOr<json::Value> FakeClient::Update(const GroupVersionResource& gvr, std::string_view ns,
                                         const json::Value& obj, const UpdateOptions&) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(TakeFailure("update"));
  auto it = objects_.find(Key{gvr, std::string(ns), std::string(Name(obj))});
  if (it == objects_.end()) return NotFound(gvr, Name(obj));
  const std::string_view want_rv = ResourceVersion(obj);
  if (!want_rv.empty() && want_rv != ResourceVersion(it->second)) return Conflict(gvr, Name(obj));
  return StoreLocked(gvr, ns, obj.Clone(), false);
}

Status FakeClient::Delete(const GroupVersionResource& gvr, std::string_view ns,
                          std::string_view name, const DeleteOptions& options) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(TakeFailure("delete"));
  auto it = objects_.find(Key{gvr, std::string(ns), std::string(name)});
  if (it == objects_.end()) return NotFound(gvr, name);
  if ((options.precondition_uid && *options.precondition_uid != Uid(it->second)) ||
      (options.precondition_resource_version &&
       *options.precondition_resource_version != ResourceVersion(it->second))) {
    return Conflict(gvr, name);
  }
  json::Value gone = std::move(it->second);
  objects_.erase(it);
  gone["metadata"].Set("resourceVersion", std::to_string(++rv_));
  LogLocked(gvr, ns, WatchEventType::kDeleted, gone);
  return OkStatus();
}

StatusOr<json::Value> FakeClient::MergeLocked(const GroupVersionResource& gvr, std::string_view ns,
                                              std::string_view name, const json::Value& patch,
                                              bool create_if_missing) {
  auto it = objects_.find(Key{gvr, std::string(ns), std::string(name)});
  if (it == objects_.end()) {
    if (!create_if_missing) return NotFound(gvr, name);
    json::Value obj = json::Value::Object();
    ApplyMergePatch(obj, patch);
    obj["metadata"].Set("name", name);
    return StoreLocked(gvr, ns, std::move(obj), true);
  }
  // As the apiserver: a resourceVersion in the patch is a precondition.
  const json::Value* patch_meta = patch.Find("metadata");
  const json::Value* want_rv =
      patch_meta != nullptr ? patch_meta->Find("resourceVersion") : nullptr;
  if (want_rv != nullptr && want_rv->IsString() && !want_rv->AsString().empty() &&
      want_rv->AsString() != ResourceVersion(it->second)) {
    return Conflict(gvr, name);
  }
  json::Value merged = it->second.Clone();
  ApplyMergePatch(merged, patch);
  return StoreLocked(gvr, ns, std::move(merged), false);
}

StatusOr<json::Value> FakeClient::Patch(const GroupVersionResource& gvr, std::string_view ns,
                                        std::string_view name, PatchType type,
                                        const json::Value& patch, const PatchOptions&) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(TakeFailure("patch"));
  if (type == PatchType::kJson) return UnimplementedError("fake client: JSON patch");
  return MergeLocked(gvr, ns, name, patch, false);
}

StatusOr<json::Value> FakeClient::PatchStatus(const GroupVersionResource& gvr, std::string_view ns,
                                              std::string_view name, PatchType type,
                                              const json::Value& patch,
                                              const PatchOptions& options) {
  json::Value status_only = json::Value::Object();
  if (const json::Value* s = patch.Find("status")) status_only.Set("status", s->Clone());
  return Patch(gvr, ns, name, type, status_only, options);
}

StatusOr<json::Value> FakeClient::Apply(const GroupVersionResource& gvr, std::string_view ns,
                                        const json::Value& obj, const ApplyOptions& options) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(TakeFailure("apply"));
  if (options.field_manager.empty())
    return InvalidArgumentError("apply: field manager is required");
  return MergeLocked(gvr, ns, Name(obj), obj, true);
}

StatusOr<json::Value> FakeClient::ApplyStatus(const GroupVersionResource& gvr, std::string_view ns,
                                              const json::Value& obj, const ApplyOptions& options) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(TakeFailure("apply"));
  if (options.field_manager.empty())
    return InvalidArgumentError("apply: field manager is required");
  json::Value status_only = json::Value::Object();
  if (const json::Value* s = obj.Find("status")) status_only.Set("status", s->Clone());
  return MergeLocked(gvr, ns, Name(obj), status_only, false);
}

Status FakeClient::Watch(const GroupVersionResource& gvr, std::string_view ns,
                         const WatchOptions& options, const WatchHandler& handler,
                         std::stop_token stop) {
  // Registered before taking mu_ (the callback runs inline when stop is already requested) and
  // destroyed after releasing it (its destructor waits for a callback running elsewhere).
  std::stop_callback wake(stop, [this] {
    std::lock_guard<std::mutex> l(mu_);
    cv_.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu_);
  RETURN_IF_ERROR(TakeFailure("watch"));
  if (watches_down_) return UnavailableError("fake client: watches are down");
  int64_t from = options.resource_version.empty() ? rv_ : std::stoll(options.resource_version);
  if (from < compacted_rv_) {
    return GoneError("too old resource version: " + std::to_string(from) + " (" +
                     std::to_string(compacted_rv_) + ")")
        .set_http_code(410);
  }
  const uint64_t generation = close_generation_;
  while (true) {
    // Deliver logged events after `from`, releasing the lock around the handler.
    bool delivered = false;
    for (size_t i = 0; i < log_.size(); ++i) {
      if (log_[i].rv <= from) continue;
      from = log_[i].rv;
      if (log_[i].gvr != gvr || (!ns.empty() && log_[i].ns != ns)) continue;
      if (!MatchesLabels(log_[i].object, options.label_selector)) continue;
      WatchEvent e{log_[i].type, log_[i].object.Clone()};
      // Decoded as the real client does, leaving out what the caller skips.
      if (options.skip != nullptr) {
        StatusOr<json::Value> slim = json::Parse(json::Write(e.object), *options.skip);
        if (slim.ok()) e.object = std::move(*slim);
      }
      lock.unlock();
      const bool more = handler(e);
      lock.lock();
      delivered = true;
      if (!more) return CancelledError("watch stopped by its handler");
      break;  // the log may have changed while unlocked: rescan
    }
    if (delivered) continue;
    if (stop.stop_requested()) return CancelledError("watch cancelled");
    if (close_generation_ != generation) {
      return watches_down_ ? UnavailableError("fake client: watches are down") : OkStatus();
    }
    cv_.wait(lock);
  }
}

void FakeClient::Serve(const GroupVersionResource& gvr, const std::string& kind) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string path =
      gvr.group.empty() ? "/api/" + gvr.version : "/apis/" + gvr.group + "/" + gvr.version;
  json::Value& list = discovery_[path];
  if (!list.IsObject()) {
    list = json::Value::Object();
    list.Set("kind", "APIResourceList");
    list.Set("resources", json::Value::Array());
  }
  json::Value r = json::Value::Object();
  r.Set("name", gvr.resource);
  r.Set("kind", kind);
  list["resources"].PushBack(std::move(r));
}

StatusOr<json::Value> FakeClient::GetPath(std::string_view path) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(TakeFailure("getpath"));
  if (auto it = discovery_.find(std::string(path)); it != discovery_.end()) {
    return it->second.Clone();
  }
  return NotFoundError("fake client: no discovery for " + std::string(path)).set_http_code(404);
}

}  // namespace trainer::kube::testing
