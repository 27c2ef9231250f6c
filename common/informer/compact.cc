// CompactObject codec and the shared key table.
#include "common/informer/compact.h"

#include <cstring>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace trainer::informer {
namespace {

enum Tag : uint8_t {
  kNull = 0,
  kFalse = 1,
  kTrue = 2,
  kInt = 3,
  kDouble = 4,
  kString = 5,
  kArray = 6,
  kObject = 7,
  kPooled = 8,  // varint index into CompactObject::pooled_
};

// Object keys are interned here for the life of the process. Keys are schema field names, label
// and annotation keys: a bounded set in practice, but we cap the table (and key length) so that
// pathological input (say, maps keyed by UIDs) falls back to inline keys instead of growing it.
class KeyTable {
 public:
  static constexpr size_t kMaxKeys = 1 << 18;
  static constexpr size_t kMaxKeyLength = 96;

  // 0 when the key is not interned.
  uint32_t Intern(std::string_view key) {
    if (key.size() > kMaxKeyLength) return 0;
    {
      std::shared_lock<std::shared_mutex> lock(mu_);
      auto it = ids_.find(key);
      if (it != ids_.end()) return it->second;
      if (keys_.size() >= kMaxKeys) return 0;
    }
    std::unique_lock<std::shared_mutex> lock(mu_);
    auto it = ids_.find(key);
    if (it != ids_.end()) return it->second;
    if (keys_.size() >= kMaxKeys) return 0;
    keys_.emplace_back(key);
    bytes_ += key.size();
    const uint32_t id = static_cast<uint32_t>(keys_.size());
    ids_.emplace(std::string_view(keys_.back()), id);
    return id;
  }

  // Readers hold the lock for a whole decode; references into the deque stay valid.
  std::shared_mutex& mu() { return mu_; }
  const std::string& KeyLocked(uint32_t id) const { return keys_[id - 1]; }

  size_t count() {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return keys_.size();
  }
  size_t bytes() {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return bytes_;
  }

 private:
  std::shared_mutex mu_;
  std::deque<std::string> keys_;
  std::unordered_map<std::string_view, uint32_t> ids_;
  size_t bytes_ = 0;
};

KeyTable& Keys() {
  static KeyTable* table = new KeyTable();
  return *table;
}

// Long strings shared between cached objects, by content. Entries hold weak references: a
// string is freed (and its entry erased) when the last object holding it goes.
class StringPool {
 public:
  std::shared_ptr<const std::string> Intern(std::string_view s) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = strings_.find(s);
    if (it != strings_.end()) {
      if (std::shared_ptr<const std::string> live = it->second.lock()) return live;
      strings_.erase(it);  // expired; its deleter will find a newer entry and leave it
    }
    auto* text = new std::string(s);
    std::shared_ptr<const std::string> shared(text, [this](const std::string* p) { Release(p); });
    strings_.emplace(std::string_view(*text), shared);
    bytes_ += text->size();
    return shared;
  }

  size_t count() {
    std::lock_guard<std::mutex> lock(mu_);
    return strings_.size();
  }
  size_t bytes() {
    std::lock_guard<std::mutex> lock(mu_);
    return bytes_;
  }

 private:
  void Release(const std::string* p) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      bytes_ -= p->size();
      auto it = strings_.find(std::string_view(*p));
      if (it != strings_.end() && it->first.data() == p->data()) strings_.erase(it);
    }
    delete p;
  }

  std::mutex mu_;
  std::unordered_map<std::string_view, std::weak_ptr<const std::string>> strings_;
  size_t bytes_ = 0;
};

StringPool& Pool() {
  static StringPool* pool = new StringPool();
  return *pool;
}

