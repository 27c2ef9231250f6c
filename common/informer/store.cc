// Store implementation.
#include "common/informer/store.h"

#include <algorithm>

namespace trainer::informer {

ObjectPtr Store::Materialize(const Entry& e) const {
  if (e.shared) return e.shared;
  return std::make_shared<const json::Value>(e.compact.Decode());
}

Status Store::AddIndexer(const std::string& name, IndexFunc fn) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (indexes_.count(name) != 0)
    return AlreadyExistsError("indexer \"" + name + "\" already exists");
  Index& index = indexes_[name];
  index.fn = std::move(fn);
  for (const auto& [key, entry] : items_) IndexLocked(index, key, *Materialize(entry));
  return OkStatus();
}

ObjectPtr Store::Get(std::string_view ns, std::string_view name) const {
  if (ns.empty()) return GetByKey(name);
  std::string key;
  key.reserve(ns.size() + 1 + name.size());
  key.append(ns).append("/").append(name);
  return GetByKey(key);
}

std::optional<json::Value> Store::GetCopy(std::string_view ns, std::string_view name) const {
  std::string key;
  key.reserve(ns.size() + 1 + name.size());
  if (!ns.empty()) key.append(ns).append("/");
  key.append(name);
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return std::nullopt;
  if (it->second.shared) return it->second.shared->Clone();
  return it->second.compact.Decode();
}

ObjectPtr Store::GetByKey(std::string_view key) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return nullptr;
  return Materialize(it->second);
}

bool Store::Has(std::string_view key) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return items_.find(key) != items_.end();
}

std::vector<ObjectPtr> Store::List() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<ObjectPtr> out;
  out.reserve(items_.size());
  for (const auto& [key, entry] : items_) out.push_back(Materialize(entry));
  return out;
}

std::vector<ObjectPtr> Store::ListNamespace(std::string_view ns) const {
  const std::string prefix = std::string(ns) + "/";
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<ObjectPtr> out;
  for (auto it = items_.lower_bound(prefix); it != items_.end() && it->first.starts_with(prefix);
       ++it) {
    out.push_back(Materialize(it->second));
  }
  return out;
}

std::vector<std::string> Store::KeysInNamespace(std::string_view ns) const {
  const std::string prefix = std::string(ns) + "/";
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<std::string> out;
  for (auto it = items_.lower_bound(prefix); it != items_.end() && it->first.starts_with(prefix);
       ++it) {
    out.push_back(it->first);
  }
  return out;
}

std::vector<std::string> Store::Keys() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& [key, entry] : items_) out.push_back(key);
  return out;
}

std::vector<std::string> Store::KeysByIndex(std::string_view index, std::string_view value) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto idx = indexes_.find(index);
  if (idx == indexes_.end()) return {};
  auto it = idx->second.keys_by_value.find(std::string(value));
  if (it == idx->second.keys_by_value.end()) return {};
  std::vector<std::string> keys = it->second;
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::vector<ObjectPtr> Store::ByIndex(std::string_view index, std::string_view value) const {
  std::vector<ObjectPtr> out;
  for (const std::string& key : KeysByIndex(index, value)) {
    if (ObjectPtr obj = GetByKey(key)) out.push_back(std::move(obj));
  }
  return out;
}

size_t Store::size() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return items_.size();
}

size_t Store::payload_bytes() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return payload_bytes_;
}

void Store::IndexLocked(Index& index, const std::string& key, const json::Value& obj) {
  AddToIndexLocked(index, key, index.fn(obj));
}

void Store::AddToIndexLocked(Index& index, const std::string& key,
                             std::vector<std::string> values) {
  for (const std::string& v : values) index.keys_by_value[v].push_back(key);
  if (!values.empty()) index.values_by_key[key] = std::move(values);
}

// Most updates (status writes) leave the indexed values as they were; re-indexing them anyway
// would cost a scan of the whole bucket (every TrainJob of one runtime) per update.
void Store::ReindexLocked(Index& index, const std::string& key, const json::Value& obj) {
  std::vector<std::string> values = index.fn(obj);
  auto it = index.values_by_key.find(key);
  if (it != index.values_by_key.end() && it->second == values) return;
  UnindexLocked(index, key);
  AddToIndexLocked(index, key, std::move(values));
}

void Store::UnindexLocked(Index& index, const std::string& key) {
  auto it = index.values_by_key.find(key);
  if (it == index.values_by_key.end()) return;
  for (const std::string& v : it->second) {
    auto bucket = index.keys_by_value.find(v);
    if (bucket == index.keys_by_value.end()) continue;
    std::erase(bucket->second, key);
    if (bucket->second.empty()) index.keys_by_value.erase(bucket);
  }
  index.values_by_key.erase(it);
}

ObjectPtr Store::Upsert(const std::string& key, json::Value obj, bool want_old) {
  return Upsert(key, std::make_shared<const json::Value>(std::move(obj)), want_old);
}

ObjectPtr Store::Upsert(const std::string& key, ObjectPtr obj, bool want_old) {
  Entry entry;
  if (mode_ == StoreMode::kShared) {
    entry.payload = static_cast<uint32_t>(json::Write(*obj).size());
    entry.shared = obj;
  } else {
    entry.compact = CompactObject::Encode(*obj);
    entry.payload = static_cast<uint32_t>(entry.compact.size());
  }
  std::unique_lock<std::shared_mutex> lock(mu_);
  ObjectPtr old;
  auto it = items_.find(key);
  if (it != items_.end()) {
    if (want_old) old = Materialize(it->second);
    payload_bytes_ -= it->second.payload;
    it->second = std::move(entry);
  } else {
    items_.emplace(key, std::move(entry));
  }
  payload_bytes_ += items_.find(key)->second.payload;
  for (auto& [name, index] : indexes_) ReindexLocked(index, key, *obj);
  return old;
}

ObjectPtr Store::Delete(const std::string& key) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return nullptr;
  ObjectPtr old = Materialize(it->second);
  payload_bytes_ -= it->second.payload;
  for (auto& [name, index] : indexes_) UnindexLocked(index, key);
  items_.erase(it);
  return old;
}

}  // namespace trainer::informer
