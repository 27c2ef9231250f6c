// Feature gates (features.h).
#include "runtime/features/features.h"

#include <vector>

namespace trainer::features {
namespace {

constexpr char kAllAlpha[] = "AllAlpha";
constexpr char kAllBeta[] = "AllBeta";

enum class Stage { kAlpha, kBeta, kGA };
struct Spec {
  std::string_view name;
  bool default_value;
  Stage stage;
};

// The known gates (upstream defaultFeatureGates).
const std::vector<Spec>& Known() {
  static const std::vector<Spec> known = {
      {kTrainJobStatus, false, Stage::kAlpha},
  };
  return known;
}

bool IsKnown(std::string_view name) {
  if (name == kAllAlpha || name == kAllBeta) return true;
  for (const Spec& s : Known()) {
    if (s.name == name) return true;
  }
  return false;
}

std::string_view Trim(std::string_view s) {
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// strconv.ParseBool.
std::optional<bool> ParseBool(std::string_view v) {
  for (std::string_view t : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (v == t) return true;
  }
  for (std::string_view f : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (v == f) return false;
  }
  return std::nullopt;
}

}  // namespace

Status FeatureGates::Set(std::string_view spec) {
  std::map<std::string, bool> m;
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    std::string key(Trim(item.substr(0, eq)));
    if (eq == std::string_view::npos) {
      return InvalidArgumentError("missing bool value for " + key);
    }
    std::string_view value = Trim(item.substr(eq + 1));
    std::optional<bool> b = ParseBool(value);
    if (!b) {
      return InvalidArgumentError("invalid value of " + key + "=" + std::string(value) +
                                  ", err: strconv.ParseBool: parsing \"" + std::string(value) +
                                  "\": invalid syntax");
    }
    m[key] = *b;
  }
  return SetFromMap(m);
}

Status FeatureGates::SetFromMap(const std::map<std::string, bool>& gates) {
  for (const auto& [name, value] : gates) {
    if (!IsKnown(name)) return InvalidArgumentError("unrecognized feature gate: " + name);
  }
  for (const auto& [name, value] : gates) explicit_[name] = value;
  return OkStatus();
}

bool FeatureGates::Enabled(std::string_view gate) const {
  if (auto it = explicit_.find(gate); it != explicit_.end()) return it->second;
  for (const Spec& s : Known()) {
    if (s.name != gate) continue;
    auto all = explicit_.find(s.stage == Stage::kAlpha ? kAllAlpha : kAllBeta);
    if (s.stage != Stage::kGA && all != explicit_.end()) return all->second;
    return s.default_value;
  }
  return false;
}

std::string FeatureGates::String() const {
  std::string out;
  for (const auto& [name, value] : explicit_) {
    if (!out.empty()) out += ",";
    out += name + "=" + (value ? "true" : "false");
  }
  return out;
}

StatusOr<FeatureGates> FromConfigAndFlag(const std::map<std::string, bool>& file_gates,
                                         std::string_view flag) {
  FeatureGates gates;
  RETURN_IF_ERROR(gates.SetFromMap(file_gates).WithContext("featureGates"));
  RETURN_IF_ERROR(gates.Set(flag).WithContext("flag \"--feature-gates\""));
  return gates;
}

}  // namespace trainer::features
