// CompactObject: an immutable, compact binary encoding of a json::Value for the informer cache.
// A Kubernetes object as a json::Value DOM costs ~10x its JSON size (a 40-byte node per value,
// a heap string per key and per string); cached by the thousand that dominates a controller's
// memory. The compact form is one allocation per object: a type tag per value, varint lengths,
// numbers in zig-zag varints, and object keys replaced by ids into a process-wide key table
// shared by every cached object ("metadata", "resourceVersion", label keys... are stored once).
// Decoding rebuilds an equal json::Value (same member order).
// Long strings (kPooledStringMin bytes and more) are pooled: objects holding the same text share
// one copy, released with the last holder. A cache of thousands of objects carrying the same
// document (every runtime snapshot ConfigMap of one runtime version holds the same ~4 kB YAML)
// then stores it once.
//
//   CompactObject c = CompactObject::Encode(obj);
//   json::Value back = c.Decode();      // back == obj
//   c.size();                           // bytes held
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/json/json.h"

namespace trainer::informer {

class CompactObject {
 public:
  static constexpr size_t kPooledStringMin = 512;

  CompactObject() = default;
  static CompactObject Encode(const json::Value& v);
  json::Value Decode() const;

  // Bytes held by this object alone (pooled strings are counted by PooledStringBytes).
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  std::unique_ptr<uint8_t[]> data_;
  uint32_t size_ = 0;
  std::vector<std::shared_ptr<const std::string>> pooled_;  // referenced by index from data_
};

// Number of keys in the shared key table and the bytes they hold (for memory accounting).
size_t InternedKeyCount();
size_t InternedKeyBytes();
// Distinct pooled strings alive and the bytes they hold.
size_t PooledStringCount();
size_t PooledStringBytes();

}  // namespace trainer::informer
