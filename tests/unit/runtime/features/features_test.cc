// Feature gates: k8s.io/component-base/featuregate's parsing and messages
// (featuregate/feature_gate_test.go TestFeatureGateFlag, for our gates).
#include "runtime/features/features.h"

#include <catch2/catch.hpp>

namespace trainer::features {
namespace {

TEST_CASE("TrainJobStatus is off by default", "[features]") {
  FeatureGates g;
  CHECK_FALSE(g.Enabled(kTrainJobStatus));
  CHECK(g.String().empty());
}

TEST_CASE("Set: the --feature-gates flag", "[features]") {
  struct Case {
    const char* arg;
    bool want;
    const char* error;  // nullptr: accepted
  };
  const Case cases[] = {
      {"", false, nullptr},
      {"TrainJobStatus=true", true, nullptr},
      {"TrainJobStatus=false", false, nullptr},
      {" TrainJobStatus = True ,", true, nullptr},
      {"TrainJobStatus=1", true, nullptr},
      {"TrainJobStatus=T", true, nullptr},
      {"AllAlpha=true", true, nullptr},
      {"AllAlpha=true,TrainJobStatus=false", false, nullptr},
      {"AllBeta=true", false, nullptr},
      {"TrainJobStatus", false, "missing bool value for TrainJobStatus"},
      {"TrainJobStatus=yes", false,
       "invalid value of TrainJobStatus=yes, err: strconv.ParseBool: parsing \"yes\": invalid "
       "syntax"},
      {"Unknown=true", false, "unrecognized feature gate: Unknown"},
      {"trainjobstatus=true", false, "unrecognized feature gate: trainjobstatus"},
  };
  for (const Case& c : cases) {
    INFO(c.arg);
    FeatureGates g;
    Status s = g.Set(c.arg);
    if (c.error != nullptr) {
      CHECK(s.message() == c.error);
      CHECK_FALSE(g.Enabled(kTrainJobStatus));
    } else {
      REQUIRE(s.ok());
      CHECK(g.Enabled(kTrainJobStatus) == c.want);
    }
  }
}

TEST_CASE("SetFromMap then Set: the file first, the flag wins", "[features]") {
  FeatureGates g;
  REQUIRE(g.SetFromMap({{"TrainJobStatus", true}}).ok());
  CHECK(g.Enabled(kTrainJobStatus));
  REQUIRE(g.Set("TrainJobStatus=false").ok());
  CHECK_FALSE(g.Enabled(kTrainJobStatus));
  CHECK(g.String() == "TrainJobStatus=false");
  // An unknown gate changes nothing.
  CHECK(g.SetFromMap({{"Nope", true}, {"TrainJobStatus", true}}).message() ==
        "unrecognized feature gate: Nope");
  CHECK_FALSE(g.Enabled(kTrainJobStatus));
}

}  // namespace
}  // namespace trainer::features
