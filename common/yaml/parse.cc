// ParseYaml and ParseYamlDocuments: yaml-cpp's event parser feeding a builder of json::Values.
// yaml-cpp exceptions (and our own parse errors) never leave this file.
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <exception>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "common/encoding/base64.h"
#include "common/yaml/input.h"
#include "common/yaml/resolve.h"
#include "common/yaml/yaml.h"

namespace trainer::yaml {
namespace {

using internal::CheckInputCharacters;
using internal::FormatGoFloat;
using internal::Kind;
using internal::Resolve;
using internal::Scalar;
using internal::ShortTagName;
using json::Value;

// Same bound as json::Parse: Clone, ==, Write and the destructor recurse.
constexpr size_t kMaxDepth = 10000;
// Values an alias expansion may add to one document ("billion laughs" guard). Manifests do not
// come close; go-yaml v2 has a similar ratio-based guard.
constexpr size_t kMaxAliasNodes = 1'000'000;

constexpr std::string_view kLongTagPrefix = "tag:yaml.org,2002:";

// Thrown by the event handler and caught in ParseYamlDocuments only.
struct BuildError {
  YAML::Mark mark;
  std::string msg;
};

std::string Where(const YAML::Mark& m) {
  if (m.is_null() || m.line < 0) return "yaml: ";
  return "yaml: line " + std::to_string(m.line + 1) + ", column " + std::to_string(m.column + 1) +
         ": ";
}

// Applies an explicit tag (yaml-cpp reports "?" for plain scalars, "!" for quoted/block ones).
Scalar ResolveTagged(const YAML::Mark& mark, const std::string& tag, const std::string& value) {
  if (tag == "?") return Resolve(value);
  if (tag.rfind(kLongTagPrefix, 0) != 0) return Scalar{};  // "!" or a local tag: a string
  std::string_view name = std::string_view(tag).substr(kLongTagPrefix.size());
  if (name == "binary") {
    if (!encoding::Base64Decode(value).ok()) {
      throw BuildError{mark, "!!binary value contains invalid base64 data"};
    }
    return Scalar{};  // the caller re-reads the text; see ScalarToValue
  }
  Kind want;
  if (name == "int") {
    want = Kind::kInt;
  } else if (name == "float") {
    want = Kind::kFloat;
  } else if (name == "bool") {
    want = Kind::kBool;
  } else if (name == "null") {
    want = Kind::kNull;
  } else if (name == "merge" && value == "<<") {
    return Scalar{Kind::kMerge};
  } else {
    return Scalar{};  // !!str, !!timestamp and anything else read as strings
  }
  Scalar r = Resolve(value);
  if (want == Kind::kFloat && (r.kind == Kind::kInt || r.kind == Kind::kUint)) {
    double d = r.kind == Kind::kInt ? static_cast<double>(r.i) : static_cast<double>(r.u);
    return Scalar{Kind::kFloat, false, 0, 0, d};
  }
  bool ok = r.kind == want || (want == Kind::kInt && r.kind == Kind::kUint);
  if (!ok) {
    throw BuildError{mark, "cannot decode " + std::string(ShortTagName(r.kind)) + " `" + value +
                               "` as a " + std::string(ShortTagName(want))};
  }
  return r;
}

bool FitsInt64(double d) { return d >= -9223372036854775808.0 && d < 9223372036854775808.0; }

Value FloatValue(const YAML::Mark& mark, const std::string& text, double d) {
  if (!std::isfinite(d)) {
    throw BuildError{mark, "unsupported value " + text + ": JSON has no NaN or infinity"};
  }
  // Go's encoding/json writes integral floats without a fraction, so 1e3 reaches the apiserver
  // as the integer 1000.
  if (std::trunc(d) == d && FitsInt64(d)) return Value(static_cast<int64_t>(d));
  return Value(d);
}

// yaml-cpp turns the double-quoted escapes \N and \_ into the single bytes 0x85 and 0xA0, not
// UTF-8; go-yaml reads them as U+0085 and U+00A0. The input is valid UTF-8 (checked first) and
// every other escape yields whole UTF-8 sequences, so a byte that starts no valid sequence here
// can only come from those two escapes.
std::string RepairYamlCppEscapes(const std::string& text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t width = json::Utf8Length(text, i);
    if (width > 0) {
      out.append(text, i, width);
      i += width;
      continue;
    }
    out += '\xC2';  // 0x85 and 0xA0 are U+0085 and U+00A0 as Latin-1
    out += text[i++];
  }
  return out;
}

bool AllAscii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

// Event handler building json::Values with an explicit stack (no recursion on the input).

class Builder : public YAML::EventHandler {
 public:
  // A key set twice is an error, or with `duplicates` recorded there and the later value kept.
  Builder(std::string_view text, std::vector<DuplicateKey>* duplicates)
      : text_(text), duplicates_(duplicates) {}
  std::vector<Value>& docs() { return docs_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    // yaml-cpp 0.7 can report an endless run of empty documents without consuming a stray
    // token (a lone "," loops forever, jbeder/yaml-cpp#1040); a document that starts where the
    // previous one started made no progress.
    if (!docs_.empty() && mark.pos == last_start_pos_) {
      throw BuildError{mark, "did not find expected node content"};
    }
    last_start_pos_ = mark.pos;
    // yaml-cpp also starts a new document at content that cannot continue the current one
    // ("- a\nb: 1"); YAML (and go-yaml) only start a later document at "---" or a directive.
    if (!docs_.empty() && mark.pos >= 0 && static_cast<size_t>(mark.pos) < text_.size()) {
      std::string_view rest = text_.substr(static_cast<size_t>(mark.pos));
      if (rest.substr(0, 3) != "---" && rest.substr(0, 1) != "%") {
        throw BuildError{mark, "did not find expected key or end of document"};
      }
    }
    stack_.clear();
    anchors_.clear();
    open_anchors_.clear();
    alias_nodes_ = 0;
    root_ = Value();
  }
  void OnDocumentEnd() override { docs_.push_back(std::move(root_)); }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (ExpectingKey()) throw BuildError{mark, "unsupported map key: null"};
    Remember(anchor, Value(), 1, 1);
    AddValue(mark, Value(), 1, 1);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& raw) override {
    std::string repaired;
    const std::string& text = AllAscii(raw) ? raw : (repaired = RepairYamlCppEscapes(raw));
    Scalar s = ResolveTagged(mark, tag, text);
    if (ExpectingKey()) {
      if (s.kind == Kind::kMerge) {
        Frame& f = stack_.back();
        f.has_key = true;
        f.key_is_merge = true;
        f.key_mark = mark;
        Remember(anchor, Value("<<"), 1, 1);
        return;
      }
      Value v = ScalarToValue(mark, tag, text, s, /*as_key=*/true);
      SetKey(mark, v);
      Remember(anchor, std::move(v), 1, 1);
      return;
    }
    Value v = ScalarToValue(mark, tag, text, s, /*as_key=*/false);
    Remember(anchor, v.Clone(), 1, 1);
    AddValue(mark, std::move(v), 1, 1);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {
      if (open_anchors_.count(anchor) > 0) throw BuildError{mark, "anchor value contains itself"};
      throw BuildError{mark, "unknown anchor referenced"};
    }
    const Anchored& a = it->second;
    alias_nodes_ += a.nodes;
    if (alias_nodes_ > kMaxAliasNodes) {
      throw BuildError{mark, "document contains excessive aliasing"};
    }
    if (stack_.size() + a.height > kMaxDepth) {
      throw BuildError{mark, "exceeded max depth of " + std::to_string(kMaxDepth)};
    }
    if (ExpectingKey()) {
      if (a.value.IsArray() || a.value.IsObject() || a.value.IsNull()) {
        throw BuildError{mark, "unsupported map key: expected a scalar"};
      }
      SetKey(mark, KeyText(a.value));
      return;
    }
    AddValue(mark, a.value.Clone(), a.nodes, a.height);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, anchor, Value::Array());
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, anchor, Value::Object());
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Frame {
    Value value;
    YAML::anchor_t anchor = 0;
    YAML::Mark mark;
    size_t nodes = 1;
    size_t height = 1;
    bool is_key = false;  // a collection in key position (an error when it closes)
    // Mappings: the pending key and which keys were written explicitly or merged.
    bool has_key = false;
    bool key_is_merge = false;
    std::string key;
    bool key_is_string = false;
    YAML::Mark key_mark;
    std::unordered_set<std::string> explicit_keys;
    std::unordered_set<std::string> merged_keys;
  };
  struct Anchored {
    Value value;
    size_t nodes;
    size_t height;
  };

  bool ExpectingKey() const {
    return !stack_.empty() && stack_.back().value.IsObject() && !stack_.back().has_key;
  }

  static std::string KeyText(const Value& v) {
    switch (v.type()) {
      case json::Type::kString:
        return v.AsString();
      case json::Type::kBool:
        return v.AsBool() ? "true" : "false";
      case json::Type::kInt:
        return std::to_string(v.AsInt());
      case json::Type::kDouble:
        return FormatGoFloat(v.AsDouble(), /*as_float32=*/true);
      default:
        return "";
    }
  }

  Value ScalarToValue(const YAML::Mark& mark, const std::string& tag, const std::string& text,
                      const Scalar& s, bool as_key) {
    switch (s.kind) {
      case Kind::kNull:
        if (as_key) throw BuildError{mark, "unsupported map key: null"};
        return Value();
      case Kind::kBool:
        return Value(s.b);
      case Kind::kInt:
        return Value(s.i);
      case Kind::kUint:
        return Value(static_cast<double>(s.u));
      case Kind::kFloat:
        // sigs.k8s.io/yaml formats float keys as 32-bit floats ("1.5", "1e+06").
        if (as_key) return Value(FormatGoFloat(s.d, /*as_float32=*/true));
        return FloatValue(mark, text, s.d);
      case Kind::kMerge:
        // "<<" outside a key: a string, as in go-yaml.
        return Value(text);
      case Kind::kString:
        break;
    }
    if (tag == std::string(kLongTagPrefix) + "binary") {
      StatusOr<std::string> decoded = encoding::Base64Decode(text);  // validated in ResolveTagged
      return Value(decoded.ok() ? std::move(decoded).value() : std::string());
    }
    return Value(text);
  }

  void SetKey(const YAML::Mark& mark, const Value& key) {
    Frame& f = stack_.back();
    f.has_key = true;
    f.key_is_merge = false;
    f.key = KeyText(key);
    f.key_is_string = key.IsString();
    f.key_mark = mark;
  }

  void Remember(YAML::anchor_t anchor, Value v, size_t nodes, size_t height) {
    if (anchor == YAML::NullAnchor) return;
    anchors_.insert_or_assign(anchor, Anchored{std::move(v), nodes, height});
  }

  void Open(const YAML::Mark& mark, YAML::anchor_t anchor, Value v) {
    // A collection as a key is an error once it is complete: on truncated flow input yaml-cpp
    // reports collection starts in odd places and then its own, clearer, error.
    bool is_key = ExpectingKey();
    if (stack_.size() >= kMaxDepth) {
      throw BuildError{mark, "exceeded max depth of " + std::to_string(kMaxDepth)};
    }
    Frame f;
    f.value = std::move(v);
    f.anchor = anchor;
    f.mark = mark;
    f.is_key = is_key;
    stack_.push_back(std::move(f));
    if (anchor != YAML::NullAnchor) open_anchors_.insert(anchor);
  }

  void Close() {
    if (stack_.empty()) return;  // yaml-cpp never does this; stay total anyway
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    if (f.is_key) {
      throw BuildError{f.mark, "unsupported map key: a mapping or sequence cannot be a key"};
    }
    if (f.anchor != YAML::NullAnchor) {
      open_anchors_.erase(f.anchor);
      Remember(f.anchor, f.value.Clone(), f.nodes, f.height);
    }
    AddValue(f.mark, std::move(f.value), f.nodes, f.height);
  }

  void AddValue(const YAML::Mark& mark, Value v, size_t nodes, size_t height) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return;
    }
    Frame& top = stack_.back();
    top.nodes += nodes;
    top.height = std::max(top.height, height + 1);
    if (top.value.IsArray()) {
      top.value.elements().push_back(std::move(v));
      return;
    }
    top.has_key = false;
    if (top.key_is_merge) {
      Merge(mark, top, std::move(v));
      return;
    }
    if (top.explicit_keys.count(top.key) > 0) {
      std::string shown = top.key_is_string ? json::Write(Value(top.key)) : top.key;
      if (duplicates_ == nullptr) {
        throw BuildError{top.key_mark, "key " + shown + " already set in map"};
      }
      duplicates_->push_back(DuplicateKey{mark.line + 1, std::move(shown)});
      top.value.Set(top.key, std::move(v));
      return;
    }
    top.explicit_keys.insert(top.key);
    if (top.merged_keys.erase(top.key) > 0) {
      top.value.Set(top.key, std::move(v));  // an explicit key wins over a merged one
    } else {
      top.value.members().emplace_back(std::move(top.key), std::move(v));
    }
  }

  // `<<: map` or `<<: [map, ...]`: copies keys the mapping does not have yet; earlier maps win.
  static void Merge(const YAML::Mark& mark, Frame& top, Value v) {
    std::vector<Value*> sources;
    if (v.IsObject()) {
      sources.push_back(&v);
    } else if (v.IsArray()) {
      for (Value& e : v.elements()) {
        if (!e.IsObject()) break;
        sources.push_back(&e);
      }
      if (sources.size() != v.elements().size()) sources.clear();
    }
    if (sources.empty() && !(v.IsArray() && v.elements().empty())) {
      throw BuildError{mark, "map merge requires map or sequence of maps as the value"};
    }
    for (Value* src : sources) {
      for (json::Member& m : src->members()) {
        if (top.explicit_keys.count(m.first) > 0 || top.merged_keys.count(m.first) > 0) continue;
        top.merged_keys.insert(m.first);
        top.value.members().emplace_back(m.first, std::move(m.second));
      }
    }
  }

  std::string_view text_;
  std::vector<DuplicateKey>* duplicates_;
  std::vector<Value> docs_;
  std::vector<Frame> stack_;
  std::unordered_map<YAML::anchor_t, Anchored> anchors_;
  std::unordered_set<YAML::anchor_t> open_anchors_;
  size_t alias_nodes_ = 0;
  int last_start_pos_ = -1;
  Value root_;
};

