// PlainML plugin (upstream plugins/plainml/plainml_test.go, TestPlainML).
#include "runtime/plugins/plainml/plainml.h"

#include <catch2/catch.hpp>

#include "runtime/framework/testing/testing.h"

namespace trainer::plugins {
namespace {

using testing::EnvNames;
using testing::EnvValue;
using testing::InfoBuilder;
using testing::PodSet;

framework::Info NodeInfo(std::string_view ml_policy) {
  InfoBuilder b;
  if (!ml_policy.empty()) {
    b.MLPolicy(ml_policy);
  }
  return b
      .PodSet(PodSet("node").Ancestor("trainer").Count(1).Container(
          "{name: node, env: [{name: TEMPLATE, value: t}]}"))
      .Build();
}

TEST_CASE("TestPlainML", "[plainml]") {
  PlainML p;
  api::TrainJob job = testing::TrainJob(R"(
metadata: {name: test-job, namespace: default}
spec:
  runtimeRef: {name: rt}
  trainer:
    numNodes: 100
    env: [{name: CONFIG, value: a}, {name: TEMPLATE, value: override}]
)");
  SECTION("no action when info is null") { CHECK(p.EnforceMLPolicy(nullptr, job).ok()); }
  for (std::string_view policy : {"{torch: {}}", "{mpi: {}}", "{jax: {}}"}) {
    DYNAMIC_SECTION("no action when mlPolicySource " << policy << " is not null") {
      framework::Info info = NodeInfo(policy);
      REQUIRE(p.EnforceMLPolicy(&info, job).ok());
      CHECK(*info.template_spec.pod_sets[0].count == 1);
      CHECK(EnvNames(info.template_spec.pod_sets[0].containers[0].env) == "TEMPLATE");
    }
  }
  SECTION("trainJob trainer numNodes are respected rather than runtimeInfo") {
    framework::Info info = NodeInfo("{numNodes: 2}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CHECK(*info.template_spec.pod_sets[0].count == 100);
  }
  SECTION("trainJob trainer env are respected rather than runtimeInfo") {
    framework::Info info = NodeInfo("");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    const json::Value& env = info.template_spec.pod_sets[0].containers[0].env;
    CHECK(EnvNames(env) == "TEMPLATE,CONFIG");
    CHECK(EnvValue(env, "TEMPLATE") == "override");
  }
  SECTION("xgboost and flux policies still use PlainML") {
    framework::Info info = NodeInfo("{xgboost: {}}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CHECK(*info.template_spec.pod_sets[0].count == 100);
  }
}

}  // namespace
}  // namespace trainer::plugins
