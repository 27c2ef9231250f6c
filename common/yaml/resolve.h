// Plain-scalar typing as go-yaml v2's resolve.go does it (the YAML 1.1 rules sigs.k8s.io/yaml
// reads manifests with), and the float text go-yaml writes. Used by the parser (what a scalar
// is) and the emitter (whether a string may be written plain). Internal to common/yaml.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace trainer::yaml::internal {

enum class Kind { kNull, kBool, kInt, kUint, kFloat, kString, kMerge };

struct Scalar {
  Kind kind = Kind::kString;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
};

// The type a plain scalar has in YAML 1.1 as go-yaml v2 reads it.
Scalar Resolve(std::string_view in);

// strconv.FormatFloat(d, 'g', -1, 64 or 32): the text go-yaml writes for a float.
std::string FormatGoFloat(double d, bool as_float32);

// "!!int", "!!str" ...: the short tag of a kind, as go-yaml's messages name it.
std::string_view ShortTagName(Kind k);

}  // namespace trainer::yaml::internal
