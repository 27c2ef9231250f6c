// ToYaml: block-style YAML that reads back (through ParseYaml, kubectl and the apiserver) as the
// value written.
#include <cstring>
#include <string>
#include <string_view>

#include "common/yaml/resolve.h"
#include "common/yaml/yaml.h"

namespace trainer::yaml {
namespace {

using internal::FormatGoFloat;
using internal::Kind;
using internal::Resolve;
using json::Value;

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
