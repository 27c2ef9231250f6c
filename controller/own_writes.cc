// OwnWrites: recognizing the watch events of the controller's own applies.
#include "controller/own_writes.h"

#include "common/kube/meta.h"
#include "common/kube/types.h"

namespace trainer::controller {

std::string OwnWrites::KeyOf(const json::Value& obj) {
  kube::GroupVersionKind gvk = kube::GroupVersionKind::Of(obj);
  std::string key = gvk.group;
  key.append("/").append(gvk.kind).append("/").append(kube::ObjectKeyOf(obj));
  return key;
}

void OwnWrites::RecordLocked(std::string key, std::string rv) {
  if (rv.empty()) return;
  if (versions_.size() >= kMaxEntries) versions_.clear();
  versions_[std::move(key)] = std::move(rv);
}

void OwnWrites::Record(const json::Value& applied) {
  std::string key = KeyOf(applied);
  std::lock_guard<std::mutex> lock(mu_);
  RecordLocked(std::move(key), std::string(kube::ResourceVersion(applied)));
}

void OwnWrites::Begin(const json::Value& obj) {
  std::string key = KeyOf(obj);
  std::lock_guard<std::mutex> lock(mu_);
  ++in_flight_[std::move(key)].writes;
}

void OwnWrites::Finish(const json::Value& obj, const json::Value* applied) {
  const std::string key = KeyOf(obj);
  const std::string rv(applied != nullptr ? kube::ResourceVersion(*applied) : "");
  std::vector<std::string> requeue;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = in_flight_.find(key);
    if (it == in_flight_.end()) {  // no Begin: as Record
      RecordLocked(key, rv);
      return;
    }
    InFlight& f = it->second;
    bool echo_seen = false;
    std::vector<Held> rest;
    for (Held& h : f.held) {
      if (!echo_seen && !rv.empty() && h.rv == rv) {
        echo_seen = true;
      } else {
        rest.push_back(std::move(h));
      }
    }
    f.held = std::move(rest);
    if (--f.writes <= 0) {
      // Whatever was held and is not this write's echo is someone else's version (or the echo
      // of a write that failed to answer): its owners must look.
      for (Held& h : f.held) {
        for (std::string& o : h.owners) requeue.push_back(std::move(o));
      }
      in_flight_.erase(it);
    }
    if (!echo_seen) RecordLocked(key, rv);
  }
  if (requeue_) {
    for (const std::string& o : requeue) requeue_(o);
  }
}

bool OwnWrites::Absorb(const json::Value& obj, std::vector<std::string> owners) {
  const std::string key = KeyOf(obj);
  std::lock_guard<std::mutex> lock(mu_);
  if (auto f = in_flight_.find(key); f != in_flight_.end()) {
    versions_.erase(key);
    f->second.held.push_back({std::string(kube::ResourceVersion(obj)), std::move(owners)});
    return true;
  }
  auto it = versions_.find(key);
  if (it == versions_.end()) return false;
  const bool echo = it->second == kube::ResourceVersion(obj);
  versions_.erase(it);
  return echo;
}

size_t OwnWrites::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return versions_.size();
}

size_t OwnWrites::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_.size();
}

}  // namespace trainer::controller
