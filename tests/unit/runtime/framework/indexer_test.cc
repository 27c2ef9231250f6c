// The TrainJob and runtime cache indexes: which runtime a TrainJob references (CRD defaults
// applied, TrainingRuntimes namespaced) and the runtimeClassNames of a runtime.
#include "runtime/framework/indexer.h"

#include <catch2/catch.hpp>

namespace trainer::framework {
namespace {

json::Value Parse(std::string_view text) {
  StatusOr<json::Value> v = json::Parse(text);
  REQUIRE(v.ok());
  return std::move(*v);
}

TEST_CASE("IndexTrainJobTrainingRuntime and IndexTrainJobClusterTrainingRuntime") {
  struct Case {
    std::string name, ref;
    std::vector<std::string> tr, ctr;
  };
  std::vector<Case> cases = {
      {"TrainingRuntime", R"({"name":"rt","kind":"TrainingRuntime"})", {"ns/rt"}, {}},
      {"ClusterTrainingRuntime", R"({"name":"ctr","kind":"ClusterTrainingRuntime"})", {}, {"ctr"}},
      {"kind defaults to ClusterTrainingRuntime", R"({"name":"ctr"})", {}, {"ctr"}},
      {"another apiGroup",
       R"({"name":"rt","apiGroup":"example.com","kind":"TrainingRuntime"})",
       {},
       {}},
      {"no name", R"({"kind":"TrainingRuntime"})", {}, {}},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      json::Value tj = Parse(R"({"metadata":{"namespace":"ns","name":"tj"},"spec":{"runtimeRef":)" +
                             c.ref + "}}");
      CHECK(TrainJobTrainingRuntimeRef(tj) == c.tr);
      CHECK(TrainJobClusterTrainingRuntimeRef(tj) == c.ctr);
    }
  }
  CHECK(TrainJobTrainingRuntimeRef(Parse(R"({"spec":{}})")).empty());
}

TEST_CASE("runtimeClassNames of a runtime's pod templates, once each") {
  json::Value rt = Parse(R"({"spec":{"template":{"spec":{"replicatedJobs":[
      {"name":"a","template":{"spec":{"template":{"spec":{"runtimeClassName":"gvisor"}}}}},
      {"name":"b","template":{"spec":{"template":{"spec":{}}}}},
      {"name":"c","template":{"spec":{"template":{"spec":{"runtimeClassName":"gvisor"}}}}},
      {"name":"d","template":{"spec":{"template":{"spec":{"runtimeClassName":"kata"}}}}}]}}}})");
  CHECK(RuntimeClassNames(rt) == std::vector<std::string>{"gvisor", "kata"});
  CHECK(RuntimeClassNames(Parse(R"({"spec":{}})")).empty());
}

}  // namespace
}  // namespace trainer::framework
