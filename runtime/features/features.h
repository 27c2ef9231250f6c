// Feature gates of trainer-cpp (upstream pkg/features/features.go, v2.3.0), parsed as
// k8s.io/component-base/featuregate parses --feature-gates and a Configuration's featureGates.
//
// Gates:
//   TrainJobStatus  alpha, default false: the TrainJobStatus plugin (controller) and the status
//                   server (webhook), KEP-2779.
// Plus component-base's AllAlpha / AllBeta, which set the default of every alpha / beta gate.
//
//   features::FeatureGates gates;
//   RETURN_IF_ERROR(gates.SetFromMap(config.feature_gates));   // the file first
//   RETURN_IF_ERROR(gates.Set(flag_value));                     // "TrainJobStatus=true,..."
//   if (gates.Enabled(features::kTrainJobStatus)) ...
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/status/status.h"

namespace trainer::features {

inline constexpr char kTrainJobStatus[] = "TrainJobStatus";

class FeatureGates {
 public:
  // Every gate at its default.
  FeatureGates() = default;

  // "Name=bool,Name=bool" (strconv.ParseBool values, spaces around names and values ignored).
  // Errors are component-base's: `missing bool value for X`, `invalid value of X=v, err:
  // strconv.ParseBool: parsing "v": invalid syntax`, `unrecognized feature gate: X`.
  Status Set(std::string_view spec);
  Status SetFromMap(const std::map<std::string, bool>& gates);

  bool Enabled(std::string_view gate) const;
  // "TrainJobStatus=true" for the gates set explicitly (for logs).
  std::string String() const;

 private:
  std::map<std::string, bool, std::less<>> explicit_;
};

// Upstream's main: the Configuration file's featureGates first, then the --feature-gates flag
// over them. Errors say which: "featureGates: unrecognized feature gate: X",
// "flag \"--feature-gates\": missing bool value for X".
StatusOr<FeatureGates> FromConfigAndFlag(const std::map<std::string, bool>& file_gates,
                                         std::string_view flag);

}  // namespace trainer::features
