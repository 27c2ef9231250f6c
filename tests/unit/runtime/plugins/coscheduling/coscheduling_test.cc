// CoScheduling plugin (upstream plugins/coscheduling/coscheduling_test.go): TestCoScheduling by
// upstream case name (EnforcePodGroupPolicy then Build).
#include "runtime/plugins/coscheduling/coscheduling.h"

#include <catch2/catch.hpp>

#include "runtime/api/kinds.h"
#include "runtime/framework/map_reader.h"
#include "runtime/framework/testing/testing.h"
#include "runtime/plugins/podgroup/podgroup.h"

namespace trainer::plugins {
namespace {

framework::Info CoschedInfo(std::string_view pod_sets_yaml = "") {
  framework::Info info;
  api::PodGroupPolicy policy;
  policy.coscheduling = api::CoschedulingPodGroupPolicySource{30};
  info.runtime_policy.pod_group_policy = policy;
  if (!pod_sets_yaml.empty()) {
    json::Value sets = testing::Yaml(pod_sets_yaml);
    for (const json::Value& s : sets.elements()) {
      framework::PodSet ps;
      ps.name = framework::StringField(s, "name");
      ps.count = static_cast<int32_t>(s.Find("count")->AsInt());
      if (const json::Value* r = s.Find("requests")) {
        ps.single_pod_requests = r->Clone();
      }
      info.template_spec.pod_sets.push_back(std::move(ps));
    }
  }
  return info;
}

api::TrainJob Job(std::string_view name = "trainJob", std::string_view suspend = "") {
  std::string yaml = "metadata: {name: " + std::string(name) +
                     ", namespace: default, uid: trainJob}\nspec:\n  runtimeRef: {name: x}\n";
  if (!suspend.empty()) {
    yaml += "  suspend: " + std::string(suspend) + "\n";
  }
  return testing::TrainJob(yaml);
}

constexpr char kOwner[] =
    R"("ownerReferences":[{"apiVersion":"trainer.kubeflow.org/v1alpha1","blockOwnerDeletion":true,"controller":true,"kind":"TrainJob","name":"trainJob","uid":"trainJob"}])";

std::string WantPodGroup(std::string_view spec) {
  return std::string(
             R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"trainJob","namespace":"default",)") +
         kOwner + R"(},"spec":)" + std::string(spec) + "}";
}

std::vector<json::Value> Run(CoScheduling& p, framework::Info* info, const api::TrainJob& job) {
  REQUIRE(p.EnforcePodGroupPolicy(info, job).ok());
  StatusOr<std::vector<json::Value>> objs = p.Build(info, job);
  REQUIRE(objs.ok());
  return std::move(objs).value();
}

TEST_CASE("TestCoScheduling", "[coscheduling]") {
  framework::MapReader reader;
  CoScheduling p(&reader);
  SECTION("no action when info is nil") { CHECK(Run(p, nullptr, Job()).empty()); }
  SECTION("no action when podGroupPolicy is nil") {
    framework::Info info;
    CHECK(Run(p, &info, Job()).empty());
    CHECK(info.scheduler.pod_labels.empty());
  }
  SECTION("no action when coscheduling is nil") {
    framework::Info info;
    info.runtime_policy.pod_group_policy = api::PodGroupPolicy{};
    CHECK(Run(p, &info, Job()).empty());
    CHECK(info.scheduler.pod_labels.empty());
  }
  // "no action when trainJob is nil": our phases take the TrainJob by reference; there is no
  // nil TrainJob to pass.
  SECTION("succeeded to build PodGroup") {
    framework::Info info = CoschedInfo("[{name: node, count: 1}]");
    std::vector<json::Value> objs = Run(p, &info, Job());
    CHECK(info.scheduler.pod_labels.at("scheduling.x-k8s.io/pod-group") == "trainJob");
    REQUIRE(objs.size() == 1);
    CHECK(testing::Canon(objs[0]) ==
          WantPodGroup(R"({"minMember":1,"minResources":{},"scheduleTimeoutSeconds":30})"));
  }
  SECTION("succeeded to build PodGroup with multiple PodSets") {
    framework::Info info = CoschedInfo(
        "[{name: node, count: 2, requests: {cpu: 500m, memory: 1Gi}}, {name: "
        "dataset-initializer, count: 1, requests: {cpu: 250m, memory: 512Mi}}]");
    std::vector<json::Value> objs = Run(p, &info, Job());
    REQUIRE(objs.size() == 1);
    CHECK(
        testing::Canon(objs[0]) ==
        WantPodGroup(
            R"({"minMember":3,"minResources":{"cpu":"1250m","memory":"2560Mi"},"scheduleTimeoutSeconds":30})"));
  }
  SECTION("succeeded to build PodGroup with MinResources") {
    framework::Info info =
        CoschedInfo("[{name: node, count: 2, requests: {cpu: 500m, memory: 1Gi}}]");
    std::vector<json::Value> objs = Run(p, &info, Job());
    REQUIRE(objs.size() == 1);
    CHECK(
        testing::Canon(objs[0]) ==
        WantPodGroup(
            R"({"minMember":2,"minResources":{"cpu":"1","memory":"2Gi"},"scheduleTimeoutSeconds":30})"));
  }
  SECTION("failed to get PodGroup due to API error") {
    reader.SetError(api::kSchedulerPluginsPodGroupGVK, "default", "trainJob",
                    UnavailableError("failed to get PodGroup from API during Build"));
    framework::Info info = CoschedInfo("[{name: node, count: 1}]");
    StatusOr<std::vector<json::Value>> objs = p.Build(&info, Job());
    REQUIRE_FALSE(objs.ok());
    CHECK(objs.status().message() == "failed to get PodGroup from API during Build");
  }
  SECTION("no action when PodGroup already exists and TrainJob is not suspended") {
    REQUIRE(reader
                .Add(testing::Yaml("{apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, "
                                   "metadata: {name: trainJob, namespace: default}, spec: "
                                   "{minMember: 1}}"))
                .ok());
    framework::Info info = CoschedInfo("[{name: node, count: 1}]");
    CHECK(Run(p, &info, Job("trainJob", "false")).empty());
  }
  SECTION("no action when TrainJob is not suspended") {
    REQUIRE(reader
                .Add(testing::Yaml("{apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, "
                                   "metadata: {name: existingTrainJob, namespace: default}}"))
                .ok());
    framework::Info info = CoschedInfo("[{name: node, count: 2, requests: {cpu: 500m}}]");
    CHECK(Run(p, &info, Job("existingTrainJob", "false")).empty());
  }
  SECTION("PodGroup is rebuilt while the TrainJob is suspended") {
    REQUIRE(reader
                .Add(testing::Yaml("{apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, "
                                   "metadata: {name: trainJob, namespace: default}}"))
                .ok());
    framework::Info info = CoschedInfo("[{name: node, count: 4}]");
    std::vector<json::Value> objs = Run(p, &info, Job("trainJob", "true"));
    REQUIRE(objs.size() == 1);
    CHECK(objs[0].Find("spec")->Find("minMember")->AsInt() == 4);
  }
  SECTION("scheduleTimeoutSeconds defaults to 60") {
    framework::Info info = CoschedInfo("[{name: node, count: 1}]");
    info.runtime_policy.pod_group_policy->coscheduling->schedule_timeout_seconds.reset();
    std::vector<json::Value> objs = Run(p, &info, Job());
    CHECK(objs[0].Find("spec")->Find("scheduleTimeoutSeconds")->AsInt() == 60);
  }
}

TEST_CASE("CoScheduling watches", "[coscheduling]") {
  framework::MapReader reader;
  std::vector<framework::Watch> w = CoScheduling(&reader).Watches();
  // Owned PodGroups, then the LimitRange and RuntimeClass requeues, all only while the
  // scheduler-plugins PodGroup is installed (tests/unit/runtime/plugins/podgroup).
  REQUIRE(w.size() == 3);
  CHECK(w[0].gvk.ApiVersion() == "scheduling.x-k8s.io/v1alpha1");
  CHECK(w[0].gvk.kind == "PodGroup");
  CHECK(w[0].owned_by_trainjob);
  CHECK(w == podgroup::Watches(api::kSchedulerPluginsPodGroupGVK));
  CHECK(w[1].only_if_installed == api::kSchedulerPluginsPodGroupGVK);
  CHECK(CoScheduling(&reader).Indexes() == podgroup::Indexes());
}

}  // namespace
}  // namespace trainer::plugins
