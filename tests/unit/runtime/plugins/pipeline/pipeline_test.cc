// The framework/scheduler plugins through the whole pipeline (core::Runtimes over the registry),
// by the upstream case names of pkg/runtime/framework/core/framework_test.go and
// pkg/runtime/core/trainingruntime_test.go that exercise MPI, CoScheduling and Volcano.
#include <algorithm>
#include <catch2/catch.hpp>

#include "runtime/core/registry.h"
#include "runtime/framework/map_reader.h"
#include "runtime/framework/testing/testing.h"
#include "runtime/plugins/mpi/mpi.h"

namespace trainer::plugins {
namespace {

using testing::EnvValue;

std::vector<PluginFactory> RegistryWithFixedKey() {
  std::vector<PluginFactory> list = Registry();
  for (PluginFactory& f : list) {
    if (f.name == MPI::kName) {
      f.make = [](const framework::PluginContext& ctx) {
        return MPI::NewWithKeyGenerator(ctx, [] {
          return StatusOr<mpi::SSHKeyPair>(mpi::SSHKeyPair{"PRIV", "PUB\n"});
        });
      };
    }
  }
  return list;
}

struct Env {
  framework::MapReader reader;
  std::unique_ptr<core::Runtimes> runtimes;

  explicit Env(std::string_view runtime_yaml) {
    REQUIRE(reader.Add(testing::Yaml(runtime_yaml)).ok());
    auto r = core::Runtimes::New(
        reader, [] { return std::string("2026-01-01T00:00:00Z"); }, RegistryWithFixedKey());
    REQUIRE(r.ok());
    runtimes = std::move(r).value();
  }
  std::vector<json::Value> NewObjects(std::string_view job_yaml) {
    api::TrainJob job = testing::TrainJob(job_yaml);
    auto objs = runtimes->ForTrainJob(job)->NewObjects(job);
    REQUIRE(objs.ok());
    return std::move(objs).value();
  }
};

const json::Value* FindKind(const std::vector<json::Value>& objs, std::string_view kind,
                            std::string_view api_version = "") {
  for (const json::Value& o : objs) {
    if (framework::StringField(o, "kind") == kind &&
        (api_version.empty() || framework::StringField(o, "apiVersion") == api_version)) {
      return &o;
    }
  }
  return nullptr;
}

const json::Value& RJob(const json::Value& jobset, size_t i) {
  return jobset.Find("spec")->Find("replicatedJobs")->at(i);
}
const json::Value& PodSpec(const json::Value& jobset, size_t i) {
  return *framework::PodSpecOf(RJob(jobset, i));
}

constexpr char kPlainRuntime[] = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: test-runtime, namespace: default}
spec:
  mlPolicy: {numNodes: 1}
  podGroupPolicy: {%s}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                containers: [{name: node, image: img, resources: {requests: {cpu: 1, memory: 4Gi}}}]
)";

std::string WithPolicy(std::string_view policy) {
  std::string s = kPlainRuntime;
  s.replace(s.find("%s"), 2, policy);
  return s;
}

constexpr char kJob[] = R"(
metadata: {name: test-job, namespace: default, uid: uid}
spec:
  runtimeRef: {name: test-runtime, kind: TrainingRuntime}
  trainer: {numNodes: 100}
)";

TEST_CASE("TestRunEnforcePodGroupPolicyPlugins", "[pipeline]") {
  SECTION("coscheduling plugin is applied to runtime.Info") {
    Env env(WithPolicy("coscheduling: {scheduleTimeoutSeconds: 100}"));
    std::vector<json::Value> objs = env.NewObjects(kJob);
    const json::Value* js = FindKind(objs, "JobSet");
    REQUIRE(js != nullptr);
    CHECK(testing::Canon(
              *RJob(*js, 0).Find("template")->Find("spec")->Find("template")->Find("metadata")) ==
          R"({"labels":{"scheduling.x-k8s.io/pod-group":"test-job"}})");
  }
  SECTION("volcano plugin is applied to runtime.Info") {
    Env env(WithPolicy("volcano: {}"));
    std::vector<json::Value> objs = env.NewObjects(kJob);
    const json::Value* js = FindKind(objs, "JobSet");
    REQUIRE(js != nullptr);
    CHECK(testing::Canon(
              *RJob(*js, 0).Find("template")->Find("spec")->Find("template")->Find("metadata")) ==
          R"({"annotations":{"scheduling.k8s.io/group-name":"test-job"}})");
  }
}

