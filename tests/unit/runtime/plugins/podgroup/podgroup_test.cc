// The watches CoScheduling and Volcano share (upstream's ReconcilerBuilders of both plugins):
// which TrainJobs a LimitRange or RuntimeClass event re-enqueues, read through a Lister with the
// indexes the controller builds from framework::Index declarations.
#include "runtime/plugins/podgroup/podgroup.h"

#include <catch2/catch.hpp>
#include <map>

#include "runtime/api/kinds.h"
#include "runtime/framework/indexer.h"

namespace trainer::plugins::podgroup {
namespace {

using kube::GroupVersionKind;

json::Value Parse(std::string_view text) {
  StatusOr<json::Value> v = json::Parse(text);
  REQUIRE(v.ok());
  return std::move(*v);
}

// A Lister over objects held in memory, indexed as the controller's informers are.
class TestLister final : public framework::Lister {
 public:
  TestLister() {
    for (const framework::Index& i : Indexes()) indexes_.push_back(i);
    indexes_.push_back({api::kTrainJobGVK, framework::kTrainJobRuntimeRefKey,
                        framework::TrainJobTrainingRuntimeRef});
    indexes_.push_back({api::kTrainJobGVK, framework::kTrainJobClusterRuntimeRefKey,
                        framework::TrainJobClusterTrainingRuntimeRef});
  }
  void Add(const GroupVersionKind& gvk, std::string ns, std::string name, json::Value obj) {
    objects_[gvk][ns.empty() ? name : ns + "/" + name] =
        std::make_shared<json::Value>(std::move(obj));
  }
  std::vector<std::string> Keys(const GroupVersionKind& gvk, std::string_view ns) const override {
    std::vector<std::string> out;
    for (const auto& [key, obj] : Of(gvk)) {
      if (key.starts_with(std::string(ns) + "/")) out.push_back(key);
    }
    return out;
  }
  std::vector<std::string> KeysByIndex(const GroupVersionKind& gvk, std::string_view index,
                                       std::string_view value) const override {
    std::vector<std::string> out;
    for (const framework::Index& i : indexes_) {
      if (i.gvk != gvk || i.name != index) continue;
      for (const auto& [key, obj] : Of(gvk)) {
        for (const std::string& v : i.values(*obj)) {
          if (v == value) out.push_back(key);
        }
      }
    }
    return out;
  }
  std::shared_ptr<const json::Value> Get(const GroupVersionKind& gvk,
                                         std::string_view key) const override {
    auto objs = Of(gvk);
    auto it = objs.find(std::string(key));
    return it == objs.end() ? nullptr : it->second;
  }

 private:
  using Objects = std::map<std::string, std::shared_ptr<const json::Value>>;
  Objects Of(const GroupVersionKind& gvk) const {
    auto it = objects_.find(gvk);
    return it == objects_.end() ? Objects() : it->second;
  }
  std::map<GroupVersionKind, Objects> objects_;
  std::vector<framework::Index> indexes_;
};

void AddTrainJob(TestLister& l, std::string ns, std::string name, bool suspend,
                 std::string runtime_kind = "TrainingRuntime", std::string runtime = "rt") {
  l.Add(api::kTrainJobGVK, ns, name,
        Parse(R"({"metadata":{"namespace":")" + ns + R"(","name":")" + name +
              R"("},"spec":{"suspend":)" + (suspend ? "true" : "false") +
              R"(,"runtimeRef":{"name":")" + runtime + R"(","kind":")" + runtime_kind + "\"}}}"));
}

json::Value RuntimeUsing(std::string_view runtime_class) {
  return Parse(R"({"spec":{"template":{"spec":{"replicatedJobs":[
      {"name":"init","template":{"spec":{"template":{"spec":{}}}}},
      {"name":"node","template":{"spec":{"template":{"spec":{"runtimeClassName":")" +
               std::string(runtime_class) + R"("}}}}}]}}}})");
}

