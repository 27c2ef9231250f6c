// CompactObject: an immutable, compact binary encoding of a json::Value for the informer cache.
// A Kubernetes object as a json::Value DOM costs ~10x its JSON size (a 40-byte node per value,
// a heap string per key and per string); cached by the thousand that dominates a controller's
// memory. The compact form is one allocation per object: a type tag per value, varint lengths,
// numbers in zig-zag varints, and object keys replaced by ids into a process-wide key table
// shared by every cached object ("metadata", "resourceVersion", label keys... are stored once).
// Decoding rebuilds an equal json::Value (same member order).
//
//   CompactObject c = CompactObject::Encode(obj);
//   json::Value back = c.Decode();      // back == obj
//   c.size();                           // bytes held
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/json/json.h"

namespace trainer::informer {

class CompactObject {
 public:
  CompactObject() = default;
  static CompactObject Encode(const json::Value& v);
  json::Value Decode() const;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  std::unique_ptr<uint8_t[]> data_;
  uint32_t size_ = 0;
};

// Number of keys in the shared key table and the bytes they hold (for memory accounting).
size_t InternedKeyCount();
size_t InternedKeyBytes();

}  // namespace trainer::informer
