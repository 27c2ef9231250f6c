// Framework phase runners and Info helpers (upstream framework/core/framework_test.go and
// pkg/runtime/runtime_test.go), by upstream case name.
#include "runtime/framework/framework.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "runtime/api/kinds.h"
#include "runtime/framework/apply.h"
#include "runtime/framework/map_reader.h"
#include "runtime/framework/testing/testing.h"
#include "runtime/framework/trainjob.h"
#include "runtime/framework/validation.h"
#include "runtime/plugins/registry.h"

namespace trainer::framework {
namespace {

using testing::InfoBuilder;
using testing::PodSet;

// A plugin reporting status, to test the one-status-plugin rule.
class FakeStatus final : public Plugin, public TrainJobStatusPlugin {
 public:
  std::string_view Name() const override { return "FakeStatus"; }
  StatusOr<std::optional<api::TrainJobStatus>> Status(const api::TrainJob&) override {
    return std::optional<api::TrainJobStatus>();
  }
};

std::unique_ptr<Framework> Registered(const Reader& reader) {
  auto plugins = plugins::NewPlugins(PluginContext{&reader, [] { return std::string("now"); }});
  REQUIRE(plugins.ok());
  auto fw = Framework::New(std::move(plugins).value());
  REQUIRE(fw.ok());
  return std::move(fw).value();
}

std::unique_ptr<Framework> Empty() {
  auto fw = Framework::New({});
  REQUIRE(fw.ok());
  return std::move(fw).value();
}

api::TrainJob Job(std::string_view trainer) {
  return testing::TrainJob(
      "metadata: {name: test-job, namespace: default}\nspec: {runtimeRef: {name: rt}, trainer: " +
      std::string(trainer) + "}");
}

TEST_CASE("TestNew", "[framework]") {
  MapReader reader;
  SECTION("positive case") {
    std::unique_ptr<Framework> fw = Registered(reader);
    std::vector<std::string> names;
    for (const auto& p : fw->plugins()) {
      names.emplace_back(p->Name());
    }
    std::vector<std::string> registered;
    for (const plugins::PluginFactory& f : plugins::Registry()) {
      // Feature-gated plugins are off by default (upstream registers them only when enabled).
      if (f.enabled == nullptr) registered.emplace_back(f.name);
    }
    CHECK(names == registered);
    CHECK(std::find(names.begin(), names.end(), "TrainJobStatus") == names.end());
    // The documented order: ML policies before JobSet, PlainML before Torch, JobSet last.
    auto at = [&names](std::string_view n) { return std::find(names.begin(), names.end(), n); };
    CHECK(at("PlainML") < at("Torch"));
    CHECK(names.back() == "JobSet");
  }
  SECTION("too many TrainJobStatus plugins") {
    std::vector<std::unique_ptr<Plugin>> list;
    list.push_back(std::make_unique<FakeStatus>());
    list.push_back(std::make_unique<FakeStatus>());
    CHECK(Framework::New(std::move(list)).status().message() ==
          "too many TrainJobStatus plugins are registered");
  }
}

TEST_CASE("TestRunEnforceMLPolicyPlugins", "[framework]") {
  MapReader reader;
  framework::Info info =
      InfoBuilder()
          .PodSet(PodSet("node").Ancestor("trainer").Count(1).Containers({"node"}))
          .Build();
  SECTION("plainml MLPolicy is applied to runtime.Info, TrainJob doesn't have numNodes") {
    api::TrainJob job = Job("{env: [{name: A, value: b}]}");
    REQUIRE(Registered(reader)->RunEnforceMLPolicyPlugins(&info, job).ok());
    CHECK(*info.template_spec.pod_sets[0].count == 1);
    CHECK(testing::EnvNames(info.template_spec.pod_sets[0].containers[0].env) == "A");
  }
  SECTION("plainml MLPolicy is applied to runtime.Info, TrainJob has numNodes") {
    api::TrainJob job = Job("{numNodes: 100}");
    REQUIRE(Registered(reader)->RunEnforceMLPolicyPlugins(&info, job).ok());
    CHECK(*info.template_spec.pod_sets[0].count == 100);
  }
  SECTION("registry is empty") {
    api::TrainJob job = Job("{numNodes: 100}");
    REQUIRE(Empty()->RunEnforceMLPolicyPlugins(&info, job).ok());
    CHECK(*info.template_spec.pod_sets[0].count == 1);
  }
}

TEST_CASE("TestRunCustomValidationPlugins", "[framework]") {
  MapReader reader;
  framework::Info info = InfoBuilder().JobSetSpec("{replicatedJobs: [{name: node}]}").Build();
  SECTION("there are not any custom validations") {
    CHECK(Registered(reader)->RunCustomValidationPlugins(&info, nullptr, Job("{}")).ok());
  }
  SECTION("an empty registry") {
    CHECK(Empty()->RunCustomValidationPlugins(&info, nullptr, Job("{}")).ok());
  }
  SECTION("errors of several plugins are aggregated in registry order") {
    framework::Info torch = InfoBuilder()
                                .MLPolicy("{torch: {}}")
                                .JobSetSpec("{replicatedJobs: [{name: node}]}")
                                .Build();
    api::TrainJob job = testing::TrainJob(R"(
metadata: {name: test-job, namespace: default}
spec:
  runtimeRef: {name: rt}
  trainer: {env: [{name: PET_NNODES, value: '1'}]}
  runtimePatches: [{manager: bad}]
)");
    field::ValidationResult r =
        Registered(reader)->RunCustomValidationPlugins(&torch, nullptr, job);
    REQUIRE(r.errors.size() == 2);
    CHECK(r.errors[0].field == "spec.trainer.env");
    CHECK(r.errors[1].field == "spec.runtimePatches.manager");
    CHECK(r.ErrorMessage().front() == '[');
  }
}

TEST_CASE("TestRunComponentBuilderPlugins", "[framework]") {
  MapReader reader;
  api::TrainJob job = Job("{}");
  framework::Info info = InfoBuilder()
                             .JobSetSpec("{replicatedJobs: [{name: node}]}")
                             .PodSet(PodSet("node").Count(4))
                             .Build();
  SECTION("an empty registry") {
    auto objs = Empty()->RunComponentBuilderPlugins(&info, job);
    REQUIRE(objs.ok());
    CHECK(objs->empty());
  }
  SECTION("parallel counts are synced before the JobSet is built") {
    auto objs = Registered(reader)->RunComponentBuilderPlugins(&info, job);
    REQUIRE(objs.ok());
    REQUIRE(objs->size() == 1);
    CHECK((*objs)[0]["spec"]["replicatedJobs"].at(0)["template"]["spec"]["parallelism"].AsInt() ==
          4);
  }
}

TEST_CASE("TestWatchExtensionPlugins", "[framework]") {
  MapReader reader;
  SECTION("coscheduling, jobset, and mpi are performed") {
    std::vector<Watch> w = Registered(reader)->Watches();
    CHECK(std::any_of(w.begin(), w.end(), [](const Watch& x) { return x.gvk == JobSetGVK(); }));
  }
  SECTION("an empty registry") { CHECK(Empty()->Watches().empty()); }
}

TEST_CASE("TestPodNetworkPlugins", "[framework]") {
  MapReader reader;
  api::TrainJob job = Job("{}");
  framework::Info info = InfoBuilder()
                             .JobSetSpec("{replicatedJobs: [{name: node}]}")
                             .PodSet(PodSet("node").Count(2))
                             .Build();
  SECTION("Pod network is calculated by jobset plugin") {
    REQUIRE(Registered(reader)->RunPodNetworkPlugins(&info, job).ok());
    CHECK(info.template_spec.pod_sets[0].Endpoints() ==
          std::vector<std::string>{"test-job-node-0-0.test-job", "test-job-node-0-1.test-job"});
  }
  SECTION("am empty registry") {
    REQUIRE(Empty()->RunPodNetworkPlugins(&info, job).ok());
    CHECK(info.template_spec.pod_sets[0].Endpoints().empty());
  }
}

TEST_CASE("TestRunTrainJobStatusPlugin", "[framework]") {
  SECTION("no status plugin keeps the status") {
    auto s = Empty()->RunTrainJobStatusPlugin(Job("{}"));
    REQUIRE(s.ok());
    CHECK_FALSE(s->has_value());
  }
}

TEST_CASE("TestFindContainerByPodSetName", "[framework]") {
  framework::Info info = InfoBuilder()
                             .PodSet(PodSet("node")
                                         .Container("{name: shared, image: regular}")
                                         .InitContainer("{name: shared, image: init}")
                                         .InitContainers({"init-only"}))
                             .Build();
  SECTION("regular container exists") {
    CHECK(info.FindContainerByPodSetName("node", "shared") != nullptr);
  }
  SECTION("init container exists") {
    CHECK(info.FindContainerByPodSetName("node", "init-only") != nullptr);
  }
  SECTION("regular container wins name collision") {
    CHECK(info.FindContainerByPodSetName("node", "shared")->image == "regular");
  }
  SECTION("podSet does not exist") {
    CHECK(info.FindContainerByPodSetName("other", "shared") == nullptr);
  }
  SECTION("container does not exist") {
    CHECK(info.FindContainerByPodSetName("node", "nope") == nullptr);
  }
}

TEST_CASE("TestFindContainerByPodSetAncestorContainerName", "[framework]") {
  framework::Info info =
      InfoBuilder().PodSet(PodSet("node").Ancestor("trainer").Containers({"node"})).Build();
  SECTION("podSet and container exist") {
    CHECK(info.FindContainerByPodSetAncestorContainerName("trainer", "node") != nullptr);
  }
  SECTION("podSet exists, but container does not exist") {
    CHECK(info.FindContainerByPodSetAncestorContainerName("trainer", "x") == nullptr);
  }
  SECTION("podSet does not exist") {
    CHECK(info.FindContainerByPodSetAncestorContainerName("dataset-initializer", "node") ==
          nullptr);
  }
}

TEST_CASE("ApplyTrainerNumNodes and TrainerNode: the trainer PodSet every ML policy starts from",
          "[framework]") {
  auto info_with = [](bool count) {
    PodSet ps("node");
    ps.Ancestor("trainer").Containers({"node"});
    if (!count) ps.NoCount();
    return InfoBuilder().PodSet(ps).Build();
  };
  SECTION("numNodes overrides a set count") {
    framework::Info info = info_with(true);
    framework::PodSet* ps = info.ApplyTrainerNumNodes(Job("{numNodes: 3}"));
    REQUIRE(ps != nullptr);
    CHECK(ps->count == 3);
    CHECK(info.TrainerNode() == info.FindContainerByPodSetAncestorContainerName("trainer", "node"));
    CHECK(info.TrainerNode() != nullptr);
  }
  SECTION("an unset count stays unset") {
    framework::Info info = info_with(false);
    CHECK_FALSE(info.ApplyTrainerNumNodes(Job("{numNodes: 3}"))->count.has_value());
  }
  SECTION("no trainer PodSet") {
    framework::Info info = InfoBuilder().PodSet(PodSet("other").Containers({"node"})).Build();
    CHECK(info.ApplyTrainerNumNodes(Job("{numNodes: 3}")) == nullptr);
    CHECK(info.TrainerNode() == nullptr);
  }
}

TEST_CASE("UpsertTrainerPort", "[apply]") {
  json::Value ports = testing::Yaml("[{containerPort: 80, name: http}, {containerPort: 1}]");
  UpsertTrainerPort(ports);
  CHECK(testing::Canon(ports) == R"([{"containerPort":80,"name":"http"},{"containerPort":29500}])");
}

TEST_CASE("TestGetNumGPUPerNode", "[framework]") {
  CHECK(GetNumGPUPerNode(testing::Yaml("{requests: {nvidia.com/gpu: 2}}")) == 2);
  CHECK(GetNumGPUPerNode(testing::Yaml("{requests: {cpu: 2}, limits: {amd.com/GPU: 3}}")) == 3);
  CHECK(GetNumGPUPerNode(json::Value()) == 0);
}

TEST_CASE("TestUpsertPort", "[apply]") {
  json::Value ports = testing::Yaml("[{containerPort: 80, name: http}, {containerPort: 81}]");
  SECTION("match by port number") {
    UpsertPort(ports, testing::Yaml("{containerPort: 80, name: web}"));
    CHECK(testing::Canon(ports) == R"([{"containerPort":80,"name":"web"},{"containerPort":81}])");
  }
  SECTION("match by name") {
    UpsertPort(ports, testing::Yaml("{containerPort: 90, name: http}"));
    CHECK(testing::Canon(ports) == R"([{"containerPort":90,"name":"http"},{"containerPort":81}])");
  }
  SECTION("unnamed ports match each other, as upstream's ptr.Equal") {
    UpsertPort(ports, testing::Yaml("{containerPort: 29500}"));
    CHECK(testing::Canon(ports) ==
          R"([{"containerPort":80,"name":"http"},{"containerPort":29500}])");
  }
}

TEST_CASE("TestUpsertVolumeMounts", "[apply]") {
  json::Value mounts = testing::Yaml("[{name: a, mountPath: /a}]");
  SECTION("update based on mount path") {
    UpsertVolumeMounts(mounts, testing::Yaml("[{name: b, mountPath: /a}]"));
    CHECK(testing::Canon(mounts) == R"([{"mountPath":"/a","name":"b"}])");
  }
  SECTION("insert new volume mount") {
    UpsertVolumeMounts(mounts, testing::Yaml("[{name: a, mountPath: /b}]"));
    CHECK(mounts.size() == 2);
  }
}

TEST_CASE("TestEnvVar", "[apply]") {
  SECTION("simple value") {
    CHECK(testing::Canon(NormalizeEnvVar(testing::Yaml("{name: A}"))) ==
          R"({"name":"A","value":""})");
  }
  SECTION("field ref") {
    CHECK(testing::Canon(NormalizeEnvVar(testing::Yaml(
              "{name: A, valueFrom: {fieldRef: {apiVersion: v1, fieldPath: metadata.name}}}"))) ==
          R"({"name":"A","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}})");
  }
  SECTION("secret ref") {
    CHECK(testing::Canon(NormalizeEnvVar(testing::Yaml(
              "{name: A, valueFrom: {secretKeyRef: {name: s, key: k, optional: true}}}"))) ==
          R"({"name":"A","valueFrom":{"secretKeyRef":{"key":"k","name":"s","optional":true}}})");
  }
}

