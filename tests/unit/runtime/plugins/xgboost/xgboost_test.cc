// XGBoost plugin (upstream plugins/xgboost/xgboost_test.go): TestXGBoostValidate and
// TestXGBoostEnforceMLPolicy by upstream case name.
#include "runtime/plugins/xgboost/xgboost.h"

#include <catch2/catch.hpp>

#include "runtime/framework/testing/testing.h"

namespace trainer::plugins {
namespace {

using testing::EnvNames;
using testing::EnvValue;
using testing::InfoBuilder;
using testing::PodSet;

framework::Info XGBInfo(int32_t count = 1, std::string_view runtime_gpu = "") {
  InfoBuilder b;
  b.MLPolicy("{xgboost: {}}")
      .PodSet(PodSet("node").Ancestor("trainer").Count(count).Containers({"node"}));
  if (!runtime_gpu.empty()) {
    b.JobSetSpec(R"(
replicatedJobs:
- name: node
  template:
    metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
    spec: {template: {spec: {containers: [{name: node, resources: {requests: {example.com/gpu: )" +
                 std::string(runtime_gpu) + "}}}]}}}\n");
  }
  return b.Build();
}

api::TrainJob Job(std::string_view name, std::string_view trainer) {
  std::string yaml = "metadata: {name: " + std::string(name) +
                     ", namespace: default}\nspec:\n  runtimeRef: {name: xgboost-distributed}\n";
  if (!trainer.empty()) {
    yaml += "  trainer: " + std::string(trainer) + "\n";
  }
  return testing::TrainJob(yaml);
}

const framework::Container& Node(const framework::Info& info) {
  return info.template_spec.pod_sets[0].containers[0];
}

void CheckDmlcEnv(const framework::Info& info, std::string_view job, std::string_view workers) {
  const framework::Container& c = Node(info);
  CHECK(EnvNames(c.env) == "DMLC_TRACKER_URI,DMLC_TRACKER_PORT,DMLC_TASK_ID,DMLC_NUM_WORKER");
  CHECK(EnvValue(c.env, "DMLC_TRACKER_URI") == std::string(job) + "-node-0-0." + std::string(job));
  CHECK(EnvValue(c.env, "DMLC_TRACKER_PORT") == "29500");
  CHECK(EnvValue(c.env, "DMLC_NUM_WORKER") == workers);
  const json::Value* id = json::FindByKey(c.env, "name", "DMLC_TASK_ID");
  REQUIRE(id != nullptr);
  CHECK(
      testing::Canon(*id) ==
      R"({"name":"DMLC_TASK_ID","valueFrom":{"fieldRef":{"fieldPath":"metadata.annotations['batch.kubernetes.io/job-completion-index']"}}})");
  CHECK(testing::Canon(c.ports) == R"([{"containerPort":29500}])");
}

TEST_CASE("TestXGBoostValidate", "[xgboost]") {
  XGBoost p;
  framework::Info info = XGBInfo();
  SECTION("no error when runtimeInfo is nil") {
    CHECK(p.Validate(nullptr, nullptr, Job("test-job", "{numNodes: 1}")).ok());
  }
  SECTION("no error when runtime is not XGBoost (e.g. Torch)") {
    framework::Info torch = InfoBuilder().MLPolicy("{torch: {}}").Build();
    CHECK(p.Validate(&torch, nullptr,
                     Job("test-job", "{numNodes: 1, env: [{name: DMLC_TRACKER_URI, value: x}]}"))
              .ok());
  }
  SECTION("no error when trainer is nil") {
    CHECK(p.Validate(&info, nullptr, Job("test-job", "")).ok());
  }
  SECTION("no error when env does not contain reserved names") {
    CHECK(p.Validate(&info, nullptr,
                     Job("test-job", "{numNodes: 1, env: [{name: MY_CUSTOM_VAR, value: v}]}"))
              .ok());
  }
  SECTION("error when using reserved DMLC_TRACKER_URI env") {
    field::ValidationResult r = p.Validate(
        &info, nullptr,
        Job("test-job", "{numNodes: 1, env: [{name: DMLC_TRACKER_URI, value: custom-tracker}]}"));
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].ToString() ==
          "spec.trainer.env[0]: Forbidden: DMLC_TRACKER_URI is reserved for the XGBoost runtime");
  }
  SECTION("error when using reserved DMLC_NUM_WORKER env") {
    field::ValidationResult r =
        p.Validate(&info, nullptr,
                   Job("test-job", "{numNodes: 1, env: [{name: DMLC_NUM_WORKER, value: '10'}]}"));
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].ToString() ==
          "spec.trainer.env[0]: Forbidden: DMLC_NUM_WORKER is reserved for the XGBoost runtime");
  }
  SECTION("multiple errors when using multiple reserved envs") {
    field::ValidationResult r =
        p.Validate(&info, nullptr,
                   Job("test-job",
                       "{numNodes: 1, env: [{name: DMLC_TRACKER_URI, value: t}, {name: OK, value: "
                       "v}, {name: DMLC_TASK_ID, value: '0'}, {name: DMLC_TRACKER_PORT, value: "
                       "'1'}]}"));
    REQUIRE(r.errors.size() == 3);
    CHECK(r.errors[0].field == "spec.trainer.env[0]");
    CHECK(r.errors[1].ToString() ==
          "spec.trainer.env[2]: Forbidden: DMLC_TASK_ID is reserved for the XGBoost runtime");
    CHECK(r.errors[2].field == "spec.trainer.env[3]");
  }
}

TEST_CASE("TestXGBoostEnforceMLPolicy", "[xgboost]") {
  XGBoost p;
  SECTION("no action when info is nil") {
    api::TrainJob job = Job("test-job", "{numNodes: 2}");
    CHECK(p.EnforceMLPolicy(nullptr, job).ok());
  }
  SECTION("no action when mlPolicySource is nil") {
    framework::Info info =
        InfoBuilder().PodSet(PodSet("node").Ancestor("trainer").Containers({"node"})).Build();
    api::TrainJob job = Job("test-job", "{numNodes: 2}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CHECK(Node(info).env.empty());
    CHECK(*info.template_spec.pod_sets[0].count == 1);
  }
  SECTION("no action when mlPolicySource XGBoost is null") {
    framework::Info info = InfoBuilder()
                               .MLPolicy("{numNodes: 1}")
                               .PodSet(PodSet("node").Ancestor("trainer").Containers({"node"}))
                               .Build();
    api::TrainJob job = Job("test-job", "{numNodes: 2}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CHECK(Node(info).env.empty());
  }
  SECTION("no env injection when trainJob.Spec.Trainer is nil") {
    framework::Info info = XGBInfo();
    api::TrainJob job = Job("test-job", "");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CHECK(*info.template_spec.pod_sets[0].count == 1);
    CHECK(Node(info).env.empty());
    CHECK(Node(info).ports.empty());
  }
  SECTION("single node XGBoost training (CPU)") {
    framework::Info info = XGBInfo();
    api::TrainJob job = Job("test-job", "{numNodes: 1}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CheckDmlcEnv(info, "test-job", "1");
  }
  SECTION("multi-node XGBoost training (CPU)") {
    framework::Info info = XGBInfo();
    api::TrainJob job = Job("multi-node-job", "{numNodes: 4}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CHECK(*info.template_spec.pod_sets[0].count == 4);
    CheckDmlcEnv(info, "multi-node-job", "4");
  }
  SECTION("XGBoost training with GPU resources") {
    framework::Info info = XGBInfo();
    api::TrainJob job = Job("gpu-job",
                            "{numNodes: 2, resourcesPerNode: {requests: {cpu: 8, memory: 32Gi, "
                            "example.com/gpu: 4}}}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CheckDmlcEnv(info, "gpu-job", "8");
  }
  SECTION("trainJob numNodes is respected") {
    framework::Info info = XGBInfo();
    api::TrainJob job = Job("trainJob", "{numNodes: 3}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CHECK(*info.template_spec.pod_sets[0].count == 3);
    CheckDmlcEnv(info, "trainJob", "3");
  }
  SECTION("resources not set - defaults to 1 worker per node") {
    framework::Info info = XGBInfo();
    api::TrainJob job = Job("no-res-job", "{numNodes: 2}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CheckDmlcEnv(info, "no-res-job", "2");
  }
  SECTION("resources set in Runtime only") {
    framework::Info info = XGBInfo(1, "2");
    api::TrainJob job = Job("runtime-res-job", "{numNodes: 3}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CheckDmlcEnv(info, "runtime-res-job", "6");
  }
  SECTION("resources set in TrainJob only") {
    framework::Info info = XGBInfo();
    api::TrainJob job =
        Job("trainjob-res", "{numNodes: 2, resourcesPerNode: {requests: {example.com/gpu: 4}}}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CheckDmlcEnv(info, "trainjob-res", "8");
  }
  SECTION("resources set in both Runtime and TrainJob") {
    framework::Info info = XGBInfo(1, "1");
    api::TrainJob job =
        Job("both-res-job", "{numNodes: 2, resourcesPerNode: {requests: {example.com/gpu: 3}}}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CheckDmlcEnv(info, "both-res-job", "6");
  }
}

}  // namespace
}  // namespace trainer::plugins
