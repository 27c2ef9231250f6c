// YAML adapter over yaml-cpp's event parser. Scalar typing mirrors go-yaml v2's resolve.go as
// used by sigs.k8s.io/yaml; yaml-cpp exceptions (and our own parse errors) never leave this file.
#include "common/yaml/yaml.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "common/encoding/base64.h"

namespace trainer::yaml {
namespace {

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

// ---------------------------------------------------------------------------------------------
// Input characters (go-yaml v2 readerc.go). yaml-cpp guesses UTF-16/32 from the first bytes and
// passes other bytes through, so a manifest it accepts could hold text the apiserver's reader
// rejects (and that json::Write could not emit). We check the stream first, with go-yaml's
// texts. Unlike go-yaml, UTF-16 with a byte order mark is not decoded; it is rejected here.

// YAML's printable set: what go-yaml allows outside "control characters are not allowed".
bool IsPrintable(uint32_t c) {
  return c == 0x09 || c == 0x0A || c == 0x0D || (c >= 0x20 && c <= 0x7E) || c == 0x85 ||
         (c >= 0xA0 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
         (c >= 0x10000 && c <= 0x10FFFF);
}

// OK, or the first character go-yaml's reader rejects, as "yaml: line L, column C: <problem>"
// (go-yaml itself reports reader errors without a position; ours has one).
Status CheckInputCharacters(std::string_view text) {
  size_t i = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;  // a UTF-8 byte order mark is skipped
  int line = 1;
  int column = 1;
  auto fail = [&](std::string_view problem) {
    return InvalidArgumentError("yaml: line " + std::to_string(line) + ", column " +
                                std::to_string(column) + ": " + std::string(problem));
  };
  while (i < text.size()) {
    auto octet = static_cast<unsigned char>(text[i]);
    size_t width;
    uint32_t value;
    if ((octet & 0x80) == 0x00) {
      width = 1;
      value = octet;
    } else if ((octet & 0xE0) == 0xC0) {
      width = 2;
      value = octet & 0x1F;
    } else if ((octet & 0xF0) == 0xE0) {
      width = 3;
      value = octet & 0x0F;
    } else if ((octet & 0xF8) == 0xF0) {
      width = 4;
      value = octet & 0x07;
    } else {
      return fail("invalid leading UTF-8 octet");
    }
    if (width > text.size() - i) return fail("incomplete UTF-8 octet sequence");
    for (size_t k = 1; k < width; ++k) {
      auto trailing = static_cast<unsigned char>(text[i + k]);
      if ((trailing & 0xC0) != 0x80) return fail("invalid trailing UTF-8 octet");
      value = (value << 6) | (trailing & 0x3F);
    }
    if ((width == 2 && value < 0x80) || (width == 3 && value < 0x800) ||
        (width == 4 && value < 0x10000)) {
      return fail("invalid length of a UTF-8 sequence");
    }
    if ((value >= 0xD800 && value <= 0xDFFF) || value > 0x10FFFF) {
      return fail("invalid Unicode character");
    }
    if (!IsPrintable(value)) return fail("control characters are not allowed");
    i += width;
    if (value == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Scalar resolution (go-yaml v2 resolve.go).

enum class Kind { kNull, kBool, kInt, kUint, kFloat, kString, kMerge };

struct Scalar {
  Kind kind = Kind::kString;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
};

// Go's strconv.ParseUint(s, 0, 64): 0x/0o/0b prefixes, a leading 0 means octal.
bool ParseGoUint(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  int base = 10;
  if (s[0] == '0') {
    char c1 = s.size() >= 3 ? static_cast<char>(s[1] | 0x20) : 0;
    if (c1 == 'b') {
      base = 2;
      s.remove_prefix(2);
    } else if (c1 == 'o') {
      base = 8;
      s.remove_prefix(2);
    } else if (c1 == 'x') {
      base = 16;
      s.remove_prefix(2);
    } else {
      base = 8;
      s.remove_prefix(1);
    }
  }
  uint64_t n = 0;
  for (char c : s) {
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') {
      digit = (c | 0x20) - 'a' + 10;
    } else {
      return false;
    }
    if (digit >= base) return false;
    if (n > (UINT64_MAX - static_cast<uint64_t>(digit)) / static_cast<uint64_t>(base)) return false;
    n = n * static_cast<uint64_t>(base) + static_cast<uint64_t>(digit);
  }
  *out = n;
  return true;
}

// Go's strconv.ParseInt(s, 0, 64).
bool ParseGoInt(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  uint64_t u;
  if (!ParseGoUint(s, &u)) return false;
  if (neg) {
    if (u > static_cast<uint64_t>(INT64_MAX) + 1) return false;
    *out = u == static_cast<uint64_t>(INT64_MAX) + 1 ? INT64_MIN : -static_cast<int64_t>(u);
  } else {
    if (u > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(u);
  }
  return true;
}

// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool IsYamlStyleFloat(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

// Go's ParseFloat for the decimal syntax above: overflow is an error, underflow is not.
bool ParseDecimalFloat(const std::string& s, double* out) {
  errno = 0;
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || std::isinf(d)) return false;
  *out = d;
  return true;
}

bool LookupSpecial(std::string_view s, Scalar* out) {
  static const auto* kTable = new std::unordered_map<std::string_view, Scalar>([] {
    std::unordered_map<std::string_view, Scalar> t;
    auto add = [&](std::initializer_list<std::string_view> names, Scalar v) {
      for (auto n : names) t.emplace(n, v);
    };
    add({"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"},
        Scalar{Kind::kBool, true});
    add({"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"},
        Scalar{Kind::kBool, false});
    add({"", "~", "null", "Null", "NULL"}, Scalar{Kind::kNull});
    add({".nan", ".NaN", ".NAN"}, Scalar{Kind::kFloat, false, 0, 0, std::nan("")});
    add({".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"},
        Scalar{Kind::kFloat, false, 0, 0, HUGE_VAL});
    add({"-.inf", "-.Inf", "-.INF"}, Scalar{Kind::kFloat, false, 0, 0, -HUGE_VAL});
    add({"<<"}, Scalar{Kind::kMerge});
    return t;
  }());
  auto it = kTable->find(s);
  if (it == kTable->end()) return false;
  *out = it->second;
  return true;
}

// The type a plain scalar has in YAML 1.1 as go-yaml v2 reads it.
Scalar Resolve(std::string_view in) {
  Scalar r;
  char hint = 'N';
  if (!in.empty()) {
    char c = in[0];
    if (c == '+' || c == '-') {
      hint = 'S';
    } else if (c >= '0' && c <= '9') {
      hint = 'D';
    } else if (std::strchr("yYnNtTfFoO~<", c) != nullptr) {
      hint = 'M';
    } else if (c == '.') {
      hint = '.';
    } else {
      hint = 0;
    }
  }
  if (hint == 0) return r;
  if (LookupSpecial(in, &r)) return r;
  r = Scalar{};
  if (hint == '.') {
    double d;
    if (IsYamlStyleFloat(in) && ParseDecimalFloat(std::string(in), &d)) {
      return Scalar{Kind::kFloat, false, 0, 0, d};
    }
    return r;
  }
  if (hint == 'D' || hint == 'S') {
    std::string plain;
    plain.reserve(in.size());
    for (char c : in) {
      if (c != '_') plain.push_back(c);
    }
    int64_t i;
    if (ParseGoInt(plain, &i)) return Scalar{Kind::kInt, false, i};
    uint64_t u;
    if (ParseGoUint(plain, &u)) return Scalar{Kind::kUint, false, 0, u};
    double d;
    if (IsYamlStyleFloat(plain) && ParseDecimalFloat(plain, &d)) {
      return Scalar{Kind::kFloat, false, 0, 0, d};
    }
    // "0b..." with underscores removed was handled by ParseGoInt; nothing else to try.
  }
  return r;
}

// strconv.FormatFloat(d, 'g', -1, 64 or 32): the text go-yaml writes for a float.
std::string FormatGoFloat(double d, bool as_float32) {
  if (std::isnan(d)) return ".nan";
  if (std::isinf(d)) return d > 0 ? ".inf" : "-.inf";
  char buf[64];
  std::to_chars_result res =
      as_float32 ? std::to_chars(buf, buf + sizeof(buf), static_cast<float>(d),
                                 std::chars_format::scientific)
                 : std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string_view text(buf, static_cast<size_t>(res.ptr - buf));
  bool neg = !text.empty() && text[0] == '-';
  if (neg) text.remove_prefix(1);
  size_t e = text.find('e');
  std::string digits;
  for (char c : text.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  int exp = std::atoi(std::string(text.substr(e + 1)).c_str());
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = neg ? "-" : "";
  if (digits == "0") return out + "0";
  int nd = static_cast<int>(digits.size());
  if (exp < -4 || exp >= 6) {
    out += digits[0];
    if (nd > 1) out += "." + digits.substr(1);
    out += exp < 0 ? "e-" : "e+";
    int a = std::abs(exp);
    if (a < 10) out += "0";
    out += std::to_string(a);
    return out;
  }
  int dp = exp + 1;
  if (dp <= 0) {
    out += "0." + std::string(static_cast<size_t>(-dp), '0') + digits;
  } else if (dp >= nd) {
    out += digits + std::string(static_cast<size_t>(dp - nd), '0');
  } else {
    out += digits.substr(0, static_cast<size_t>(dp)) + "." + digits.substr(static_cast<size_t>(dp));
  }
  return out;
}

std::string_view ShortTagName(Kind k) {
  switch (k) {
    case Kind::kNull:
      return "!!null";
    case Kind::kBool:
      return "!!bool";
    case Kind::kInt:
    case Kind::kUint:
      return "!!int";
    case Kind::kFloat:
      return "!!float";
    case Kind::kMerge:
      return "!!merge";
    case Kind::kString:
      break;
  }
  return "!!str";
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

// ---------------------------------------------------------------------------------------------
// Event handler building json::Values with an explicit stack (no recursion on the input).

class Builder : public YAML::EventHandler {
 public:
  explicit Builder(std::string_view text) : text_(text) {}
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
      throw BuildError{top.key_mark, "key " + json::Write(Value(top.key)) + " already set in map"};
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
  std::vector<Value> docs_;
  std::vector<Frame> stack_;
  std::unordered_map<YAML::anchor_t, Anchored> anchors_;
  std::unordered_set<YAML::anchor_t> open_anchors_;
  size_t alias_nodes_ = 0;
  int last_start_pos_ = -1;
  Value root_;
};

// ---------------------------------------------------------------------------------------------
// Emitter.

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Code points YAML treats as line breaks, that readers strip (NEL, LS, PS, BOM, C1 controls) or
// reject (U+FFFE, U+FFFF).
bool HasSpecialUnicode(std::string_view s) {
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    auto n = static_cast<unsigned char>(s[i + 1]);
    if (c == 0xC2 && n >= 0x80 && n <= 0x9F) return true;
    if (i + 2 < s.size()) {
      auto n2 = static_cast<unsigned char>(s[i + 2]);
      if (c == 0xE2 && n == 0x80 && (n2 == 0xA8 || n2 == 0xA9)) return true;
      if (c == 0xEF && n == 0xBB && n2 == 0xBF) return true;
      if (c == 0xEF && n == 0xBF && (n2 == 0xBE || n2 == 0xBF)) return true;  // not printable
    }
  }
  return false;
}

// Control bytes other than, in block scalars, line feeds and tabs.
bool HasControl(std::string_view s, bool in_block) {
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if ((c == '\n' || c == '\t') && in_block) continue;
    if (c < 0x20 || c == 0x7f) return true;
  }
  return HasSpecialUnicode(s);
}

bool CanBePlain(std::string_view s) {
  if (s.empty() || HasControl(s, /*in_block=*/false)) return false;
  if (Resolve(s).kind != Kind::kString) return false;
  char first = s[0];
  if (std::strchr("?:,[]{}#&*!|>'\"%@`", first) != nullptr) return false;
  if (first == '-' && (s.size() == 1 || s[1] == ' ')) return false;
  if (StartsWith(s, "---") || StartsWith(s, "...")) return false;
  if (first == ' ' || s.back() == ' ' || s.back() == ':') return false;
  if (s.find(": ") != std::string_view::npos || s.find(" #") != std::string_view::npos) {
    return false;
  }
  // Sexagesimal numbers and timestamps are types for other YAML 1.1 readers; quote them.
  if ((first == '+' || first == '-' || (first >= '0' && first <= '9')) &&
      (s.find(':') != std::string_view::npos || s.find('-', 1) != std::string_view::npos)) {
    return false;
  }
  return true;
}

std::string DoubleQuoted(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\0':
        out += "\\0";
        continue;
      default:
        break;
    }
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
      continue;
    }
    if (c == 0xC2 && i + 1 < s.size()) {
      auto n = static_cast<unsigned char>(s[i + 1]);
      if (n >= 0x80 && n <= 0x9F) {
        out += "\\x";
        out += kHex[n >> 4];
        out += kHex[n & 0xf];
        ++i;
        continue;
      }
    }
    if (i + 2 < s.size()) {
      auto n = static_cast<unsigned char>(s[i + 1]);
      auto n2 = static_cast<unsigned char>(s[i + 2]);
      if (c == 0xE2 && n == 0x80 && (n2 == 0xA8 || n2 == 0xA9)) {
        out += n2 == 0xA8 ? "\\L" : "\\P";
        i += 2;
        continue;
      }
      if (c == 0xEF && n == 0xBB && n2 == 0xBF) {
        out += "\\uFEFF";
        i += 2;
        continue;
      }
      if (c == 0xEF && n == 0xBF && (n2 == 0xBE || n2 == 0xBF)) {
        out += n2 == 0xBE ? "\\uFFFE" : "\\uFFFF";
        i += 2;
        continue;
      }
    }
    out.push_back(static_cast<char>(c));
  }
  out += "\"";
  return out;
}

// Multi-line text reads best as a literal block; it must hold no characters a block cannot.
bool CanBeLiteral(std::string_view s) {
  if (s.find('\n') == std::string_view::npos || HasControl(s, /*in_block=*/true)) {
    return false;
  }
  return s.find_first_not_of(" \n") != std::string_view::npos;
}

void Indent(int n, std::string& out) { out.append(static_cast<size_t>(n), ' '); }

constexpr size_t kMaxImplicitKey = 1000;

// `|` block for `s` whose content sits at column `indent` + 2 (`indent` is the column of the key
// or dash it belongs to).
void EmitLiteral(std::string_view s, int indent, std::string& out) {
  size_t trailing = 0;
  while (trailing < s.size() && s[s.size() - 1 - trailing] == '\n') ++trailing;
  out += "|";
  if (s[0] == ' ' || s[0] == '\n') out += "2";  // content indentation cannot be guessed
  if (trailing == 0) out += "-";
  if (trailing > 1) out += "+";
  out += "\n";
  std::string_view body = s.substr(0, s.size() - trailing);
  size_t start = 0;
  while (true) {
    size_t nl = body.find('\n', start);
    std::string_view line = body.substr(start, nl == std::string_view::npos ? nl : nl - start);
    if (!line.empty()) {
      Indent(indent + 2, out);
      out += line;
    }
    out += "\n";
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  for (size_t i = 1; i < trailing; ++i) out += "\n";
}

std::string ScalarText(const Value& v) {
  switch (v.type()) {
    case json::Type::kNull:
      return "null";
    case json::Type::kBool:
      return v.AsBool() ? "true" : "false";
    case json::Type::kInt:
      return std::to_string(v.AsInt());
    case json::Type::kDouble:
      return FormatGoFloat(v.AsDouble(), /*as_float32=*/false);
    case json::Type::kString:
      return CanBePlain(v.AsString()) ? v.AsString() : DoubleQuoted(v.AsString());
    case json::Type::kArray:
      return "[]";
    case json::Type::kObject:
      return "{}";
  }
  return "null";
}

bool IsBlock(const Value& v) { return (v.IsArray() || v.IsObject()) && !v.empty(); }

void EmitMap(const Value& m, int indent, bool first_inline, std::string& out);
void EmitSeq(const Value& s, int indent, bool first_inline, std::string& out);

// Writes what follows "key:" or "-" (the indicator sits at column `indent`).
void EmitAfterIndicator(const Value& v, int indent, bool in_seq, std::string& out) {
  if (v.IsString() && CanBeLiteral(v.AsString())) {
    out += " ";
    EmitLiteral(v.AsString(), indent, out);
  } else if (!IsBlock(v)) {
    out += " " + ScalarText(v) + "\n";
  } else if (in_seq) {
    out += " ";
    if (v.IsObject()) {
      EmitMap(v, indent + 2, /*first_inline=*/true, out);
    } else {
      EmitSeq(v, indent + 2, /*first_inline=*/true, out);
    }
  } else {
    out += "\n";
    if (v.IsObject()) {
      EmitMap(v, indent + 2, /*first_inline=*/false, out);
    } else {
      EmitSeq(v, indent, /*first_inline=*/false, out);  // kubectl style: no extra indent
    }
  }
}

void EmitMap(const Value& m, int indent, bool first_inline, std::string& out) {
  bool first = true;
  for (const json::Member& member : m.members()) {
    if (!(first && first_inline)) Indent(indent, out);
    first = false;
    std::string key = CanBePlain(member.first) ? member.first : DoubleQuoted(member.first);
    if (key.size() > kMaxImplicitKey) {
      // YAML limits implicit keys to 1024 characters; longer ones need the explicit "? " form.
      out += "? " + key + "\n";
      Indent(indent, out);
    } else {
      out += key;
    }
    out += ":";
    EmitAfterIndicator(member.second, indent, /*in_seq=*/false, out);
  }
}

void EmitSeq(const Value& s, int indent, bool first_inline, std::string& out) {
  bool first = true;
  for (const Value& e : s.elements()) {
    if (!(first && first_inline)) Indent(indent, out);
    first = false;
    out += "-";
    EmitAfterIndicator(e, indent, /*in_seq=*/true, out);
  }
}

}  // namespace

StatusOr<std::vector<json::Value>> ParseYamlDocuments(std::string_view text) {
  RETURN_IF_ERROR(CheckInputCharacters(text));
  std::istringstream in{std::string(text)};
  Builder builder(text);
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

StatusOr<json::Value> ParseYaml(std::string_view text) {
  ASSIGN_OR_RETURN(std::vector<Value> docs, ParseYamlDocuments(text));
  if (docs.empty()) return Value();
  if (docs.size() > 1) {
    return InvalidArgumentError("yaml: expected a single document, found " +
                                std::to_string(docs.size()));
  }
  return std::move(docs[0]);
}

std::string ToYaml(const json::Value& v) {
  std::string out;
  if (v.IsObject() && !v.empty()) {
    EmitMap(v, 0, /*first_inline=*/false, out);
  } else if (v.IsArray() && !v.empty()) {
    EmitSeq(v, 0, /*first_inline=*/false, out);
  } else {
    out = ScalarText(v) + "\n";
  }
  return out;
}

}  // namespace trainer::yaml
