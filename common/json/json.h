// json::Value: the owned JSON document type of trainer-cpp, parsed and written with RapidJSON.
//
// Objects keep insertion order (so what we write reads like what we were given) and are small
// vectors of members, searched linearly: Kubernetes objects have few keys per level. Values are
// move-only; copy explicitly with Clone() so an accidental deep copy never hides in a loop.
//
//   ASSIGN_OR_RETURN(json::Value doc, json::Parse(text));
//   json::Value& spec = doc["spec"];           // get-or-insert (null becomes an object)
//   spec["suspend"] = json::Value(true);
//   std::string out = json::WriteCanonical(doc);  // sorted keys, for goldens and hashing
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status/status.h"

namespace trainer::json {

enum class Type { kNull, kBool, kInt, kDouble, kString, kArray, kObject };
std::string_view TypeName(Type t);

class Value;
using Member = std::pair<std::string, Value>;
using Members = std::vector<Member>;
using Elements = std::vector<Value>;

class Value {
 public:
  Value() : i_(0) {}                                    // null
  Value(std::nullptr_t) : i_(0) {}                      // NOLINT
  Value(bool b) : type_(Type::kBool), b_(b) {}          // NOLINT
  Value(int i) : type_(Type::kInt), i_(i) {}            // NOLINT
  Value(int64_t i) : type_(Type::kInt), i_(i) {}        // NOLINT
  Value(uint32_t i) : type_(Type::kInt), i_(i) {}       // NOLINT
  Value(double d) : type_(Type::kDouble), d_(d) {}      // NOLINT
  Value(std::string s);                                 // NOLINT
  Value(std::string_view s) : Value(std::string(s)) {}  // NOLINT
  Value(const char* s) : Value(std::string(s)) {}       // NOLINT

  static Value Object();
  static Value Array();
  static Value StringArray(const std::vector<std::string>& items);
  // {"k": "v", ...} in key order.
  static Value StringMap(const std::map<std::string, std::string>& entries);

  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;
  Value(Value&& other) noexcept;
  Value& operator=(Value&& other) noexcept;
  ~Value();

  Value Clone() const;

  Type type() const { return type_; }
  bool IsNull() const { return type_ == Type::kNull; }
  bool IsBool() const { return type_ == Type::kBool; }
  bool IsInt() const { return type_ == Type::kInt; }
  bool IsDouble() const { return type_ == Type::kDouble; }
  bool IsNumber() const { return type_ == Type::kInt || type_ == Type::kDouble; }
  bool IsString() const { return type_ == Type::kString; }
  bool IsArray() const { return type_ == Type::kArray; }
  bool IsObject() const { return type_ == Type::kObject; }

  // Scalar reads. Precondition: the matching Is*(); on a mismatch they return false / 0 / "".
  bool AsBool() const { return type_ == Type::kBool && b_; }
  int64_t AsInt() const;    // doubles are truncated, and saturated to the int64 range
  double AsDouble() const;  // ints are converted
  const std::string& AsString() const;

  // Object access. Find returns nullptr if this is not an object or the key is absent.
  const Value* Find(std::string_view key) const;
  Value* Find(std::string_view key);
  bool Has(std::string_view key) const { return Find(key) != nullptr; }
  // Get-or-insert. A null value becomes an empty object first; on any other non-object the
  // value is replaced by an object (callers check types before writing through).
  Value& operator[](std::string_view key);
  // Sets key (replacing in place, keeping its position) and returns the stored value.
  Value& Set(std::string_view key, Value v);
  bool Erase(std::string_view key);
  Members& members();
  const Members& members() const;

  // Array access.
  Elements& elements();
  const Elements& elements() const;
  Value& PushBack(Value v);
  Value& at(size_t i) { return elements()[i]; }
  const Value& at(size_t i) const { return elements()[i]; }

  // Elements of an array or members of an object; 0 for scalars.
  size_t size() const;
  bool empty() const { return size() == 0; }

  // Deep equality. Numbers compare by value (1 == 1.0); object member order is ignored.
  bool operator==(const Value& other) const;
  bool operator!=(const Value& other) const { return !(*this == other); }

 private:
  void Reset();
  // Takes other's payload (this holds none); other becomes null.
  void Steal(Value& other) noexcept;