void PutVarint(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

void PutString(std::vector<uint8_t>& out, std::string_view s) {
  PutVarint(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

using Pooled = std::vector<std::shared_ptr<const std::string>>;

void EncodeValue(const json::Value& v, std::vector<uint8_t>& out, KeyTable& keys, Pooled& pooled) {
  switch (v.type()) {
    case json::Type::kNull:
      out.push_back(kNull);
      return;
    case json::Type::kBool:
      out.push_back(v.AsBool() ? kTrue : kFalse);
      return;
    case json::Type::kInt: {
      out.push_back(kInt);
      const int64_t i = v.AsInt();
      PutVarint(out, (static_cast<uint64_t>(i) << 1) ^ static_cast<uint64_t>(i >> 63));
      return;
    }
    case json::Type::kDouble: {
      out.push_back(kDouble);
      const double d = v.AsDouble();
      uint8_t bytes[8];
      std::memcpy(bytes, &d, 8);
      out.insert(out.end(), bytes, bytes + 8);
      return;
    }
    case json::Type::kString:
      if (v.AsString().size() >= CompactObject::kPooledStringMin) {
        out.push_back(kPooled);
        PutVarint(out, pooled.size());
        pooled.push_back(Pool().Intern(v.AsString()));
        return;
      }
      out.push_back(kString);
      PutString(out, v.AsString());
      return;
    case json::Type::kArray:
      out.push_back(kArray);
      PutVarint(out, v.elements().size());
      for (const json::Value& e : v.elements()) EncodeValue(e, out, keys, pooled);
      return;
    case json::Type::kObject:
      out.push_back(kObject);
      PutVarint(out, v.members().size());
      for (const json::Member& m : v.members()) {
        const uint32_t id = keys.Intern(m.first);
        PutVarint(out, id);
        if (id == 0) PutString(out, m.first);
        EncodeValue(m.second, out, keys, pooled);
      }
      return;
  }
}

class Reader {
 public:
  Reader(const uint8_t* p, size_t n, KeyTable& keys, const Pooled& pooled)
      : p_(p), end_(p + n), keys_(keys), pooled_(pooled) {}

  json::Value Value() {
    switch (*p_++) {
      case kNull:
        return json::Value();
      case kFalse:
        return json::Value(false);
      case kTrue:
        return json::Value(true);
      case kInt: {
        const uint64_t z = Varint();
        return json::Value(static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1)));
      }
      case kDouble: {
        double d;
        std::memcpy(&d, p_, 8);
        p_ += 8;
        return json::Value(d);
      }
      case kString:
        return json::Value(String());
      case kPooled:
        return json::Value(*pooled_[Varint()]);
      case kArray: {
        json::Value a = json::Value::Array();
        const uint64_t n = Varint();
        a.elements().reserve(n);
        for (uint64_t i = 0; i < n; ++i) a.elements().push_back(Value());
        return a;
      }
      case kObject: {
        json::Value o = json::Value::Object();
        const uint64_t n = Varint();
        json::Members& members = o.members();
        members.reserve(n);
        for (uint64_t i = 0; i < n; ++i) {
          const uint32_t id = static_cast<uint32_t>(Varint());
          std::string key = id != 0 ? keys_.KeyLocked(id) : String();
          members.emplace_back(std::move(key), Value());
        }
        return o;
      }
    }
    return json::Value();
  }

 private:
  uint64_t Varint() {
    uint64_t v = 0;
    int shift = 0;
    while (p_ < end_) {
      const uint8_t b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) break;
      shift += 7;
    }
    return v;
  }
  std::string String() {
    const uint64_t n = Varint();
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }

  const uint8_t* p_;
  const uint8_t* end_;
  KeyTable& keys_;
  const Pooled& pooled_;
};

}  // namespace

CompactObject CompactObject::Encode(const json::Value& v) {
  thread_local std::vector<uint8_t> buf;
  buf.clear();
  CompactObject c;
  EncodeValue(v, buf, Keys(), c.pooled_);
  c.size_ = static_cast<uint32_t>(buf.size());
  c.data_.reset(new uint8_t[buf.size()]);
  std::memcpy(c.data_.get(), buf.data(), buf.size());
  return c;
}

json::Value CompactObject::Decode() const {
  if (size_ == 0) return json::Value();
  KeyTable& keys = Keys();
  std::shared_lock<std::shared_mutex> lock(keys.mu());
  Reader r(data_.get(), size_, keys, pooled_);
  return r.Value();
}

size_t InternedKeyCount() { return Keys().count(); }
size_t InternedKeyBytes() { return Keys().bytes(); }
size_t PooledStringCount() { return Pool().count(); }
size_t PooledStringBytes() { return Pool().bytes(); }

}  // namespace trainer::informer
