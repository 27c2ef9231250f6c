// Quantity parsing, exact arithmetic and canonical printing, after apimachinery's
// pkg/api/resource (quantity.go: ParseQuantity, parseQuantityString, CanonicalizeBytes;
// amount.go; suffix.go). IntOrString after pkg/util/intstr.
#include "common/quantity/quantity.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>

namespace trainer::quantity {
namespace {

using i128 = __int128;

constexpr char kErrFormatWrong[] =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr char kErrSuffix[] = "unable to parse quantity's suffix";
constexpr char kErrNumeric[] = "unable to parse numeric part of quantity";

constexpr int kMaxDigits = 30;        // significant digits kept (i128 holds 38)
constexpr int64_t kMinExponent = -9;  // upstream keeps nothing below nano
constexpr int64_t kMaxExponent = 1'000'000'000;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

using u128 = unsigned __int128;

// 10^0 .. 10^38, the powers of ten a 128-bit integer holds: a table, because every 128-bit
// division is a library call (dozens of instructions) and quantities are parsed and compared on
// every admission.
constexpr std::array<u128, 39> kPow10 = [] {
  std::array<u128, 39> t{};
  u128 p = 1;
  for (u128& e : t) {
    e = p;
    p *= 10;
  }
  return t;
}();

i128 Pow10(int64_t n) {
  if (n >= 0 && n < static_cast<int64_t>(kPow10.size())) {
    return static_cast<i128>(kPow10[static_cast<size_t>(n)]);
  }
  i128 r = 1;
  for (int64_t i = 0; i < n; ++i) r *= 10;
  return r;
}

// Decimal digits of |v| (0 for 0).
int Digits(i128 v) {
  const u128 magnitude = v < 0 ? -static_cast<u128>(v) : static_cast<u128>(v);
  int n = 0;
  while (n < static_cast<int>(kPow10.size()) && magnitude >= kPow10[static_cast<size_t>(n)]) ++n;
  return n;
}

bool FitsInt64(i128 v) {
  return v >= std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max();
}

// v % 10 and v / 10 (C++ truncation), in 64 bits when v fits.
int Mod10(i128 v) {
  return FitsInt64(v) ? static_cast<int>(static_cast<int64_t>(v) % 10) : static_cast<int>(v % 10);
}
i128 Div10(i128 v) { return FitsInt64(v) ? static_cast<int64_t>(v) / 10 : v / 10; }

int SignOf(i128 v) { return (v > 0) - (v < 0); }

// a / b rounded away from zero (inf.RoundUp), b > 0.
i128 DivAway(i128 a, i128 b) {
  if (FitsInt64(a) && FitsInt64(b)) {
    const int64_t a64 = static_cast<int64_t>(a), b64 = static_cast<int64_t>(b);
    return a64 / b64 + (a64 % b64 != 0 ? SignOf(a) : 0);
  }
  i128 q = a / b;
  if (a % b != 0) q += SignOf(a);
  return q;
}

int64_t Saturate(i128 v) {
  if (v > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (v < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

std::string I128ToString(i128 v) {
  if (FitsInt64(v)) return std::to_string(static_cast<int64_t>(v));
  bool neg = v < 0;
  std::string out;
  while (v != 0) {
    int d = static_cast<int>(v % 10);
    out.push_back(static_cast<char>('0' + (d < 0 ? -d : d)));
    v /= 10;
  }
  if (neg) out.push_back('-');
  return std::string(out.rbegin(), out.rend());
}

// suffix.go's decimal and binary tables.
struct Suffix {
  std::string_view text;
  int base;
  int exponent;
};
constexpr Suffix kSuffixes[] = {{"", 10, 0},   {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3},
                                {"k", 10, 3},  {"M", 10, 6},  {"G", 10, 9},  {"T", 10, 12},
                                {"P", 10, 15}, {"E", 10, 18}, {"Ki", 2, 10}, {"Mi", 2, 20},
                                {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50}, {"Ei", 2, 60}};

const Suffix* FindSuffix(std::string_view s) {
  for (const Suffix& e : kSuffixes) {
    if (s == e.text) return &e;
  }
  return nullptr;
}

// suffix.go's interpret: the tables, then "e<int>"/"E<int>".
bool InterpretSuffix(std::string_view s, int* base, int64_t* exponent, Quantity::Format* format) {
  if (const Suffix* e = FindSuffix(s)) {
    *base = e->base;
    *exponent = e->exponent;
    *format = e->base == 2 ? Quantity::Format::kBinarySI : Quantity::Format::kDecimalSI;
    return true;
  }
  if (s.size() < 2 || (s[0] != 'e' && s[0] != 'E')) return false;
  // strconv.ParseInt(s[1:], 10, 64)
  std::string_view digits = s.substr(1);
  bool negative = false;
  if (digits[0] == '+' || digits[0] == '-') {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty()) return false;
  int64_t value = 0;
  for (char c : digits) {
    if (!IsDigit(c)) return false;
    if (value > (std::numeric_limits<int64_t>::max() - (c - '0')) / 10) return false;
    value = value * 10 + (c - '0');
  }
  *base = 10;
  *exponent = negative ? -value : value;
  *format = Quantity::Format::kDecimalExponent;
  return true;
}

// Whether ParseQuantity takes its int64 fast path and keeps the input as the printed text.
bool KeepsText(std::string_view num, std::string_view denom, int64_t exponent,
               Quantity::Format format) {
  std::string shifted = std::string(num) + std::string(denom);
  if (format == Quantity::Format::kBinarySI) {
    if (!denom.empty()) return false;
    int64_t precision = 15 - static_cast<int64_t>(num.size()) - exponent * 3 / 10 - 1;
    if (precision < 0) return false;
    int64_t value = std::strtoll(shifted.c_str(), nullptr, 10);
    int64_t scaled;
    if (__builtin_mul_overflow(value, int64_t{1} << exponent, &scaled)) return false;
    return exponent % 10 == 0 && (value & 0x07) != 0;
  }
  int64_t precision = 18 - static_cast<int64_t>(num.size() + denom.size());
  int64_t scale = exponent - static_cast<int64_t>(denom.size());
  if (precision < 0 || scale < kMinExponent) return false;
  return scale % 3 == 0 && !shifted.ends_with("000") && shifted[0] != '0';
}

std::string_view TrimSpace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(kSpace);
  return s.substr(b, e - b + 1);
}

}  // namespace

Quantity::Quantity(i128 mantissa, int64_t exponent, Format format) : format_(format) {
  while (Digits(mantissa) > kMaxDigits) {
    mantissa = DivAway(mantissa, 10);
    ++exponent;
  }
  if (mantissa != 0 && exponent < kMinExponent) {
    int64_t shift = kMinExponent - exponent;
    mantissa = shift > 38 ? SignOf(mantissa) : DivAway(mantissa, Pow10(shift));
    exponent = kMinExponent;
  }
  while (mantissa != 0 && Mod10(mantissa) == 0) {
    mantissa = Div10(mantissa);
    ++exponent;
  }
  if (mantissa == 0) exponent = 0;
  mantissa_ = mantissa;
  exponent_ = static_cast<int32_t>(std::clamp<int64_t>(exponent, -kMaxExponent, kMaxExponent));
}

Quantity Quantity::FromInt(int64_t value, Format format) { return Quantity(value, 0, format); }
Quantity Quantity::FromMilli(int64_t milli) { return Quantity(milli, -3, Format::kDecimalSI); }

std::optional<Quantity> Quantity::ParsePlain(std::string_view str) {
  // Resource requests are almost always written so ("1", "8Gi", "500m"); the general path's
  // 128-bit arithmetic, strings and caps were a tenth of a cold admission call's code.
  constexpr size_t kMaxPlainDigits = 18;  // any such number fits int64
  size_t n = 0;
  while (n < str.size() && n <= kMaxPlainDigits && IsDigit(str[n])) ++n;
  if (n == 0 || n > kMaxPlainDigits || str[0] == '0') return std::nullopt;
  const Suffix* suffix = FindSuffix(str.substr(n));
  if (suffix == nullptr) return std::nullopt;
  int64_t value = 0;
  for (char c : str.substr(0, n)) value = value * 10 + (c - '0');
  // The constructor strips trailing zeros. No text_: where upstream keeps such a text it is the
  // canonical one ("500m", "4Gi"), and where it does not, it prints canonically too ("1000" ->
  // "1k", "1024Mi" -> "1Gi").
  if (suffix->base == 10) return Quantity(value, suffix->exponent, Format::kDecimalSI);
  // Above 2^63-1 the general path caps the value: leave those to it.
  if (__builtin_mul_overflow(value, int64_t{1} << suffix->exponent, &value)) return std::nullopt;
  return Quantity(value, 0, Format::kBinarySI);
}

StatusOr<Quantity> Quantity::Parse(std::string_view str) {
  if (std::optional<Quantity> plain = ParsePlain(str)) return *std::move(plain);
  return ParseGeneral(str);
}

StatusOr<Quantity> Quantity::ParseGeneral(std::string_view str) {
  if (str.empty()) return InvalidArgumentError(kErrFormatWrong);
  // parseQuantityString: sign, leading zeros, numerator, optional denominator, suffix.
  size_t pos = 0;
  const size_t end = str.size();
  bool positive = true;
  if (str[0] == '-' || str[0] == '+') {
    positive = str[0] == '+';
    ++pos;
  }
  while (pos < end && str[pos] == '0') ++pos;
  if (pos == end) return Quantity();  // "0", "-", "+000": zero, as upstream
  size_t start = pos;
  while (pos < end && IsDigit(str[pos])) ++pos;
  std::string_view num = str.substr(start, pos - start);
  if (num.empty()) num = "0";
  std::string_view denom;
  if (pos < end && str[pos] == '.') {
    start = ++pos;
    while (pos < end && IsDigit(str[pos])) ++pos;
    denom = str.substr(start, pos - start);
  }
  size_t suffix_start = pos;
  while (pos < end && std::strchr("eEinumkKMGTP", str[pos]) != nullptr) ++pos;
  if (pos < end && (str[pos] == '-' || str[pos] == '+')) ++pos;
  while (pos < end && IsDigit(str[pos])) ++pos;
  if (pos != end) return InvalidArgumentError(kErrFormatWrong);

  int base;
  int64_t exponent;
  Format format;
  if (!InterpretSuffix(str.substr(suffix_start), &base, &exponent, &format)) {
    return InvalidArgumentError(kErrSuffix);
  }
  if (exponent > kMaxExponent || exponent < -kMaxExponent) return InvalidArgumentError(kErrNumeric);

  // Significant digits, rounded away from zero to kMaxDigits.
  std::string digits = std::string(num) + std::string(denom);
  int64_t e10 = -static_cast<int64_t>(denom.size());
  size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) {
    Quantity zero;
    zero.format_ = format;
    return zero;
  }
  digits.erase(0, first);
  bool dropped_nonzero = false;
  if (digits.size() > static_cast<size_t>(kMaxDigits)) {
    dropped_nonzero = digits.find_first_not_of('0', kMaxDigits) != std::string::npos;
    e10 += static_cast<int64_t>(digits.size()) - kMaxDigits;
    digits.resize(kMaxDigits);
  }
  i128 mantissa = 0;
  for (char c : digits) mantissa = mantissa * 10 + (c - '0');
  if (dropped_nonzero) mantissa += 1;
  if (!positive) mantissa = -mantissa;

  Quantity q;
  if (base == 10) {
    q = Quantity(mantissa, e10 + exponent, format);
  } else {
    while (Digits(mantissa) > 20) {  // keeps mantissa * 2^60 within 128 bits
      mantissa = DivAway(mantissa, 10);
      ++e10;
    }
    q = Quantity(mantissa * (static_cast<i128>(1) << exponent), e10, format);
    // Upstream caps binary quantities at 2^63-1 and prints fractions below one as DecimalSI.
    const Quantity kMax(std::numeric_limits<int64_t>::max(), 0, format);
    if ((q.Sign() > 0 ? q : q * -1) > kMax) q = q.Sign() > 0 ? kMax : kMax * -1;
    const Quantity kOne(1, 0, format);
    if (q.Sign() != 0 && (q.Sign() > 0 ? q : q * -1) < kOne) q.format_ = Format::kDecimalSI;
  }
  if (KeepsText(num, denom, exponent, format)) q.text_ = std::string(str);
  return q;
}

StatusOr<Quantity> Quantity::FromJson(const json::Value& v) {
  switch (v.type()) {
    case json::Type::kString:
      return Parse(TrimSpace(v.AsString()));
    case json::Type::kInt:
      return Parse(std::to_string(v.AsInt()));
    case json::Type::kDouble:
      if (!std::isfinite(v.AsDouble())) return InvalidArgumentError(kErrFormatWrong);
      return Parse(json::GoJsonFloat(v.AsDouble()));
    case json::Type::kNull:
      return Quantity();  // UnmarshalJSON("null") is zero
    default:
      // Upstream hands the raw JSON ("true", "{...}") to ParseQuantity.
      return InvalidArgumentError(kErrFormatWrong);
  }
}

namespace {

// value / 10^scale rounded away from zero, saturating at the int64 range.
int64_t ScaledAway(i128 mantissa, int64_t exponent, int64_t scale) {
  if (mantissa == 0) return 0;
  int64_t d = exponent - scale;
  if (d >= 0) {
    if (Digits(mantissa) + d > 19) return Saturate(SignOf(mantissa) * Pow10(20));
    return Saturate(mantissa * Pow10(d));
  }
  if (-d > 38) return SignOf(mantissa);
  return Saturate(DivAway(mantissa, Pow10(-d)));
}

}  // namespace

int64_t Quantity::Value() const { return ScaledAway(mantissa_, exponent_, 0); }
int64_t Quantity::MilliValue() const { return ScaledAway(mantissa_, exponent_, -3); }

double Quantity::AsDouble() const {
  std::string text = I128ToString(mantissa_) + "e" + std::to_string(exponent_);
  return std::strtod(text.c_str(), nullptr);
}

std::string Quantity::ToString() const {
  if (!text_.empty()) return text_;
  if (mantissa_ == 0) return "0";
  if (format_ == Format::kBinarySI && exponent_ >= 0 && Digits(mantissa_) + exponent_ <= 38) {
    i128 value = mantissa_ * Pow10(exponent_);
    if (value >= 1024 || value <= -1024) {
      static constexpr const char* kBinary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
      int k = 0;
      while (k < 6 && value % 1024 == 0) {
        value /= 1024;
        ++k;
      }
      return I128ToString(value) + kBinary[k];
    }
  }
  // DecimalSI (also BinarySI below 1024 or with a fraction) and DecimalExponent: the exponent
  // goes down to a multiple of three.
  i128 mantissa = mantissa_;
  int64_t exponent = exponent_;
  while (exponent % 3 != 0) {
    mantissa *= 10;
    --exponent;
  }
  std::string out = I128ToString(mantissa);
  if (format_ != Format::kDecimalExponent) {
    static constexpr std::string_view kDecimal[] = {"n", "u", "m", "",  "k",
                                                    "M", "G", "T", "P", "E"};
    if (exponent >= -9 && exponent <= 18) return out + std::string(kDecimal[(exponent + 9) / 3]);
    // DecimalSI has no suffix beyond E: upstream falls back to the exponent form.
  }
  if (exponent != 0) out += "e" + std::to_string(exponent);
  return out;
}

Quantity Quantity::operator+(const Quantity& other) const {
  Format format = IsZero() ? other.format_ : format_;
  i128 ma = mantissa_, mb = other.mantissa_;
  int64_t ea = exponent_, eb = other.exponent_;
  if (mb == 0) return Quantity(ma, ea, format);
  if (ma == 0) return Quantity(mb, eb, format);
  // Align on the smaller exponent; when that would overflow 128 bits, the finer term lies far
  // below the kept precision and is rounded first.
  while (true) {
    int64_t e = std::min(ea, eb);
    if (Digits(ma) + (ea - e) <= 37 && Digits(mb) + (eb - e) <= 37) {
      return Quantity(ma * Pow10(ea - e) + mb * Pow10(eb - e), e, format);
    }
    if (ea < eb) {
      ma = DivAway(ma, 10);
      ++ea;
    } else {
      mb = DivAway(mb, 10);
      ++eb;
    }
  }
}

Quantity Quantity::operator-(const Quantity& other) const { return *this + (other * -1); }

Quantity Quantity::operator*(int64_t factor) const {
  i128 m = mantissa_;
  int64_t e = exponent_;
  while (Digits(m) + Digits(factor) > 38) {
    m = DivAway(m, 10);
    ++e;
  }
  return Quantity(m * factor, e, format_);
}

std::strong_ordering Quantity::operator<=>(const Quantity& other) const {
  if (Sign() != other.Sign()) return Sign() <=> other.Sign();
  if (mantissa_ == 0) return std::strong_ordering::equal;
  // Same sign: compare the position of the leading digit, then the aligned digits.
  int64_t lead_a = Digits(mantissa_) + static_cast<int64_t>(exponent_);
  int64_t lead_b = Digits(other.mantissa_) + static_cast<int64_t>(other.exponent_);
  if (lead_a != lead_b) {
    bool bigger = lead_a > lead_b;
    if (Sign() < 0) bigger = !bigger;
    return bigger ? std::strong_ordering::greater : std::strong_ordering::less;
  }
  int64_t e = std::min<int64_t>(exponent_, other.exponent_);
  i128 a = mantissa_ * Pow10(exponent_ - e);
  i128 b = other.mantissa_ * Pow10(other.exponent_ - e);
  return a <=> b;
}

StatusOr<IntOrString> IntOrString::FromJson(const json::Value& v) {
  auto in_range = [](double d) {
    return d >= std::numeric_limits<int32_t>::min() && d <= std::numeric_limits<int32_t>::max();
  };
  if (v.IsString()) return IntOrString::FromString(v.AsString());
  if (v.IsInt() && in_range(static_cast<double>(v.AsInt()))) return IntOrString::FromInt(v.AsInt());
  if (v.IsDouble() && std::trunc(v.AsDouble()) == v.AsDouble() && in_range(v.AsDouble())) {
    return IntOrString::FromInt(static_cast<int64_t>(v.AsDouble()));
  }
  if (v.IsNumber()) {
    return InvalidArgumentError("expected an integer in int32 range or a string, got " +
                                json::Write(v));
  }
  return InvalidArgumentError("expected an integer or a string, got " +
                              std::string(json::DescribeType(v)));
}

json::Value IntOrString::ToJson() const {
  return is_int ? json::Value(int_value) : json::Value(str);
}

}  // namespace trainer::quantity