TEST_CASE("TestRunComponentBuilderPlugins", "[pipeline]") {
  SECTION(
      "succeeded to build PodGroup and JobSet with NumNodes from TrainJob with coscheduling "
      "plugin") {
    Env env(WithPolicy("coscheduling: {scheduleTimeoutSeconds: 300}"));
    std::vector<json::Value> objs = env.NewObjects(kJob);
    const json::Value* pg = FindKind(objs, "PodGroup", "scheduling.x-k8s.io/v1alpha1");
    REQUIRE(pg != nullptr);
    CHECK(
        testing::Canon(*pg->Find("spec")) ==
        R"({"minMember":100,"minResources":{"cpu":"100","memory":"400Gi"},"scheduleTimeoutSeconds":300})");
    const json::Value* js = FindKind(objs, "JobSet");
    REQUIRE(js != nullptr);
    CHECK(RJob(*js, 0).Find("template")->Find("spec")->Find("parallelism")->AsInt() == 100);
    // Applied first, so pods never exist without their group.
    CHECK(std::find_if(objs.begin(), objs.end(), [](const json::Value& o) {
            return framework::StringField(o, "kind") == "PodGroup";
          }) < std::find_if(objs.begin(), objs.end(), [](const json::Value& o) {
            return framework::StringField(o, "kind") == "JobSet";
          }));
  }
  SECTION(
      "succeeded to build PodGroup and JobSet with NumNodes from TrainJob with volcano plugin") {
    Env env(WithPolicy("volcano: {}"));
    std::vector<json::Value> objs = env.NewObjects(kJob);
    const json::Value* pg = FindKind(objs, "PodGroup", "scheduling.volcano.sh/v1beta1");
    REQUIRE(pg != nullptr);
    CHECK(testing::Canon(*pg->Find("spec")) ==
          R"({"minMember":100,"minResources":{"cpu":"100","memory":"400Gi"}})");
  }
  SECTION(
      "succeeded to build JobSet with container resources applied both to Launcher and Node "
      "replicatedJob") {
    Env env(R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: test-runtime, namespace: default}
spec:
  mlPolicy: {numNodes: 1, mpi: {numProcPerNode: 1, mpiImplementation: OpenMPI, sshAuthMountPath: /root/.ssh, runLauncherAsNode: true}}
  template:
    spec:
      replicatedJobs:
      - name: launcher
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {template: {spec: {containers: [{name: node, image: img}]}}}
      - name: node
        template:
          spec: {template: {spec: {containers: [{name: node, image: img}]}}}
)");
    std::vector<json::Value> objs = env.NewObjects(R"(
metadata: {name: test-job, namespace: default, uid: uid}
spec:
  runtimeRef: {name: test-runtime, kind: TrainingRuntime}
  trainer: {numNodes: 3, resourcesPerNode: {limits: {nvidia.com/gpu: 2}}}
)");
    const json::Value* js = FindKind(objs, "JobSet");
    REQUIRE(js != nullptr);
    for (size_t i : {0, 1}) {
      const json::Value& c = PodSpec(*js, i).Find("containers")->at(0);
      CHECK(testing::Canon(*c.Find("resources")) == R"({"limits":{"nvidia.com/gpu":"2"}})");
    }
    // runLauncherAsNode: the launcher is one of the 3 nodes; 2 GPUs -> 2 slots.
    CHECK(RJob(*js, 1).Find("template")->Find("spec")->Find("parallelism")->AsInt() == 2);
    const json::Value* cm = FindKind(objs, "ConfigMap");
    REQUIRE(cm != nullptr);
    const json::Value* hostfile = nullptr;
    for (const json::Value& o : objs) {
      if (framework::StringField(*o.Find("metadata"), "name") == "test-job-mpi-hostfile") {
        hostfile = o.Find("data")->Find("hostfile");
      }
    }
    REQUIRE(hostfile != nullptr);
    CHECK(hostfile->AsString() ==
          "test-job-launcher-0-0.test-job slots=2\ntest-job-node-0-0.test-job slots=2\n"
          "test-job-node-0-1.test-job slots=2\n");
    CHECK(EnvValue(*PodSpec(*js, 0).Find("containers")->at(0).Find("env"),
                   "OMPI_MCA_orte_set_default_slots") == "2");
  }
}

TEST_CASE("TestWatchExtensionPlugins", "[pipeline]") {
  SECTION("coscheduling, jobset, and mpi are performed") {
    Env env(WithPolicy("coscheduling: {}"));
    std::vector<framework::Watch> w = env.runtimes->Watches();
    auto has = [&w](std::string_view api_version, std::string_view kind) {
      return std::any_of(w.begin(), w.end(), [&](const framework::Watch& x) {
        return x.gvk.ApiVersion() == api_version && x.gvk.kind == kind && x.owned_by_trainjob;
      });
    };
    CHECK(has("scheduling.x-k8s.io/v1alpha1", "PodGroup"));
    CHECK(has("scheduling.volcano.sh/v1beta1", "PodGroup"));
    CHECK(has("jobset.x-k8s.io/v1alpha2", "JobSet"));
    CHECK(has("v1", "ConfigMap"));
    CHECK(has("v1", "Secret"));
  }
}

TEST_CASE("TestTrainingRuntimeNewObjects", "[pipeline]") {
  SECTION("succeeded to build JobSet with OpenMPI values from the TrainJob") {
    Env env(R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: test-runtime, namespace: default}
spec:
  mlPolicy: {numNodes: 1, mpi: {numProcPerNode: 8, mpiImplementation: OpenMPI, sshAuthMountPath: /root/.ssh}}
  template:
    spec:
      replicatedJobs:
      - name: launcher
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {template: {spec: {containers: [{name: node, image: img}]}}}
      - name: node
        template:
          spec: {template: {spec: {containers: [{name: node, image: img}]}}}
)");
    std::vector<json::Value> objs = env.NewObjects(R"(
metadata: {name: test-job, namespace: default, uid: uid}
spec:
  runtimeRef: {name: test-runtime, kind: TrainingRuntime}
  trainer: {numNodes: 2}
)");
    std::vector<std::string> kinds;
    for (const json::Value& o : objs) {
      kinds.push_back(framework::StringField(o, "kind") + "/" +
                      framework::StringField(*o.Find("metadata"), "name"));
    }
    CHECK(kinds == std::vector<std::string>{"ConfigMap/test-job-runtime-snapshot",
                                            "Secret/test-job-mpi-ssh-auth",
                                            "ConfigMap/test-job-mpi-hostfile", "JobSet/test-job"});
    CHECK(testing::Canon(*objs[1].Find("data")) ==
          R"({"ssh-privatekey":"UFJJVg==","ssh-publickey":"UFVCCg=="})");
    CHECK(objs[2].Find("data")->Find("hostfile")->AsString() ==
          "test-job-node-0-0.test-job slots=8\ntest-job-node-0-1.test-job slots=8\n");
  }
}

}  // namespace
}  // namespace trainer::plugins
