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

void OwnWrites::Record(const json::Value& applied) {
  std::string rv(kube::ResourceVersion(applied));
  if (rv.empty()) return;
  std::string key = KeyOf(applied);
  std::lock_guard<std::mutex> lock(mu_);
  if (versions_.size() >= kMaxEntries) versions_.clear();
  versions_[std::move(key)] = std::move(rv);
}

bool OwnWrites::IsEcho(const json::Value& obj) {
  const std::string key = KeyOf(obj);
  std::lock_guard<std::mutex> lock(mu_);
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

}  // namespace trainer::controller