StatusOr<std::vector<Value>> ParseDocuments(std::string_view text,
                                            std::vector<DuplicateKey>* duplicates) {
  RETURN_IF_ERROR(CheckInputCharacters(text));
  std::istringstream in{std::string(text)};
  Builder builder(text, duplicates);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const BuildError& e) {
    return InvalidArgumentError(Where(e.mark) + e.msg);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's recursive parser stops at 500 nested nodes with the text "bad file".
    return InvalidArgumentError(Where(e.mark) + "exceeded max depth of " +
                                std::to_string(e.depth() - 1));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(Where(e.mark) + e.msg);
  } catch (const std::exception& e) {
    return InvalidArgumentError(std::string("yaml: ") + e.what());
  } catch (...) {
    return InvalidArgumentError("yaml: unknown parser error");
  }
  std::vector<Value> docs;
  for (Value& d : builder.docs()) {
    if (!d.IsNull()) docs.push_back(std::move(d));
  }
  return docs;
}

StatusOr<Value> ParseOne(std::string_view text, std::vector<DuplicateKey>* duplicates) {
  ASSIGN_OR_RETURN(std::vector<Value> docs, ParseDocuments(text, duplicates));
  if (docs.empty()) return Value();
  if (docs.size() > 1) {
    return InvalidArgumentError("yaml: expected a single document, found " +
                                std::to_string(docs.size()));
  }
  return std::move(docs[0]);
}

}  // namespace

StatusOr<std::vector<json::Value>> ParseYamlDocuments(std::string_view text) {
  return ParseDocuments(text, nullptr);
}

StatusOr<json::Value> ParseYaml(std::string_view text) { return ParseOne(text, nullptr); }

StatusOr<json::Value> ParseYamlKeepingLast(std::string_view text,
                                           std::vector<DuplicateKey>* duplicates) {
  return ParseOne(text, duplicates);
}

}  // namespace trainer::yaml
