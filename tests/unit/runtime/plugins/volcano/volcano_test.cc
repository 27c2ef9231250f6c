// Volcano plugin (upstream plugins/volcano/volcano_test.go): TestVolcano and TestValidate by
// upstream case name.
#include "runtime/plugins/volcano/volcano.h"

#include <catch2/catch.hpp>

#include "runtime/api/kinds.h"
#include "runtime/framework/map_reader.h"
#include "runtime/framework/testing/testing.h"

namespace trainer::plugins {
namespace {

// A Volcano Info whose single `node` replicatedJob uses priority class `pc` (none if empty).
framework::Info VolcanoInfo(std::string_view pc = "") {
  std::string spec =
      "replicatedJobs:\n- name: node\n  template:\n    spec:\n      template:\n        spec:\n";
  spec += pc.empty() ? "          containers: [{name: node}]\n"
                     : "          priorityClassName: " + std::string(pc) +
                           "\n          containers: [{name: node}]\n";
  framework::Info info = testing::InfoBuilder()
                             .JobSetSpec(spec)
                             .PodSet(testing::PodSet("node").Count(2).Containers({"node"}))
                             .Build();
  info.template_spec.pod_sets[0].single_pod_requests = testing::Yaml("{cpu: '1', memory: 2Gi}");
  api::PodGroupPolicy policy;
  policy.volcano = api::VolcanoPodGroupPolicySource{};
  info.runtime_policy.pod_group_policy = policy;
  return info;
}

api::TrainJob Job(std::string_view suspend = "") {
  std::string yaml =
      "metadata: {name: test-job, namespace: default, uid: uid}\nspec:\n  runtimeRef: {name: x}\n";
  if (!suspend.empty()) {
    yaml += "  suspend: " + std::string(suspend) + "\n";
  }
  return testing::TrainJob(yaml);
}

Status AddPodGroup(framework::MapReader& reader) {
  return reader.Add(testing::Yaml(
      "{apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: test-job, "
      "namespace: default}}"));
}

TEST_CASE("TestVolcano", "[volcano]") {
  framework::MapReader reader;
  Volcano p(&reader);
  SECTION("Test nil info") {
    CHECK(p.EnforcePodGroupPolicy(nullptr, Job()).ok());
    CHECK(p.Build(nullptr, Job())->empty());
  }
  SECTION("inject group-name annotation") {
    framework::Info info = VolcanoInfo();
    REQUIRE(p.EnforcePodGroupPolicy(&info, Job()).ok());
    CHECK(info.scheduler.pod_annotations.at("scheduling.k8s.io/group-name") == "test-job");
  }
  SECTION("PodGroup exists and trainjob not suspended") {
    REQUIRE(AddPodGroup(reader).ok());
    framework::Info info = VolcanoInfo("high-priority");
    StatusOr<std::vector<json::Value>> objs = p.Build(&info, Job("false"));
    REQUIRE(objs.ok());
    CHECK(objs->empty());
  }
  SECTION("PodGroup exists but trainjob suspended") {
    REQUIRE(AddPodGroup(reader).ok());
    framework::Info info = VolcanoInfo("high-priority");
    info.annotations["scheduling.volcano.sh/queue-name"] = "q1";
    StatusOr<std::vector<json::Value>> objs = p.Build(&info, Job("true"));
    REQUIRE(objs.ok());
    REQUIRE(objs->size() == 1);
    CHECK(
        testing::Canon(objs->at(0)) ==
        R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"test-job","namespace":"default","ownerReferences":[{"apiVersion":"trainer.kubeflow.org/v1alpha1","blockOwnerDeletion":true,"controller":true,"kind":"TrainJob","name":"test-job","uid":"uid"}]},"spec":{"minMember":2,"minResources":{"cpu":"2","memory":"4Gi"},"priorityClassName":"high-priority","queue":"q1"}})");
  }
  SECTION("Error when getting existing PodGroup") {
    reader.SetError(api::kVolcanoPodGroupGVK, "default", "test-job",
                    UnavailableError("error when getting existing PodGroup"));
    framework::Info info = VolcanoInfo();
    StatusOr<std::vector<json::Value>> objs = p.Build(&info, Job("false"));
    REQUIRE_FALSE(objs.ok());
    CHECK(objs.status().message() == "error when getting existing PodGroup");
  }
  SECTION("network topology is copied; a missing highestTierAllowed is omitted") {
    framework::Info info = VolcanoInfo();
    info.runtime_policy.pod_group_policy->volcano->network_topology =
        api::VolcanoNetworkTopology{"hard", std::nullopt};
    StatusOr<std::vector<json::Value>> objs = p.Build(&info, Job());
    REQUIRE(objs.ok());
    CHECK(testing::Canon(*objs->at(0).Find("spec")->Find("networkTopology")) ==
          R"({"mode":"hard"})");
    info.runtime_policy.pod_group_policy->volcano->network_topology->highest_tier_allowed = 2;
    objs = p.Build(&info, Job());
    CHECK(testing::Canon(*objs->at(0).Find("spec")->Find("networkTopology")) ==
          R"({"highestTierAllowed":2,"mode":"hard"})");
  }
}

TEST_CASE("TestValidate", "[volcano]") {
  framework::MapReader reader;
  Volcano p(&reader);
  SECTION("no action when info is nil") { CHECK(p.Validate(nullptr, nullptr, Job()).ok()); }
  SECTION("no action when Volcano policy not enabled") {
    framework::Info info = VolcanoInfo("missing");
    info.runtime_policy.pod_group_policy.reset();
    CHECK(p.Validate(&info, nullptr, Job()).ok());
  }
  SECTION("queue annotation is empty") {
    framework::Info info = VolcanoInfo();
    info.annotations["scheduling.volcano.sh/queue-name"] = "";
    field::ValidationResult r = p.Validate(&info, nullptr, Job());
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].ToString() ==
          "spec.annotations[scheduling.volcano.sh/queue-name]: Invalid value: \"\": Volcano "
          "queue name must not be empty");
  }
  SECTION("priorityClassName does not exist") {
    framework::Info info = VolcanoInfo("non-existent");
    field::ValidationResult r = p.Validate(&info, nullptr, Job());
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].ToString() ==
          "spec.templateSpec.priorityClassName: Invalid value: \"non-existent\": PriorityClass "
          "\"non-existent\" doesn't exist: priorityclasses.scheduling.k8s.io \"non-existent\" "
          "not found");
  }
  SECTION("priorityClassName exists") {
    REQUIRE(reader
                .Add(testing::Yaml("{apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, "
                                   "metadata: {name: existing-priority}, value: 1000}"))
                .ok());
    framework::Info info = VolcanoInfo("existing-priority");
    CHECK(p.Validate(&info, nullptr, Job()).ok());
  }
  SECTION("system priority classes are not looked up") {
    framework::Info info = VolcanoInfo("system-node-critical");
    CHECK(p.Validate(&info, nullptr, Job()).ok());
  }
}

}  // namespace
}  // namespace trainer::plugins
