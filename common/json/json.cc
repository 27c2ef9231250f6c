// json::Value implementation: the DOM, a RapidJSON SAX reader into it, and writers.
#include "common/json/json.h"

#include <rapidjson/error/en.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/reader.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <tuple>
#include <type_traits>

namespace trainer::json {

std::string_view TypeName(Type t) {
  switch (t) {
    case Type::kNull:
      return "null";
    case Type::kBool:
      return "boolean";
    case Type::kInt:
      return "integer";
    case Type::kDouble:
      return "number";
    case Type::kString:
      return "string";
    case Type::kArray:
      return "array";
    case Type::kObject:
      return "object";
  }
  return "unknown";
}

std::string_view DescribeType(const Value& v) { return TypeName(v.type()); }

Value::Value(std::string s) : type_(Type::kString), s_(std::move(s)) {}

Value Value::Object() {
  Value v;
  v.o_ = new Members();
  v.type_ = Type::kObject;
  return v;
}

Value Value::Array() {
  Value v;
  v.a_ = new Elements();
  v.type_ = Type::kArray;
  return v;
}

Value Value::StringArray(const std::vector<std::string>& items) {
  Value v = Array();
  v.a_->reserve(items.size());
  for (const auto& s : items) v.a_->emplace_back(s);
  return v;
}

Value Value::StringMap(const std::map<std::string, std::string>& entries) {
  Value v = Object();
  for (const auto& [key, value] : entries) v.Set(key, Value(value));
  return v;
}

[[gnu::always_inline]] inline void Value::Steal(Value& other) noexcept {
  switch (other.type_) {
    case Type::kString:
      new (&s_) std::string(std::move(other.s_));
      other.s_.~basic_string();
      break;
    case Type::kArray:
      a_ = other.a_;
      break;
    case Type::kObject:
      o_ = other.o_;
      break;
    default:
      i_ = other.i_;
      break;  // the widest scalar carries bool and double too
  }
  type_ = other.type_;
  other.type_ = Type::kNull;
  other.i_ = 0;
}

Value::Value(Value&& other) noexcept { Steal(other); }

Value& Value::operator=(Value&& other) noexcept {
  if (this != &other) {
    // `other` may live inside this value (v = std::move(v["x"])): move it out first.
    Value tmp(std::move(other));
    Reset();
    Steal(tmp);
  }
  return *this;
}

// Only strings, arrays and objects own something: the check inlines where json.cc destroys
// Values (a closed container's moved-from items, all null) and spares them the call.
Value::~Value() {
  if (type_ >= Type::kString) Reset();
}

void Value::Reset() {
  switch (type_) {
    case Type::kString:
      s_.~basic_string();
      break;
    case Type::kArray:
      delete a_;
      break;
    case Type::kObject:
      delete o_;
      break;
    default:
      break;
  }
  type_ = Type::kNull;
  i_ = 0;
}

Value Value::Clone() const {
  switch (type_) {
    case Type::kNull:
      return Value();
    case Type::kBool:
      return Value(b_);
    case Type::kInt:
      return Value(i_);
    case Type::kDouble:
      return Value(d_);
    case Type::kString:
      return Value(s_);
    case Type::kArray: {
      Value v = Array();
      v.a_->reserve(a_->size());
      for (const auto& e : *a_) v.a_->push_back(e.Clone());
      return v;
    }
    case Type::kObject: {
      Value v = Object();
      v.o_->reserve(o_->size());
      for (const auto& [k, e] : *o_) v.o_->emplace_back(k, e.Clone());
      return v;
    }
  }
  return Value();
}

int64_t Value::AsInt() const {
  if (type_ == Type::kInt) return i_;
  if (type_ == Type::kDouble) {
    // Saturate: casting a double beyond int64 (or NaN) is undefined behaviour (found by the
    // jobset_status fuzzer: `active: 88888888888888888888`).
    if (std::isnan(d_)) return 0;
    if (d_ >= 9223372036854775808.0) return INT64_MAX;
    if (d_ < -9223372036854775808.0) return INT64_MIN;
    return static_cast<int64_t>(d_);
  }
  return 0;
}

double Value::AsDouble() const {
  if (type_ == Type::kDouble) return d_;
  if (type_ == Type::kInt) return static_cast<double>(i_);
  return 0;
}

const std::string& Value::AsString() const {
  static const std::string kEmpty;
  return type_ == Type::kString ? s_ : kEmpty;
}

const Value* Value::Find(std::string_view key) const {
  if (type_ != Type::kObject) return nullptr;
  for (const auto& [k, v] : *o_) {
    if (k == key) return &v;
  }
  return nullptr;
}

Value* Value::Find(std::string_view key) {
  return const_cast<Value*>(static_cast<const Value*>(this)->Find(key));
}

Value& Value::operator[](std::string_view key) {
  if (type_ != Type::kObject) *this = Object();
  if (Value* v = Find(key)) return *v;
  o_->emplace_back(std::string(key), Value());
  return o_->back().second;
}

Value& Value::Set(std::string_view key, Value v) {
  Value& slot = (*this)[key];
  slot = std::move(v);
  return slot;
}

bool Value::Erase(std::string_view key) {
  if (type_ != Type::kObject) return false;
  auto it = std::find_if(o_->begin(), o_->end(), [&](const Member& m) { return m.first == key; });
  if (it == o_->end()) return false;
  o_->erase(it);
  return true;
}

Members& Value::members() {
  if (type_ != Type::kObject) *this = Object();
  return *o_;
}

const Members& Value::members() const {
  static const Members kEmpty;
  return type_ == Type::kObject ? *o_ : kEmpty;
}

Elements& Value::elements() {
  if (type_ != Type::kArray) *this = Array();
  return *a_;
}

const Elements& Value::elements() const {
  static const Elements kEmpty;
  return type_ == Type::kArray ? *a_ : kEmpty;
}

Value& Value::PushBack(Value v) {
  Elements& e = elements();
  e.push_back(std::move(v));
  return e.back();
}

size_t Value::size() const {
  if (type_ == Type::kArray) return a_->size();
  if (type_ == Type::kObject) return o_->size();
  return 0;
}

bool Value::operator==(const Value& other) const {
  if (IsNumber() && other.IsNumber()) {
    if (IsInt() && other.IsInt()) return i_ == other.i_;
    return AsDouble() == other.AsDouble();
  }
  if (type_ != other.type_) return false;
  switch (type_) {
    case Type::kNull:
      return true;
    case Type::kBool:
      return b_ == other.b_;
    case Type::kString:
      return s_ == other.s_;
    case Type::kArray: {
      if (a_->size() != other.a_->size()) return false;
      for (size_t i = 0; i < a_->size(); ++i) {
        if ((*a_)[i] != (*other.a_)[i]) return false;
      }
      return true;
    }
    case Type::kObject: {
      if (o_->size() != other.o_->size()) return false;
      for (const auto& [k, v] : *o_) {
        const Value* w = other.Find(k);
        if (w == nullptr || *w != v) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

namespace {

// An open object or array while parsing. Its members or elements so far sit at the end of the
// scratch members or elements (from `start`) and move into an exactly sized vector when it
// closes: one allocation per container instead of one per doubling.
struct Frame {
  bool object;
  size_t start;
  // Objects: the key of the value being read, where the reader left it in the text (parsing in
  // place unescapes each string within its own bytes, so it stays until the parse ends).
  std::string_view key;
  // What is skipped below this container (nullptr: nothing), and for objects below the member
  // being read.
  const SkipPaths::Node* skip = nullptr;
  const SkipPaths::Node* member_skip = nullptr;
};

// What a parse needs besides the Value it builds: the reader, the text buffer and the builder's
// stacks. One per thread, reused (Parse never runs inside itself): allocating them for each
// parse was a large share of a small document's cost, and their kilobyte sizes made glibc
// consolidate its free lists each time. A parse leaves the stacks empty; Release drops buffers
// a very large document grew.
struct ParseScratch {
  rapidjson::Reader reader;  // keeps its stack of open containers
  std::string text;
  std::vector<Frame> frames;
  Members members;
  Elements elements;

  static constexpr size_t kKeepBytes = 64 * 1024;
  void Release() {
    frames.clear();
    members.clear();
    elements.clear();
    if (text.capacity() > kKeepBytes) std::string().swap(text);
    if (members.capacity() * sizeof(Member) > kKeepBytes) Members().swap(members);
    if (elements.capacity() * sizeof(Value) > kKeepBytes) Elements().swap(elements);
    if (frames.capacity() * sizeof(Frame) > kKeepBytes) std::vector<Frame>().swap(frames);
  }
};

// Builds a Value from RapidJSON SAX events with an explicit stack of open containers. It refuses
// to open more than `max_depth` of them (too_deep()): RapidJSON's recursive parser, which reads
// first, recurses once per level on the C++ stack (see ParseSkipping). Each value and key is
// constructed where it stays until its container closes (std::string moves were a tenth of a
// parse). With SkipPaths, a value at a skipped path is read (the reader still checks it) but not
// built: its events are dropped until the container it opened closes.
class Builder : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Builder> {
 public:
  bool Null() { return Skipped() || Add(nullptr); }
  bool Bool(bool b) { return Skipped() || Add(b); }
  // Numbers arrive as their text (kParseNumbersAsStringsFlag) and are converted here, correctly
  // rounded as Go's strconv does: RapidJSON's normal precision is one ULP off on some values
  // (5e31 read back as 4.9999999999999994e31, found by tests/fuzz) and its full-precision path
  // reads out of bounds. Integers that fit int64 stay integers; others are doubles.
  // A skipped number is converted too: one out of range fails the parse either way.
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    const char* end = s + n;
    if (std::none_of(s, end, [](char c) { return c == '.' || c == 'e' || c == 'E'; })) {
      int64_t i = 0;
      auto [p, ec] = std::from_chars(s, end, i);
      if (ec == std::errc() && p == end) return Skipped() || Add(i);
    }
    double d = 0;
    auto [p, ec] = std::from_chars(s, end, d);
    if (ec == std::errc::result_out_of_range) {
      // Underflow reads as the nearest value (zero or subnormal); overflow is an error.
      d = std::strtod(std::string(s, n).c_str(), nullptr);
    } else if (ec != std::errc() || p != end) {
      return false;  // RapidJSON checked the syntax; unreachable
    }
    if (!std::isfinite(d)) {
      number_too_big_ = true;
      return false;
    }
    return Skipped() || Add(d);
  }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    return Skipped() || Add(std::string_view(s, n));
  }
  bool StartObject() { return Start(true); }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    if (skip_depth_ > 0) return true;
    Frame& f = frames_.back();
    f.key = std::string_view(s, n);
    f.member_skip = f.skip != nullptr ? f.skip->Child(f.key) : nullptr;
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    return EndSkipped() || Close(Value::Object(), &Value::members, members_);
  }
  bool StartArray() { return Start(false); }
  bool EndArray(rapidjson::SizeType) {
    return EndSkipped() || Close(Value::Array(), &Value::elements, elements_);
  }

  Builder(ParseScratch& scratch, const SkipPaths::Node* skip, size_t max_depth)
      : frames_(scratch.frames),
        members_(scratch.members),
        elements_(scratch.elements),
        root_skip_(skip),
        max_depth_(max_depth) {
    // Enough for the open containers of a typical Kubernetes object: no regrowth while reading.
    frames_.reserve(16);
    members_.reserve(64);
    elements_.reserve(16);
  }

  Value TakeRoot() { return std::move(root_); }
  bool too_deep() const { return too_deep_; }
  bool number_too_big() const { return number_too_big_; }

  // Clone, Write, == and the destructor recurse; this bound keeps them far from the stack limit
  // (Go's encoding/json uses the same limit).
  static constexpr size_t kMaxDepth = 10000;

 private:
  bool Open(bool object) {
    if (frames_.size() >= max_depth_) {
      too_deep_ = true;
      return false;
    }
    const SkipPaths::Node* skip = root_skip_ != nullptr ? NextSkip() : nullptr;
    frames_.push_back({object, object ? members_.size() : elements_.size(), {}, skip, nullptr});
    static_assert(std::is_trivially_destructible_v<Frame>);
    return true;
  }
  // The skip node of the value about to be read (nullptr: nothing skipped at or below it).
  const SkipPaths::Node* NextSkip() const {
    if (frames_.empty()) return root_skip_;
    const Frame& f = frames_.back();
    if (f.object) return f.member_skip;
    return f.skip != nullptr ? f.skip->Child("*") : nullptr;
  }
  // True (the event is consumed) inside a skipped value, or for a skipped scalar.
  bool Skipped() const {
    if (root_skip_ == nullptr) return false;  // a parse without SkipPaths: one test per event
    if (skip_depth_ > 0) return true;
    const SkipPaths::Node* n = NextSkip();
    return n != nullptr && n->skip;
  }
  // Opens a container, or enters (deeper into) a skipped one. Skipped containers count toward
  // the depth limit, so a document fails the same with or without skips.
  bool Start(bool object) {
    if (!Skipped()) return Open(object);
    if (frames_.size() + skip_depth_ >= max_depth_) {
      too_deep_ = true;
      return false;
    }
    ++skip_depth_;
    return true;
  }
  bool EndSkipped() {
    if (skip_depth_ == 0) return false;
    --skip_depth_;
    return true;
  }
  // Ends the innermost container: its items (members_ or elements_ from its start) move into
  // `done`'s vector, sized once, and `done` is added to its parent.
  template <typename Items>
  bool Close(Value done, Items& (Value::*items)(), Items& pending) {
    const size_t start = frames_.back().start;
    const auto first = pending.begin() + static_cast<std::ptrdiff_t>(start);
    (done.*items)().assign(std::make_move_iterator(first), std::make_move_iterator(pending.end()));
    pending.erase(first, pending.end());
    frames_.pop_back();
    return Add(std::move(done));
  }
  // Adds the value Value(args...) to the innermost open container (or makes it the root),
  // constructed in its place there.
  template <typename... Args>
  bool Add(Args&&... args) {
    if (frames_.empty()) {
      root_ = Value(std::forward<Args>(args)...);
      return true;
    }
    Frame& f = frames_.back();
    if (!f.object) {
      elements_.emplace_back(std::forward<Args>(args)...);
      return true;
    }
    // Duplicate keys: the last one wins, in the first one's place, as in Go's encoding/json.
    for (size_t i = f.start; i < members_.size(); ++i) {
      if (members_[i].first == f.key) {
        members_[i].second = Value(std::forward<Args>(args)...);
        return true;
      }
    }
    members_.emplace_back(std::piecewise_construct, std::forward_as_tuple(f.key),
                          std::forward_as_tuple(std::forward<Args>(args)...));
    return true;
  }

  std::vector<Frame>& frames_;
  Members& members_;
  Elements& elements_;
  const SkipPaths::Node* root_skip_;
  const size_t max_depth_;
  size_t skip_depth_ = 0;  // open containers inside a skipped value, itself included
  Value root_;
  bool too_deep_ = false;
  bool number_too_big_ = false;
};

// ---------------------------------------------------------------------------------------------
// UTF-8. Go's encoding/json is the contract (AdmissionReview bodies, objects from the apiserver):
// it never fails on invalid UTF-8 inside a string but reads each invalid byte, and each unpaired
// \u surrogate escape, as U+FFFD; it writes U+FFFD for invalid bytes too. Rejecting instead
// would deny an AdmissionReview the Go webhook admits, so Parse and the writers do the same.

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

size_t Utf8Length(std::string_view s, size_t i) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  auto cont = [&](size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    return i + k < s.size() && at(k) >= lo && at(k) <= hi;
  };
  unsigned char c = at(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    unsigned char lo = c == 0xE0 ? 0xA0 : 0x80;
    unsigned char hi = c == 0xED ? 0x9F : 0xBF;
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    unsigned char lo = c == 0xF0 ? 0x90 : 0x80;
    unsigned char hi = c == 0xF4 ? 0x8F : 0xBF;
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

namespace {

// Whether every byte is ASCII: 32 bytes a test (the compiler ORs them in vector registers), then
// eight at a time.
bool IsAscii(std::string_view s) {
  const char* p = s.data();
  const char* end = p + s.size();
  for (; end - p >= 32; p += 32) {
    uint64_t words[4];
    std::memcpy(words, p, sizeof(words));
    if (((words[0] | words[1] | words[2] | words[3]) & 0x8080808080808080ULL) != 0) return false;
  }
  for (; end - p >= 8; p += 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof(word));
    if ((word & 0x8080808080808080ULL) != 0) return false;
  }
  for (; p < end; ++p) {
    if (static_cast<unsigned char>(*p) >= 0x80) return false;
  }
  return true;
}

bool IsValidUtf8(std::string_view s) {
  if (IsAscii(s)) return true;
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8Length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string CoerceUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8Length(s, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

int Hex4(std::string_view s, size_t i) {
  if (i + 4 > s.size()) return -1;
  int v = 0;
  for (size_t k = i; k < i + 4; ++k) {
    char c = s[k];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

// Whether GoReadableText could change `text`: some byte is not ASCII, or some "\u" escape is
// there. Eight bytes at a time: the common document is plain ASCII and passes in one sweep.
bool MayNeedGoReading(std::string_view text) {
  return !IsAscii(text) || text.find("\\u") != std::string_view::npos;
}

// The JSON text with invalid UTF-8 bytes replaced by U+FFFD and unpaired surrogate escapes by
// \ufffd, as Go reads them; nullopt when nothing needs replacing (the common case: no copy).
// Outside strings a replaced byte is still a syntax error, as in Go.
std::optional<std::string> GoReadableText(std::string_view text) {
  std::optional<std::string> out;
  if (!MayNeedGoReading(text)) return out;
  size_t copied = 0;  // text[0, copied) is in *out
  auto replace = [&](size_t from, size_t len, std::string_view with) {
    if (!out) out.emplace().reserve(text.size() + 16);
    out->append(text.substr(copied, from - copied));
    *out += with;
    copied = from + len;
  };
  bool in_string = false;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      size_t n = Utf8Length(text, i);
      if (n == 0) {
        replace(i, 1, kReplacement);
        n = 1;
      }
      i += n;
      continue;
    }
    if (c == '"') {
      in_string = !in_string;
    } else if (c == '\\' && in_string && i + 1 < text.size()) {
      if (text[i + 1] != 'u') {
        i += static_cast<unsigned char>(text[i + 1]) < 0x80 ? 2 : 1;
        continue;
      }
      int unit = Hex4(text, i + 2);
      if (unit >= 0xD800 && unit <= 0xDBFF && text.substr(i + 6, 2) == "\\u" &&
          Hex4(text, i + 8) >= 0xDC00 && Hex4(text, i + 8) <= 0xDFFF) {
        i += 12;  // a valid pair
        continue;
      }
      if (unit >= 0xD800 && unit <= 0xDFFF) replace(i, 6, "\\ufffd");
      i += unit >= 0 ? 6 : 2;
      continue;
    }
    ++i;
  }
  if (out) out->append(text.substr(copied));
  return out;
}

template <typename Writer>
void WriteString(Writer& w, std::string_view s, bool key) {
  if (IsValidUtf8(s)) {
    key ? w.Key(s.data(), static_cast<rapidjson::SizeType>(s.size()))
        : w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    return;
  }
  std::string valid = CoerceUtf8(s);
  key ? w.Key(valid.data(), static_cast<rapidjson::SizeType>(valid.size()))
      : w.String(valid.data(), static_cast<rapidjson::SizeType>(valid.size()));
}

template <typename Writer>
void WriteTo(const Value& v, Writer& w, bool sort_keys) {
  switch (v.type()) {
    case Type::kNull:
      w.Null();
      break;
    case Type::kBool:
      w.Bool(v.AsBool());
      break;
    case Type::kInt:
      w.Int64(v.AsInt());
      break;
    case Type::kDouble: {
      double d = v.AsDouble();
      if (!std::isfinite(d)) {
        w.Null();  // JSON has no NaN/Inf
      } else {
        w.Double(d);
      }
      break;
    }
    case Type::kString: {
      WriteString(w, v.AsString(), /*key=*/false);
      break;
    }
    case Type::kArray:
      w.StartArray();
      for (const auto& e : v.elements()) WriteTo(e, w, sort_keys);
      w.EndArray();
      break;
    case Type::kObject: {
      w.StartObject();
      const Members& m = v.members();
      if (sort_keys) {
        std::vector<const Member*> sorted;
        sorted.reserve(m.size());
        for (const auto& mem : m) sorted.push_back(&mem);
        std::sort(sorted.begin(), sorted.end(),
                  [](const Member* a, const Member* b) { return a->first < b->first; });
        for (const Member* mem : sorted) {
          WriteString(w, mem->first, /*key=*/true);
          WriteTo(mem->second, w, sort_keys);
        }
      } else {
        for (const auto& mem : m) {
          WriteString(w, mem.first, /*key=*/true);
          WriteTo(mem.second, w, sort_keys);
        }
      }
      w.EndObject();
      break;
    }
  }
}

// Bytes after the text for RapidJSON's SSE2 scanners (see Parse).
constexpr size_t kSimdPadding = 16;

}  // namespace

const SkipPaths::Node* SkipPaths::Node::Child(std::string_view key) const {
  // A node has a few children (paths into Kubernetes objects): one scan, lengths compared first,
  // finds the key or "*" for less than the map's two searches (it runs for every key read along
  // a skipped path).
  const Node* star = nullptr;
  for (const auto& [k, child] : children) {
    if (k.size() == key.size() && k == key) return &child;
    if (k.size() == 1 && k[0] == '*') star = &child;
  }
  return star;
}

namespace {

// Adds path[i...] below `node`. A "*" step applies to every member, so it is added to the
// exact keys there too, and a new exact key starts as a copy of "*": Child then needs only one
// lookup.
void AddSkip(SkipPaths::Node& node, const std::vector<std::string>& path, size_t i) {
  if (node.skip) return;  // already skipped whole
  if (i == path.size()) {
    node.skip = true;
    node.children.clear();
    return;
  }
  const std::string& key = path[i];
  if (key == "*") {
    for (auto& [k, child] : node.children) AddSkip(child, path, i + 1);
    if (node.children.count(key) == 0) AddSkip(node.children[key], path, i + 1);
    return;
  }
  auto it = node.children.find(key);
  if (it == node.children.end()) {
    SkipPaths::Node fresh;
    if (auto star = node.children.find(std::string_view("*")); star != node.children.end()) {
      fresh = star->second;
    }
    it = node.children.emplace(key, std::move(fresh)).first;
  }
  AddSkip(it->second, path, i + 1);
}

}  // namespace

SkipPaths::SkipPaths(std::initializer_list<std::vector<std::string>> paths) {
  for (const auto& p : paths) Add(p);
}

void SkipPaths::Add(const std::vector<std::string>& path) {
  paths_.push_back(path);
  AddSkip(root_, path, 0);
}

SkipPaths SkipPaths::Under(const std::vector<std::string>& prefix) const {
  SkipPaths out;
  for (const auto& p : paths_) {
    std::vector<std::string> full = prefix;
    full.insert(full.end(), p.begin(), p.end());
    out.Add(full);
  }
  return out;
}

namespace {
StatusOr<Value> ParseSkipping(std::string_view text, const SkipPaths::Node* skip);
}  // namespace

StatusOr<Value> Parse(std::string_view text) { return ParseSkipping(text, nullptr); }

StatusOr<Value> Parse(std::string_view text, const SkipPaths& skip) {
  return ParseSkipping(text, skip.root());
}

namespace {

// The text RapidJSON reads in place into `buf`: NUL-terminated and padded. RapidJSON reads a
// NUL-terminated copy in place: strings are unescaped where they are instead of through its
// stack, and with RAPIDJSON_SSE2 strings and whitespace are scanned 16 bytes at a time. An
// embedded NUL ends the text as it did for a bounded stream. The scanners' aligned 16-byte loads
// may reach up to 15 bytes past the terminating NUL: the padding keeps every load inside the
// buffer, so the same code runs unchanged under AddressSanitizer.
void LoadText(std::string_view text, std::string& buf) {
  std::optional<std::string> readable = GoReadableText(text);
  if (readable) {
    buf = std::move(*readable);
    buf.append(kSimdPadding, '\0');
  } else {
    buf.reserve(text.size() + kSimdPadding);
    buf.assign(text).append(kSimdPadding, '\0');
  }
}

// Numbers are converted by Builder::RawNumber (see there). No kParseValidateEncodingFlag:
// GoReadableText already made the text valid UTF-8.
constexpr unsigned kRecursiveFlags =
    rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseInsituFlag;
constexpr unsigned kIterativeFlags = kRecursiveFlags | rapidjson::kParseIterativeFlag;

// How deep the recursive parser may go: a few hundred bytes of C++ stack per level, so far below
// any thread's stack. Kubernetes objects nest about 20 levels.
constexpr size_t kRecursionDepth = 512;

// The error message of a failed parse, as the iterative parser words it (the contract since
// Parse used only that one).
Status ParseError(const rapidjson::ParseResult& result, const Builder& builder,
                  std::string_view buf, bool recursive) {
  if (builder.too_deep()) {
    return InvalidArgumentError("invalid JSON at offset " + std::to_string(result.Offset()) +
                                ": nesting deeper than 10000 levels");
  }
  // RawNumber's refusal reads as RapidJSON's own error for a number out of range.
  rapidjson::ParseErrorCode code =
      builder.number_too_big() ? rapidjson::kParseErrorNumberTooBig : result.Code();
  // The two parsers name every error alike but one: a text starting with ']', '}', ',' or ':'
  // is "empty" to the iterative parser (no value can start there) and an invalid value to the
  // recursive one.
  if (recursive && code == rapidjson::kParseErrorValueInvalid) {
    const size_t first = buf.find_first_not_of(" \n\r\t");
    if (first == result.Offset() && std::string_view("]},:").find(buf[first]) != buf.npos) {
      code = rapidjson::kParseErrorDocumentEmpty;
    }
  }
  return InvalidArgumentError("invalid JSON at offset " + std::to_string(result.Offset()) + ": " +
                              rapidjson::GetParseError_En(code));
}

// Invalid UTF-8 in strings and unpaired \u surrogates read as U+FFFD (see GoReadableText); error
// offsets past such a byte then count it as three.
//
// RapidJSON's recursive parser reads first: it costs markedly fewer instructions per byte than
// its iterative one (a state machine with table lookups per token and a stack of its own). A
// document nesting deeper than kRecursionDepth is read again from the start by the iterative
// parser, which does not recurse, up to Go's limit of 10000 levels: a hostile body cannot
// overflow the stack, and every text reads and fails as it always did.
StatusOr<Value> ParseSkipping(std::string_view text, const SkipPaths::Node* skip) {
  thread_local ParseScratch scratch;
  struct Releaser {
    ParseScratch& s;
    ~Releaser() { s.Release(); }
  } releaser{scratch};
  std::string& buf = scratch.text;
  rapidjson::Reader& reader = scratch.reader;
  {
    LoadText(text, buf);
    Builder builder(scratch, skip, kRecursionDepth);
    rapidjson::InsituStringStream is(buf.data());
    rapidjson::ParseResult ok = reader.Parse<kRecursiveFlags>(is, builder);
    if (ok) return builder.TakeRoot();
    if (!builder.too_deep()) return ParseError(ok, builder, buf, /*recursive=*/true);
  }
  scratch.Release();    // the first pass's open containers
  LoadText(text, buf);  // it unescaped strings in place
  Builder builder(scratch, skip, Builder::kMaxDepth);
  rapidjson::InsituStringStream is(buf.data());
  rapidjson::ParseResult ok = reader.Parse<kIterativeFlags>(is, builder);
  if (ok) return builder.TakeRoot();
  return ParseError(ok, builder, buf, /*recursive=*/false);
}

}  // namespace

namespace {

// A RapidJSON output stream appending to a std::string: the writers fill the caller's string
// (no StringBuffer and copy), and RapidJSON's PutReserve/PutUnsafe, found for it by argument-
// dependent lookup, write without a capacity check per character. The string is grown ahead
// (resize) and cut to what was written when the stream ends.
class StringOut {
 public:
  using Ch = char;
  StringOut(std::string& out, size_t expected) : out_(out), size_(out.size()) {
    out_.resize(size_ + std::max<size_t>(expected, 64));
  }
  ~StringOut() { out_.resize(size_); }
  StringOut(const StringOut&) = delete;
  StringOut& operator=(const StringOut&) = delete;

  void Reserve(size_t n) {
    if (size_ + n > out_.size()) out_.resize(std::max(out_.size() * 2, size_ + n));
  }
  void PutUnchecked(char c) { out_[size_++] = c; }
  void Put(char c) {
    Reserve(1);
    PutUnchecked(c);
  }
  void Flush() {}

 private:
  std::string& out_;
  size_t size_;
};

[[maybe_unused]] inline void PutReserve(StringOut& out, size_t n) { out.Reserve(n); }
[[maybe_unused]] inline void PutUnsafe(StringOut& out, char c) { out.PutUnchecked(c); }

// The writer's stack of open containers lives in a buffer on the caller's stack (32 levels before
// it touches the heap).
struct LevelStack {
  char buffer[1024];
  rapidjson::MemoryPoolAllocator<> allocator{buffer, sizeof(buffer)};
};

using Allocator = rapidjson::MemoryPoolAllocator<>;
using CompactWriter = rapidjson::Writer<StringOut, rapidjson::UTF8<>, rapidjson::UTF8<>, Allocator>;
using IndentWriter =
    rapidjson::PrettyWriter<StringOut, rapidjson::UTF8<>, rapidjson::UTF8<>, Allocator>;

template <typename WriterT>
void WriteWith(const Value& v, bool sort_keys, std::string& into) {
  StringOut out(into, 256);
  LevelStack stack;
  WriterT w(out, &stack.allocator);
  if constexpr (std::is_same_v<WriterT, IndentWriter>) {
    w.SetIndent(' ', 2);
  }
  WriteTo(v, w, sort_keys);
}

}  // namespace

std::string GoJsonFloat(double d) {
  char buf[400];
  double a = std::fabs(d);
  std::to_chars_result r;
  if (a == 0 || (a >= 1e-6 && a < 1e21)) {
    r = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::fixed);
    return std::string(buf, r.ptr);
  }
  r = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string s(buf, r.ptr);
  size_t n = s.size();
  if (n >= 4 && s[n - 4] == 'e' && s[n - 3] == '-' && s[n - 2] == '0') s.erase(n - 2, 1);
  return s;
}

// The writers emit valid UTF-8 only (see WriteString).
std::string Write(const Value& v) {
  std::string out;
  WriteWith<CompactWriter>(v, false, out);
  return out;
}

void AppendWrite(std::string& out, const Value& v) { WriteWith<CompactWriter>(v, false, out); }

void AppendString(std::string& out, std::string_view s) {
  // Printable ASCII without '"' or '\\' is written as it is (the writer escapes nothing else):
  // the common case (uids, names, messages) skips setting up a writer.
  if (std::all_of(s.begin(), s.end(),
                  [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; })) {
    out.reserve(out.size() + s.size() + 2);
    out += '"';
    out += s;
    out += '"';
    return;
  }
  StringOut stream(out, s.size() + 2);
  LevelStack stack;
  CompactWriter w(stream, &stack.allocator);
  WriteString(w, s, /*key=*/false);
}

std::string WriteCanonical(const Value& v) {
  std::string out;
  WriteWith<CompactWriter>(v, true, out);
  return out;
}

std::string WritePretty(const Value& v, bool sort_keys) {
  std::string out;
  WriteWith<IndentWriter>(v, sort_keys, out);
  return out;
}

std::string Hash(const Value& v) {
  std::string canonical = WriteCanonical(v);
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : canonical) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char out[17];
  std::snprintf(out, sizeof(out), "%016llx", static_cast<unsigned long long>(h));
  return out;
}

std::string Child(std::string_view path, std::string_view key) {
  if (path.empty()) return std::string(key);
  std::string out(path);
  out += '.';
  out += key;
  return out;
}

std::string Index(std::string_view path, size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

namespace {
Status WrongType(std::string_view path, std::string_view want, const Value& got) {
  return InvalidArgumentError(std::string(path) + ": expected " + std::string(want) + ", got " +
                              std::string(DescribeType(got)));
}
}  // namespace

Status GetString(const Value& obj, std::string_view key, std::string_view path, std::string* out) {
  const Value* v = obj.Find(key);
  if (v == nullptr || v->IsNull()) return OkStatus();
  if (!v->IsString()) return WrongType(path, "string", *v);
  *out = v->AsString();
  return OkStatus();
}

Status GetBool(const Value& obj, std::string_view key, std::string_view path, bool* out) {
  const Value* v = obj.Find(key);
  if (v == nullptr || v->IsNull()) return OkStatus();
  if (!v->IsBool()) return WrongType(path, "boolean", *v);
  *out = v->AsBool();
  return OkStatus();
}

Status GetInt(const Value& obj, std::string_view key, std::string_view path, int64_t* out) {
  const Value* v = obj.Find(key);
  if (v == nullptr || v->IsNull()) return OkStatus();
  if (v->IsInt()) {
    *out = v->AsInt();
    return OkStatus();
  }
  // Clients (Python, JavaScript) may send 2.0 for 2; accept integral doubles only.
  if (v->IsDouble() && std::trunc(v->AsDouble()) == v->AsDouble() &&
      std::fabs(v->AsDouble()) < 9.2e18) {
    *out = static_cast<int64_t>(v->AsDouble());
    return OkStatus();
  }
  return WrongType(path, "integer", *v);
}

Status GetObject(const Value& obj, std::string_view key, std::string_view path, const Value** out) {
  const Value* v = obj.Find(key);
  if (v == nullptr || v->IsNull()) return OkStatus();
  if (!v->IsObject()) return WrongType(path, "object", *v);
  *out = v;
  return OkStatus();
}

Status GetArray(const Value& obj, std::string_view key, std::string_view path, const Value** out) {
  const Value* v = obj.Find(key);
  if (v == nullptr || v->IsNull()) return OkStatus();
  if (!v->IsArray()) return WrongType(path, "array", *v);
  *out = v;
  return OkStatus();
}

const Value* FindByKey(const Value& list, std::string_view key, std::string_view value) {
  for (const auto& e : list.elements()) {
    const Value* k = e.Find(key);
    if (k != nullptr && k->IsString() && k->AsString() == value) return &e;
  }
  return nullptr;
}

Value* FindByKey(Value& list, std::string_view key, std::string_view value) {
  return const_cast<Value*>(FindByKey(static_cast<const Value&>(list), key, value));
}

Value& UpsertByKey(Value& list, std::string_view key, Value item) {
  const Value* k = item.Find(key);
  if (k != nullptr) {
    for (auto& e : list.elements()) {
      const Value* ek = e.Find(key);
      if (ek != nullptr && *ek == *k) {
        e = std::move(item);
        return e;
      }
    }
  }
  return list.PushBack(std::move(item));
}

}  // namespace trainer::json