TEST_CASE("the watches: owned PodGroups and two requeues, only while the PodGroup is served") {
  GroupVersionKind pg{"scheduling.x-k8s.io", "v1alpha1", "PodGroup"};
  std::vector<framework::Watch> w = Watches(pg);
  REQUIRE(w.size() == 3);
  CHECK(w[0] == framework::Watch{.gvk = pg, .only_if_installed = pg});
  CHECK(w[1].gvk == api::kLimitRangeGVK);
  CHECK(w[1].trainjobs_for == SuspendedTrainJobsInNamespace);
  CHECK(w[2].gvk == api::kRuntimeClassGVK);
  CHECK(w[2].trainjobs_for == SuspendedTrainJobsUsingRuntimeClass);
  for (const framework::Watch& x : w) CHECK(x.only_if_installed == pg);
  CHECK_FALSE(w[1].owned_by_trainjob);
  CHECK_FALSE(w[2].owned_by_trainjob);
}

TEST_CASE("a LimitRange event: the suspended TrainJobs of its namespace") {
  TestLister l;
  AddTrainJob(l, "team", "a", true);
  AddTrainJob(l, "team", "b", false);
  AddTrainJob(l, "team", "c", true);
  AddTrainJob(l, "other", "d", true);
  AddTrainJob(l, "team-2", "e", true);  // a namespace whose name starts like "team"
  json::Value lr = Parse(R"({"metadata":{"namespace":"team","name":"limits"}})");
  CHECK(SuspendedTrainJobsInNamespace(lr, l) == std::vector<std::string>{"team/a", "team/c"});
  json::Value empty = Parse(R"({"metadata":{"namespace":"nobody","name":"limits"}})");
  CHECK(SuspendedTrainJobsInNamespace(empty, l).empty());
}

TEST_CASE("a RuntimeClass event: the suspended TrainJobs whose runtime uses it") {
  TestLister l;
  l.Add(api::kTrainingRuntimeGVK, "team", "gvisor-rt", RuntimeUsing("gvisor"));
  l.Add(api::kTrainingRuntimeGVK, "team", "plain", Parse(R"({"spec":{}})"));
  l.Add(api::kClusterTrainingRuntimeGVK, "", "gvisor-ctr", RuntimeUsing("gvisor"));
  l.Add(api::kClusterTrainingRuntimeGVK, "", "kata-ctr", RuntimeUsing("kata"));
  AddTrainJob(l, "team", "tr-suspended", true, "TrainingRuntime", "gvisor-rt");
  AddTrainJob(l, "team", "tr-running", false, "TrainingRuntime", "gvisor-rt");
  AddTrainJob(l, "team", "plain", true, "TrainingRuntime", "plain");
  // Upstream indexes TrainingRuntime references by name alone, so it also matched this one; a
  // TrainingRuntime of another namespace is another runtime.
  AddTrainJob(l, "other", "same-name", true, "TrainingRuntime", "gvisor-rt");
  AddTrainJob(l, "other", "ctr-suspended", true, "ClusterTrainingRuntime", "gvisor-ctr");
  AddTrainJob(l, "team", "kata", true, "ClusterTrainingRuntime", "kata-ctr");
  json::Value gvisor = Parse(R"({"metadata":{"name":"gvisor"}})");
  CHECK(SuspendedTrainJobsUsingRuntimeClass(gvisor, l) ==
        std::vector<std::string>{"other/ctr-suspended", "team/tr-suspended"});
  json::Value kata = Parse(R"({"metadata":{"name":"kata"}})");
  CHECK(SuspendedTrainJobsUsingRuntimeClass(kata, l) == std::vector<std::string>{"team/kata"});
  json::Value unused = Parse(R"({"metadata":{"name":"runc"}})");
  CHECK(SuspendedTrainJobsUsingRuntimeClass(unused, l).empty());
}

TEST_CASE("the runtimeClassName indexes of both runtime kinds") {
  std::vector<framework::Index> idx = Indexes();
  REQUIRE(idx.size() == 2);
  CHECK(idx[0].gvk == api::kTrainingRuntimeGVK);
  CHECK(idx[0].name == framework::kTrainingRuntimeRuntimeClassKey);
  CHECK(idx[1].gvk == api::kClusterTrainingRuntimeGVK);
  CHECK(idx[1].name == framework::kClusterTrainingRuntimeRuntimeClassKey);
  CHECK(idx[0].values(RuntimeUsing("gvisor")) == std::vector<std::string>{"gvisor"});
}

}  // namespace
}  // namespace trainer::plugins::podgroup
