// Store: the thread-safe object cache behind an informer, and the read side controllers and the
// runtime's Reader use (client-go's cache.Indexer + Lister). Objects are keyed "ns/name" (or
// "name" for cluster-scoped kinds), kept in key order, and held either compact (the default:
// CompactObject, decoded on each read) or as shared immutable json::Values (no decode on read,
// ~10x the memory). Reads return std::shared_ptr<const json::Value>: callers never copy, and an
// object stays valid after the cache moves on.
//
//   auto job = store.Get("team-a", "mnist");              // nullptr if absent
//   for (auto& js : store.ByIndex("runtime", "torch-distributed")) ...
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/informer/compact.h"
#include "common/json/json.h"
#include "common/status/status.h"

namespace trainer::informer {

using ObjectPtr = std::shared_ptr<const json::Value>;
// Values an object is indexed under (e.g. its runtime name); may be empty.
using IndexFunc = std::function<std::vector<std::string>(const json::Value& obj)>;

enum class StoreMode {
  kCompact,  // CompactObject per object; reads decode
  kShared,   // shared_ptr<const json::Value> per object; reads share
};

class Store {
 public:
  explicit Store(StoreMode mode = StoreMode::kCompact) : mode_(mode) {}

  // Adds an index. Existing objects are indexed at once.
  Status AddIndexer(const std::string& name, IndexFunc fn);

  ObjectPtr Get(std::string_view ns, std::string_view name) const;
  // A copy the caller owns and may edit (in compact mode the decode is that copy: cheaper than
  // Get + Clone); nullopt if absent.
  std::optional<json::Value> GetCopy(std::string_view ns, std::string_view name) const;
  ObjectPtr GetByKey(std::string_view key) const;
  bool Has(std::string_view key) const;
  // Every object, in key order; or those of one namespace.
  std::vector<ObjectPtr> List() const;
  std::vector<ObjectPtr> ListNamespace(std::string_view ns) const;
  std::vector<std::string> Keys() const;
  std::vector<std::string> KeysInNamespace(std::string_view ns) const;
  // Objects whose index `index` holds `value`; empty for unknown indexes.
  std::vector<ObjectPtr> ByIndex(std::string_view index, std::string_view value) const;
  std::vector<std::string> KeysByIndex(std::string_view index, std::string_view value) const;
  size_t size() const;
  // Bytes of object payload held (compact bytes, or serialized size in shared mode).
  size_t payload_bytes() const;

  // Writes (the informer's). Upsert returns the previous object (nullptr if new) when
  // `want_old`; Delete returns the removed object. Upsert by pointer lets the caller keep reading
  // the object it stored (the informer hands it to its handlers) without a copy: shared mode
  // keeps that very object, compact mode encodes it.
  ObjectPtr Upsert(const std::string& key, json::Value obj, bool want_old);
  ObjectPtr Upsert(const std::string& key, ObjectPtr obj, bool want_old);
  ObjectPtr Delete(const std::string& key);

 private:
  struct Entry {
    CompactObject compact;
    ObjectPtr shared;
    uint32_t payload = 0;
  };
  struct Index {
    IndexFunc fn;
    std::unordered_map<std::string, std::vector<std::string>> keys_by_value;  // value -> keys
    std::unordered_map<std::string, std::vector<std::string>> values_by_key;  // key -> values
  };

  ObjectPtr Materialize(const Entry& e) const;
  void IndexLocked(Index& index, const std::string& key, const json::Value& obj);
  void AddToIndexLocked(Index& index, const std::string& key, std::vector<std::string> values);
  void UnindexLocked(Index& index, const std::string& key);
  void ReindexLocked(Index& index, const std::string& key, const json::Value& obj);

  const StoreMode mode_;
  mutable std::shared_mutex mu_;
  std::map<std::string, Entry, std::less<>> items_;
  std::map<std::string, Index, std::less<>> indexes_;
  size_t payload_bytes_ = 0;
};

}  // namespace trainer::informer