api::TrainJob JobWithUid(const std::string& uid) {
  api::TrainJob job;
  job.metadata.name = "tj";
  job.metadata.namespace_ = "team";
  job.metadata.uid = uid;
  return job;
}

TEST_CASE("NewOwnedObject: the skeleton every built object starts from", "[apply]") {
  SECTION("name, namespace and the TrainJob's controller reference, in that order") {
    CHECK(json::Write(NewOwnedObject(api::kConfigMapGVK, "tj-cm", JobWithUid("u1"))) ==
          R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"tj-cm","namespace":"team",)"
          R"("ownerReferences":[{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob",)"
          R"("name":"tj","uid":"u1","controller":true,"blockOwnerDeletion":true}]}})");
  }
  SECTION("labels and annotations before the owner, empty maps left out; no uid offline") {
    json::Value js =
        NewOwnedObject(api::kJobSetGVK, "tj", JobWithUid(""), {{"b", "2"}, {"a", "1"}}, {});
    CHECK(json::Write(js) ==
          R"({"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet","metadata":{"name":"tj",)"
          R"("namespace":"team","labels":{"a":"1","b":"2"},"ownerReferences":[{"apiVersion":)"
          R"("trainer.kubeflow.org/v1alpha1","kind":"TrainJob","name":"tj","controller":true,)"
          R"("blockOwnerDeletion":true}]}})");
    json::Value annotated = NewOwnedObject(api::kJobSetGVK, "tj", JobWithUid(""), {}, {{"k", "v"}});
    CHECK(json::Write(*annotated.Find("metadata")->Find("annotations")) == R"({"k":"v"})");
    CHECK_FALSE(annotated.Find("metadata")->Has("labels"));
  }
}