  Type type_ = Type::kNull;
  // One payload, by type_. A string is held inline (short ones need no allocation at all);
  // arrays and objects on the heap. 40 bytes in all.
  union {
    bool b_;
    int64_t i_;
    double d_;
    std::string s_;
    Elements* a_;
    Members* o_;
  };
};

// Parts of a document that Parse(text, skip) leaves out: for a reader that drops them anyway
// (an informer's cache trimming), so they are never built. A path is keys from the root; "*"
// stands for every member of an object and every element of an array. Skipped text is still
// checked: a parse with SkipPaths fails exactly where one without would.
//
//   json::SkipPaths skip({{"metadata", "managedFields"}});
//   json::SkipPaths in_list = skip.Under({"items", "*"});  // the same, for each item of a List
class SkipPaths {
 public:
  struct Node {
    bool skip = false;  // this value is left out
    std::map<std::string, Node, std::less<>> children;
    // The node of member `key` ("*" when no exact one), nullptr when nothing below is skipped.
    const Node* Child(std::string_view key) const;
  };

  SkipPaths() = default;
  SkipPaths(std::initializer_list<std::vector<std::string>> paths);
  void Add(const std::vector<std::string>& path);
  // Every path of this one, below `prefix`.
  SkipPaths Under(const std::vector<std::string>& prefix) const;
  bool empty() const { return paths_.empty(); }
  const std::vector<std::vector<std::string>>& paths() const { return paths_; }
  // nullptr when empty.
  const Node* root() const { return paths_.empty() ? nullptr : &root_; }

 private:
  std::vector<std::vector<std::string>> paths_;
  Node root_;
};

// Parses one JSON document. Errors name the byte offset: "invalid JSON at offset 12: ...".
StatusOr<Value> Parse(std::string_view text);
// The same without the parts `skip` names (absent from their objects and arrays, as if never
// sent).
StatusOr<Value> Parse(std::string_view text, const SkipPaths& skip);

// Compact JSON, members in insertion order.
std::string Write(const Value& v);
// Write(v) appended to `out`; AppendString(out, s) appends s as Write writes a string value
// (quoted, escaped, invalid UTF-8 as U+FFFD): for answers written once, field by field, without
// building a Value first.
void AppendWrite(std::string& out, const Value& v);
void AppendString(std::string& out, std::string_view s);
// The text Go's encoding/json writes for a float64: shortest round-trip digits, plain notation
// for 1e-6 <= |d| < 1e21, else exponent notation without a leading zero in the exponent
// (1e+21, 1e-7). What upstream's decoders see of a YAML float, so our messages quote it alike.
std::string GoJsonFloat(double d);
// Compact JSON with object keys sorted bytewise at every level: the canonical form used for
// golden files, hashing and change detection.
std::string WriteCanonical(const Value& v);
// Indented JSON (2 spaces), keys sorted when `sort_keys`.
std::string WritePretty(const Value& v, bool sort_keys = true);

// Order-insensitive content hash (FNV-1a over the canonical form), hex encoded.
std::string Hash(const Value& v);

// Length of the valid UTF-8 sequence at s[i] (Go's utf8.DecodeRune rules: shortest form, no
// surrogates, at most U+10FFFF), or 0 when s[i] starts none. i < s.size().
size_t Utf8Length(std::string_view s, size_t i);

// Typed getters for decoding: read `obj[key]` where `path` names it for messages
// ("spec.trainer.numNodes: expected integer, got string"). Absent (or null) keys leave `out`
// untouched and return OK; a wrong type is an InvalidArgument error naming the path.
Status GetString(const Value& obj, std::string_view key, std::string_view path, std::string* out);
Status GetBool(const Value& obj, std::string_view key, std::string_view path, bool* out);
Status GetInt(const Value& obj, std::string_view key, std::string_view path, int64_t* out);
Status GetObject(const Value& obj, std::string_view key, std::string_view path, const Value** out);
Status GetArray(const Value& obj, std::string_view key, std::string_view path, const Value** out);

// Human name of a value's type for error messages ("string", "integer", "object" ...).
std::string_view DescribeType(const Value& v);

// Path helpers for messages: Child("spec", "trainer") -> "spec.trainer"; Index("env", 2) ->
// "env[2]".
std::string Child(std::string_view path, std::string_view key);
std::string Index(std::string_view path, size_t i);

// Keyed list upsert: in `list` (an array of objects) replaces the element whose `key` field
// equals item[key] (keeping its position), or appends. Returns the stored element.
Value& UpsertByKey(Value& list, std::string_view key, Value item);
// Finds the element of an array whose string field `key` equals `value`; nullptr if none.
const Value* FindByKey(const Value& list, std::string_view key, std::string_view value);
Value* FindByKey(Value& list, std::string_view key, std::string_view value);

}  // namespace trainer::json
