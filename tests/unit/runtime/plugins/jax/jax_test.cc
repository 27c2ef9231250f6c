// JAX plugin (upstream plugins/jax/jax_test.go): TestJAXEnforceMLPolicy by upstream case name.
#include "runtime/plugins/jax/jax.h"

#include <catch2/catch.hpp>

#include "runtime/framework/testing/testing.h"

namespace trainer::plugins {
namespace {

using testing::EnvNames;
using testing::EnvValue;
using testing::InfoBuilder;
using testing::PodSet;

framework::Info JaxInfo(int32_t count = 1) {
  return InfoBuilder()
      .MLPolicy("{jax: {}}")
      .PodSet(PodSet("node").Ancestor("trainer").Count(count).Containers({"node"}))
      .Build();
}

api::TrainJob Job(std::string_view name, std::string_view trainer) {
  std::string yaml = "metadata: {name: " + std::string(name) +
                     ", namespace: default}\nspec:\n  runtimeRef: {name: jax-distributed}\n";
  if (!trainer.empty()) {
    yaml += "  trainer: " + std::string(trainer) + "\n";
  }
  return testing::TrainJob(yaml);
}

const framework::Container& Node(const framework::Info& info) {
  return info.template_spec.pod_sets[0].containers[0];
}

// The env and port upstream expects for `job` with `n` processes.
void CheckJaxEnv(const framework::Info& info, std::string_view job, std::string_view n) {
  const framework::Container& c = Node(info);
  CHECK(EnvNames(c.env) == "JAX_NUM_PROCESSES,JAX_PROCESS_ID,JAX_COORDINATOR_ADDRESS");
  CHECK(EnvValue(c.env, "JAX_NUM_PROCESSES") == n);
  CHECK(EnvValue(c.env, "JAX_COORDINATOR_ADDRESS") ==
        std::string(job) + "-node-0-0." + std::string(job) + ":29500");
  const json::Value* id = json::FindByKey(c.env, "name", "JAX_PROCESS_ID");
  REQUIRE(id != nullptr);
  CHECK(
      testing::Canon(*id) ==
      R"({"name":"JAX_PROCESS_ID","valueFrom":{"fieldRef":{"fieldPath":"metadata.annotations['batch.kubernetes.io/job-completion-index']"}}})");
  CHECK(testing::Canon(c.ports) == R"([{"containerPort":29500}])");
}

TEST_CASE("TestJAXEnforceMLPolicy", "[jax]") {
  JAX p;
  SECTION("no action when info is nil") {
    api::TrainJob job = Job("test-job", "{numNodes: 2}");
    CHECK(p.EnforceMLPolicy(nullptr, job).ok());
  }
  SECTION("no action when mlPolicySource is nil") {
    framework::Info info = InfoBuilder().Label("key", "value").Build();
    api::TrainJob job = Job("test-job", "{numNodes: 2}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CHECK(info.template_spec.pod_sets.empty());
    CHECK(info.labels.at("key") == "value");
  }
  SECTION("no action when mlPolicySource JAX is null") {
    framework::Info info = InfoBuilder()
                               .MLPolicy("{numNodes: 1}")
                               .PodSet(PodSet("node").Ancestor("trainer").Containers({"node"}))
                               .Build();
    api::TrainJob job = Job("test-job", "{numNodes: 2}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CHECK(*info.template_spec.pod_sets[0].count == 1);
    CHECK(Node(info).env.empty());
  }
  SECTION("no panic when JAX policy is set but trainer PodSet is absent") {
    framework::Info info = InfoBuilder().MLPolicy("{jax: {}}").Build();
    api::TrainJob job = Job("test-job", "{numNodes: 2}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CHECK(info.template_spec.pod_sets.empty());
  }
  SECTION("single node JAX training") {
    framework::Info info = JaxInfo();
    api::TrainJob job = Job("test-job", "{numNodes: 1}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CHECK(*info.template_spec.pod_sets[0].count == 1);
    CheckJaxEnv(info, "test-job", "1");
  }
  SECTION("multi-node JAX training") {
    framework::Info info = JaxInfo(2);
    api::TrainJob job = Job("multi-node-job", "{numNodes: 4}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CHECK(*info.template_spec.pod_sets[0].count == 4);
    CheckJaxEnv(info, "multi-node-job", "4");
  }
  SECTION("trainJob numNodes is respected") {
    framework::Info info = JaxInfo();
    api::TrainJob job = Job("trainJob", "{numNodes: 3}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CHECK(*info.template_spec.pod_sets[0].count == 3);
    CheckJaxEnv(info, "trainJob", "3");
  }
  SECTION("JAX training with GPU resources") {
    framework::Info info = JaxInfo();
    info.labels["app"] = "jax-training";
    api::TrainJob job = Job("gpu-job",
                            "{numNodes: 2, image: 'jax/jax:latest', resourcesPerNode: {requests: "
                            "{cpu: 8, memory: 32Gi, nvidia.com/gpu: 4}}}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CHECK(*info.template_spec.pod_sets[0].count == 2);
    CheckJaxEnv(info, "gpu-job", "2");
    CHECK(info.labels.at("app") == "jax-training");
  }
  SECTION("no env without a trainer section") {
    framework::Info info = JaxInfo();
    api::TrainJob job = Job("test-job", "");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CHECK(Node(info).env.empty());
    CHECK(Node(info).ports.empty());
  }
}

TEST_CASE("TestJAXValidate", "[jax]") {
  JAX p;
  framework::Info info = JaxInfo();
  api::TrainJob job = Job("test-job", "{env: [{name: JAX_NUM_PROCESSES, value: '9'}]}");
  // Upstream JAX reserves nothing (plugins/jax/jax.go Validate is empty): users may override
  // JAX_*, since the TrainJob's env is applied after the plugin's.
  CHECK(p.Validate(&info, nullptr, job).ok());
}

}  // namespace
}  // namespace trainer::plugins
