// Quantity parsing, exact arithmetic and canonical printing, after apimachinery's
// pkg/api/resource (quantity.go, amount.go, suffix.go).
#include "common/quantity/quantity.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace trainer::quantity {
namespace {

using i128 = __int128;

constexpr char kErrFormatWrong[] =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr char kErrSuffix[] = "unable to parse quantity's suffix";
constexpr char kErrNumeric[] = "unable to parse numeric part of quantity";

// Apimachinery keeps nine fractional digits at most and rounds smaller values up.
constexpr int32_t kMinExponent = -9;
constexpr int kMaxDigits = 18;  // mantissas stay below 10^18

i128 Pow10(int n) {
  i128 r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Suffix → (base, exponent): base 10 exponents for SI and "e" forms, base 2 for binary.
struct Suffix {
  int base = 10;
  int exponent = 0;
  Quantity::Format format = Quantity::Format::kDecimalSI;
};

bool ParseSuffix(std::string_view s, Suffix* out) {
  static const struct {
    std::string_view text;
    int base;
    int exponent;
  } kTable[] = {{"", 10, 0},   {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3}, {"k", 10, 3},
                {"M", 10, 6},  {"G", 10, 9},  {"T", 10, 12}, {"P", 10, 15}, {"E", 10, 18},
                {"Ki", 2, 10}, {"Mi", 2, 20}, {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50},
                {"Ei", 2, 60}};
  for (const auto& e : kTable) {
    if (s == e.text) {
      out->base = e.base;
      out->exponent = e.exponent;
      out->format = e.base == 2 ? Quantity::Format::kBinarySI : Quantity::Format::kDecimalSI;
      return true;
    }
  }
  if (s.size() >= 2 && (s[0] == 'e' || s[0] == 'E')) {
    std::string_view digits = s.substr(1);
    bool negative = false;
    if (digits[0] == '+' || digits[0] == '-') {
      negative = digits[0] == '-';
      digits.remove_prefix(1);
    }
    if (digits.empty() || digits.size() > 4) return false;
    int value = 0;
    for (char c : digits) {
      if (!IsDigit(c)) return false;
      value = value * 10 + (c - '0');
    }
    out->base = 10;
    out->exponent = negative ? -value : value;
    out->format = Quantity::Format::kDecimalExponent;
    return true;
  }
  return false;
}

// Divides rounding away from zero (so positive values round up, as apimachinery does).
i128 DivRoundUp(i128 a, i128 b) {
  i128 q = a / b;
  if (a % b != 0) q += (a > 0) ? 1 : -1;
  return q;
}

int64_t Saturate(i128 v) {
  if (v > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (v < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

int CountDigits(i128 v) {
  if (v < 0) v = -v;
  int n = 0;
  while (v > 0) {
    v /= 10;
    ++n;
  }
  return n;
}

}  // namespace

Quantity::Quantity(i128 mantissa, int32_t exponent, Format format) : format_(format) {
  // Keep the mantissa within 18 digits; drop (round up) digits beyond that or below 1n.
  while (CountDigits(mantissa) > kMaxDigits || (exponent < kMinExponent && mantissa != 0)) {
    mantissa = DivRoundUp(mantissa, 10);
    ++exponent;
  }
  mantissa_ = static_cast<int64_t>(mantissa);
  exponent_ = exponent;
  Normalize();
}

void Quantity::Normalize() {
  if (mantissa_ == 0) {
    exponent_ = 0;
    return;
  }
  while (mantissa_ % 10 == 0) {
    mantissa_ /= 10;
    ++exponent_;
  }
}

Quantity Quantity::FromInt(int64_t value, Format format) { return Quantity(value, 0, format); }
Quantity Quantity::FromMilli(int64_t milli) { return Quantity(milli, -3, Format::kDecimalSI); }

StatusOr<Quantity> Quantity::Parse(std::string_view text) {
  if (text.empty()) return InvalidArgumentError("quantities must not be empty");  // ErrFormatWrong in Go
  std::string_view s = text;
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  // Numeric part: digits with at most one '.'.
  size_t i = 0;
  i128 mantissa = 0;
  int32_t exponent = 0;
  int digits = 0;
  bool seen_dot = false;
  bool any_digit = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      if (seen_dot) return InvalidArgumentError(kErrNumeric);
      seen_dot = true;
      continue;
    }
    if (!IsDigit(c)) break;
    any_digit = true;
    if (mantissa == 0 && c == '0') {
      if (seen_dot) --exponent;
      continue;
    }
    if (digits < 36) {  // more digits than any int64 holds are dropped (rounded up below)
      mantissa = mantissa * 10 + (c - '0');
      ++digits;
      if (seen_dot) --exponent;
    } else if (!seen_dot) {
      ++exponent;
    }
  }
  if (!any_digit) return InvalidArgumentError(kErrFormatWrong);
  std::string_view suffix_text = s.substr(i);
  // The regular expression's suffix class.
  for (char c : suffix_text) {
    if (!(IsDigit(c) || c == '+' || c == '-' || std::string_view("eEinumkKMGTP").find(c) != std::string_view::npos)) {
      return InvalidArgumentError(kErrFormatWrong);
    }
  }
  Suffix suffix;
  if (!ParseSuffix(suffix_text, &suffix)) return InvalidArgumentError(kErrSuffix);
  if (negative) mantissa = -mantissa;
  // Shrink an over-long mantissa before scaling so the arithmetic stays in 128 bits.
  while (CountDigits(mantissa) > kMaxDigits) {
    mantissa = DivRoundUp(mantissa, 10);
    ++exponent;
  }
  if (suffix.base == 2) {
    // 2^exp is an exact integer: multiply it in (values above ~9.2e18 saturate).
    i128 factor = static_cast<i128>(1) << suffix.exponent;
    i128 scaled = mantissa * factor;
    while (CountDigits(scaled) > 36) {
      scaled = DivRoundUp(scaled, 10);
      ++exponent;
    }
    return Quantity(scaled, exponent, suffix.format);
  }
  int32_t total = exponent + suffix.exponent;
  if (total > 100 || total < -100) {
    if (total < -100) return Quantity(negative ? -1 : (mantissa == 0 ? 0 : 1), kMinExponent, suffix.format);
    return InvalidArgumentError(kErrNumeric);
  }
  return Quantity(mantissa, total, suffix.format);
}

StatusOr<Quantity> Quantity::FromJson(const json::Value& v) {
  if (v.IsString()) return Parse(v.AsString());
  if (v.IsInt()) return FromInt(v.AsInt());
  if (v.IsDouble()) {
    double d = v.AsDouble();
    if (!std::isfinite(d)) return InvalidArgumentError(kErrFormatWrong);
    // The shortest text that reads back as the same double, as the client wrote it.
    char buf[40];
    for (int precision = 15; precision <= 17; ++precision) {
      std::snprintf(buf, sizeof(buf), "%.*g", precision, d);
      if (std::strtod(buf, nullptr) == d) break;
    }
    return Parse(buf);
  }
  return InvalidArgumentError("quantity must be a string or a number, got " +
                              std::string(json::DescribeType(v)));
}

int64_t Quantity::Value() const {
  if (exponent_ >= 0) {
    if (exponent_ > 20) return Sign() > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
    return Saturate(static_cast<i128>(mantissa_) * Pow10(exponent_));
  }
  if (-exponent_ > 30) return Sign() > 0 ? 1 : 0;
  return Saturate(DivRoundUp(mantissa_, Pow10(-exponent_)));
}

int64_t Quantity::MilliValue() const {
  int32_t e = exponent_ + 3;
  if (e >= 0) {
    if (e > 20) return Sign() > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
    return Saturate(static_cast<i128>(mantissa_) * Pow10(e));
  }
  if (-e > 30) return Sign() > 0 ? 1 : 0;
  return Saturate(DivRoundUp(mantissa_, Pow10(-e)));
}

double Quantity::AsDouble() const { return static_cast<double>(mantissa_) * std::pow(10.0, exponent_); }

namespace {

std::string Int128ToString(i128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  if (neg) v = -v;
  std::string out;
  while (v > 0) {
    out.insert(out.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  if (neg) out.insert(out.begin(), '-');
  return out;
}

std::string_view DecimalSuffix(int e3) {
  switch (e3) {
    case -9: return "n";
    case -6: return "u";
    case -3: return "m";
    case 0: return "";
    case 3: return "k";
    case 6: return "M";
    case 9: return "G";
    case 12: return "T";
    case 15: return "P";
    case 18: return "E";
  }
  return "";
}

}  // namespace

std::string Quantity::ToString() const {
  if (mantissa_ == 0) return "0";
  Format format = format_;
  if (format == Format::kBinarySI) {
    // Binary suffixes only for integers of at least 1024 in magnitude, as apimachinery prints.
    bool integral = exponent_ >= 0;
    i128 value = 0;
    if (integral && exponent_ <= 20) value = static_cast<i128>(mantissa_) * Pow10(exponent_);
    if (integral && exponent_ <= 20 && (value >= 1024 || value <= -1024)) {
      static const char* kBinary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
      int k = 0;
      while (k < 6 && value % 1024 == 0) {
        value /= 1024;
        ++k;
      }
      return Int128ToString(value) + kBinary[k];
    }
    format = Format::kDecimalSI;
  }
  // Largest multiple of three not above the exponent, clamped to the suffix range.
  int32_t e3 = exponent_ >= 0 ? (exponent_ / 3) * 3 : -(((-exponent_) + 2) / 3) * 3;
  if (format == Format::kDecimalSI && e3 > 18) e3 = 18;
  if (e3 < -9) e3 = -9;
  i128 mantissa = static_cast<i128>(mantissa_) * Pow10(exponent_ - e3);
  std::string out = Int128ToString(mantissa);
  if (format == Format::kDecimalExponent) {
    if (e3 != 0) out += "e" + std::to_string(e3);
    return out;
  }
  return out + std::string(DecimalSuffix(e3));
}

Quantity Quantity::operator+(const Quantity& other) const {
  Format format = IsZero() ? other.format_ : format_;
  int32_t e = std::min(exponent_, other.exponent_);
  // Align exponents; beyond 10^18 of spread the smaller term is below the kept precision.
  if (exponent_ - e > 18) return Quantity(mantissa_, exponent_, format);
  if (other.exponent_ - e > 18) return Quantity(other.mantissa_, other.exponent_, format);
  i128 a = static_cast<i128>(mantissa_) * Pow10(exponent_ - e);
  i128 b = static_cast<i128>(other.mantissa_) * Pow10(other.exponent_ - e);
  return Quantity(a + b, e, format);
}

Quantity Quantity::operator-(const Quantity& other) const {
  return *this + (other * -1);
}

Quantity Quantity::operator*(int64_t factor) const {
  return Quantity(static_cast<i128>(mantissa_) * factor, exponent_, format_);
}

std::strong_ordering Quantity::operator<=>(const Quantity& other) const {
  if (Sign() != other.Sign()) return Sign() <=> other.Sign();
  if (mantissa_ == 0) return std::strong_ordering::equal;
  int32_t e = std::min(exponent_, other.exponent_);
  if (exponent_ - e > 30 || other.exponent_ - e > 30) {
    // Magnitudes differ by more than 10^12 beyond any mantissa: compare exponents.
    bool this_bigger_mag = (exponent_ + CountDigits(mantissa_)) > (other.exponent_ + CountDigits(other.mantissa_));
    if (Sign() > 0) return this_bigger_mag ? std::strong_ordering::greater : std::strong_ordering::less;
    return this_bigger_mag ? std::strong_ordering::less : std::strong_ordering::greater;
  }
  i128 a = static_cast<i128>(mantissa_) * Pow10(exponent_ - e);
  i128 b = static_cast<i128>(other.mantissa_) * Pow10(other.exponent_ - e);
  return a <=> b;
}

StatusOr<IntOrString> IntOrString::FromJson(const json::Value& v) {
  if (v.IsInt()) return IntOrString::FromInt(v.AsInt());
  if (v.IsString()) return IntOrString::FromString(v.AsString());
  if (v.IsDouble() && std::trunc(v.AsDouble()) == v.AsDouble() && std::fabs(v.AsDouble()) < 9.2e18) {
    return IntOrString::FromInt(static_cast<int64_t>(v.AsDouble()));
  }
  return InvalidArgumentError("expected an integer or a string, got " + std::string(json::DescribeType(v)));
}

json::Value IntOrString::ToJson() const {
  return is_int ? json::Value(int_value) : json::Value(str);
}

}  // namespace trainer::quantity
