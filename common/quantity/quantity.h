// Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource.Quantity) and
// IntOrString, with the same text forms, canonical printing and error messages.
//
// A Quantity is an exact decimal: a mantissa of up to 30 significant digits times a power of ten,
// plus the format it was written in (DecimalSI "500m", BinarySI "4Gi", DecimalExponent "1e3"),
// which decides how it is printed. As upstream, parsing rounds below 1n away from zero ("0.1n" is
// "1n") and caps BinarySI values at 2^63-1; unlike upstream's unbounded inf.Dec, a value with
// more than 30 significant digits is rounded away from zero (no pod spec comes near that).
// Arithmetic and comparison are exact within that precision; int64 reads saturate.
//
// Printing follows Quantity.String(): a parsed text that is already canonical is kept verbatim
// (so "+2", "010" and "1E3" print as written, as upstream's cached string does); anything else
// prints canonically: "1.5" -> "1500m", "2000" -> "2k", "1536Mi", "0.5Gi" -> "512Mi",
// "1.5e3" -> "1500", "1000E" -> "1e21".
//
//   ASSIGN_OR_RETURN(Quantity cpu, Quantity::Parse("1500m"));
//   cpu.Value();      // 2 (rounded up, as Quantity.Value())
//   cpu.ToString();   // "1500m"
//   Quantity::FromJson(json::Value(0.5))->ToString();  // "500m": the Python SDK sends numbers
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/json/json.h"
#include "common/status/status.h"

namespace trainer::quantity {

class Quantity {
 public:
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  Quantity() = default;  // zero
  static Quantity FromInt(int64_t value, Format format = Format::kDecimalSI);
  static Quantity FromMilli(int64_t milli);

  // Parses like resource.ParseQuantity, with its error texts (ErrFormatWrong, ErrSuffix,
  // ErrNumeric). Like upstream, a lone sign or "." parses as zero.
  static StatusOr<Quantity> Parse(std::string_view text);
  // Parse without its fast path for plain integers with an SI suffix ("1", "4Gi", "500m"): the
  // reference that path is tested against.
  static StatusOr<Quantity> ParseGeneral(std::string_view text);
  // A JSON string, or a JSON number read as the text Go's encoding/json writes for it
  // (1.0 -> "1", 0.5 -> "500m", 2.5 -> "2500m"), as Quantity.UnmarshalJSON sees it; null is
  // zero and other JSON types fail with ErrFormatWrong, as upstream.
  static StatusOr<Quantity> FromJson(const json::Value& v);

  // Rounded up to an integer (resource.Quantity.Value()); saturates at the int64 range.
  int64_t Value() const;
  // Thousandths, rounded up (MilliValue()).
  int64_t MilliValue() const;
  double AsDouble() const;
  bool IsZero() const { return mantissa_ == 0; }
  int Sign() const { return (mantissa_ > 0) - (mantissa_ < 0); }
  Format format() const { return format_; }

  // Quantity.String(): the parsed text if it was canonical, else the canonical text
  // ("500m", "4Gi", "2k", "1e3", "0").
  std::string ToString() const;
  json::Value ToJson() const { return json::Value(ToString()); }

  // Sum in the left operand's format (the right one's when the left is zero), as Quantity.Add.
  // Results of arithmetic always print canonically.
  Quantity operator+(const Quantity& other) const;
  Quantity operator-(const Quantity& other) const;
  Quantity operator*(int64_t factor) const;
  Quantity& operator+=(const Quantity& other) { return *this = *this + other; }

  std::strong_ordering operator<=>(const Quantity& other) const;
  bool operator==(const Quantity& other) const { return (*this <=> other) == 0; }

 private:
  Quantity(__int128 mantissa, int64_t exponent, Format format);
  // The text as Parse reads it when it is [1-9][0-9]{0,17} and one suffix of the SI tables, and
  // a binary value fits int64; nullopt for anything else.
  static std::optional<Quantity> ParsePlain(std::string_view text);

  // value = mantissa_ * 10^exponent_; mantissa_ has no trailing zeros and at most 30 digits
  // (0 has exponent 0); exponent_ >= -9.
  __int128 mantissa_ = 0;
  int32_t exponent_ = 0;
  Format format_ = Format::kDecimalSI;
  // The parsed text when upstream would keep it (its Quantity.s): printed verbatim.
  std::string text_;
};

// k8s.io/apimachinery/pkg/util/intstr.IntOrString.
struct IntOrString {
  bool is_int = true;
  int64_t int_value = 0;
  std::string str;

  static IntOrString FromInt(int64_t v) { return IntOrString{true, v, ""}; }
  static IntOrString FromString(std::string s) { return IntOrString{false, 0, std::move(s)}; }
  // A JSON integer (or integral number) in int32 range, or a string; anything else is an error
  // (upstream's IntVal is an int32).
  static StatusOr<IntOrString> FromJson(const json::Value& v);
  json::Value ToJson() const;
  std::string ToString() const { return is_int ? std::to_string(int_value) : str; }
  bool operator==(const IntOrString&) const = default;
};

}  // namespace trainer::quantity
