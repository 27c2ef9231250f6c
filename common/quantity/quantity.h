// Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource.Quantity) and
// IntOrString, with the same text forms, canonical printing and error messages.
//
// A Quantity is an exact decimal: an int64 mantissa times a power of ten, plus the format it was
// written in (DecimalSI "500m", BinarySI "4Gi", DecimalExponent "1e3"), which decides how it is
// printed. Arithmetic and comparison are exact for every value a pod spec can hold.
//
//   ASSIGN_OR_RETURN(Quantity cpu, Quantity::Parse("1500m"));
//   cpu.Value();      // 2 (rounded up, as Quantity.Value())
//   cpu.ToString();   // "1500m"
//   Quantity::FromJson(json::Value(0.5))->ToString();  // "500m": the Python SDK sends numbers
#pragma once

#include <compare>
#include <cstdint>
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

  // Parses the apiserver's syntax; errors carry apimachinery's messages.
  static StatusOr<Quantity> Parse(std::string_view text);
  // A JSON string, or a JSON number read as its decimal text (1.0 -> "1", 0.5 -> "500m").
  static StatusOr<Quantity> FromJson(const json::Value& v);

  // Rounded up to an integer (resource.Quantity.Value()); saturates at the int64 range.
  int64_t Value() const;
  // Thousandths, rounded up (MilliValue()).
  int64_t MilliValue() const;
  double AsDouble() const;
  bool IsZero() const { return mantissa_ == 0; }
  int Sign() const { return (mantissa_ > 0) - (mantissa_ < 0); }
  Format format() const { return format_; }

  // Canonical text: "500m", "4Gi", "2k", "1e3", "0".
  std::string ToString() const;
  json::Value ToJson() const { return json::Value(ToString()); }

  // Sum in the left operand's format (the right one's when the left is zero), as Quantity.Add.
  Quantity operator+(const Quantity& other) const;
  Quantity operator-(const Quantity& other) const;
  Quantity operator*(int64_t factor) const;
  Quantity& operator+=(const Quantity& other) { return *this = *this + other; }

  std::strong_ordering operator<=>(const Quantity& other) const;
  bool operator==(const Quantity& other) const { return (*this <=> other) == 0; }

 private:
  Quantity(__int128 mantissa, int32_t exponent, Format format);
  void Normalize();

  // value = mantissa_ * 10^exponent_, mantissa_ without trailing zeros (or 0 with exponent 0).
  int64_t mantissa_ = 0;
  int32_t exponent_ = 0;
  Format format_ = Format::kDecimalSI;
};

// k8s.io/apimachinery/pkg/util/intstr.IntOrString.
struct IntOrString {
  bool is_int = true;
  int64_t int_value = 0;
  std::string str;

  static IntOrString FromInt(int64_t v) { return IntOrString{true, v, ""}; }
  static IntOrString FromString(std::string s) { return IntOrString{false, 0, std::move(s)}; }
  // A JSON integer (or integral number) or string; anything else is an error.
  static StatusOr<IntOrString> FromJson(const json::Value& v);
  json::Value ToJson() const;
  std::string ToString() const { return is_int ? std::to_string(int_value) : str; }
  bool operator==(const IntOrString&) const = default;
};

}  // namespace trainer::quantity