TEST_CASE("NodeZeroPodName and NodeZeroHost", "[trainjob]") {
  CHECK(NodeZeroPodName(JobWithUid("")) == "tj-node-0-0");
  CHECK(NodeZeroHost(JobWithUid("")) == "tj-node-0-0.tj");
}

TEST_CASE("ReservedEnvError: one error naming the reserved names sorted", "[validation]") {
  const std::set<std::string> reserved = {"B", "A", "C"};
  api::Trainer trainer;
  CHECK_FALSE(ReservedEnvError(trainer, reserved).has_value());  // no env at all
  trainer.env = testing::Yaml("[{name: X, value: '1'}]");
  CHECK_FALSE(ReservedEnvError(trainer, reserved).has_value());
  trainer.env = testing::Yaml("[{name: C, value: '1'}, {name: X}, {name: A, value: '2'}]");
  std::optional<field::Error> e = ReservedEnvError(trainer, reserved);
  REQUIRE(e.has_value());
  CHECK(e->type == field::ErrorType::kInvalid);
  CHECK(e->field == "spec.trainer.env");
  CHECK(e->detail == "must not have reserved envs, invalid envs configured: [A C]");
  CHECK(e->bad_value.Render().find("v1.EnvVar{Name:\"C\"") != std::string::npos);
}

}  // namespace
}  // namespace trainer::framework
