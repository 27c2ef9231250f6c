// go-yaml v2 resolve.go: the YAML 1.1 type of a plain scalar; Go's float formatting.
#include "common/yaml/resolve.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace trainer::yaml::internal {
namespace {

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

}  // namespace

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

}  // namespace trainer::yaml::internal
