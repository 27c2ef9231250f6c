// The TrainingRuntime and ClusterTrainingRuntime controllers: v2.3.0 removes the legacy
// resource-in-use finalizer; with --protect-runtimes-in-use it is kept exactly while TrainJobs
// reference the runtime. State is checked on an in-memory apiserver (kube::testing::FakeClient).
#include "controller/runtime_reconciler.h"

#include <catch2/catch.hpp>

#include "common/kube/rest_mapper.h"
#include "common/kube/testing/fake_client.h"
#include "runtime/api/labels.h"

namespace trainer::controller {
namespace {

// The controller's reads, answered from the fake apiserver (the binary reads its caches).
class ClientReader final : public framework::Reader {
 public:
  explicit ClientReader(kube::testing::FakeClient& c) : c_(c) {}
  StatusOr<json::Value> Get(const kube::GroupVersionKind& gvk, std::string_view ns,
                            std::string_view name) const override {
    return c_.Get(
        gvk.kind == "TrainingRuntime" ? kube::kTrainingRuntimes : kube::kClusterTrainingRuntimes,
        ns, name);
  }

 private:
  kube::testing::FakeClient& c_;
};

json::Value Runtime(std::string_view kind, std::string_view ns,
                    std::vector<std::string> finalizers) {
  json::Value rt = json::Value::Object();
  rt.Set("apiVersion", "trainer.kubeflow.org/v1alpha1");
  rt.Set("kind", std::string(kind));
  rt["metadata"].Set("name", "torch");
  if (!ns.empty()) rt["metadata"].Set("namespace", std::string(ns));
  if (!finalizers.empty()) rt["metadata"].Set("finalizers", json::Value::StringArray(finalizers));
  return rt;
}

std::vector<std::string> Finalizers(kube::testing::FakeClient& c,
                                    const kube::GroupVersionResource& gvr, std::string_view ns) {
  StatusOr<json::Value> rt = c.Get(gvr, ns, "torch");
  REQUIRE(rt.ok());
  std::vector<std::string> out;
  if (const json::Value* f = rt->Find("metadata")->Find("finalizers");
      f != nullptr && f->IsArray()) {
    for (const json::Value& v : f->elements()) out.push_back(v.AsString());
  }
  return out;
}

TEST_CASE("v2.3.0: the legacy finalizer is removed, others are kept") {
  kube::testing::FakeClient c;
  c.Seed(kube::kClusterTrainingRuntimes,
         Runtime("ClusterTrainingRuntime", "", {"example.com/keep", api::kFinalizerResourceInUse}));
  ClientReader reader(c);
  bool in_use = true;  // in use or not: v2.3.0 removes it either way
  RuntimeReconciler r({&reader, &c, [&](auto, auto) { return in_use; }}, /*cluster=*/true,
                      /*protect_in_use=*/false);
  ReconcileResult result = r.Reconcile("", "torch");
  CHECK(result.error.ok());
  CHECK(Finalizers(c, kube::kClusterTrainingRuntimes, "") ==
        std::vector<std::string>{"example.com/keep"});
  int patches = c.Calls("patch");
  CHECK(r.Reconcile("", "torch").error.ok());
  CHECK(c.Calls("patch") == patches);  // nothing left to do: no write
}

TEST_CASE("--protect-runtimes-in-use: the finalizer follows the runtime's use") {
  kube::testing::FakeClient c;
  c.Seed(kube::kTrainingRuntimes, Runtime("TrainingRuntime", "team", {}));
  ClientReader reader(c);
  bool in_use = false;
  std::string asked;
  RuntimeReconciler r({&reader, &c,
                       [&](std::string_view ns, std::string_view name) {
                         asked = std::string(ns) + "/" + std::string(name);
                         return in_use;
                       }},
                      /*cluster=*/false, /*protect_in_use=*/true);
  CHECK(r.Reconcile("team", "torch").error.ok());
  CHECK(Finalizers(c, kube::kTrainingRuntimes, "team").empty());
  in_use = true;
  CHECK(r.Reconcile("team", "torch").error.ok());
  CHECK(asked == "team/torch");
  CHECK(Finalizers(c, kube::kTrainingRuntimes, "team") ==
        std::vector<std::string>{api::kFinalizerResourceInUse});
  in_use = false;
  CHECK(r.Reconcile("team", "torch").error.ok());
  CHECK(Finalizers(c, kube::kTrainingRuntimes, "team").empty());
}

TEST_CASE("a conflicting write is an error to retry; a runtime gone is done") {
  kube::testing::FakeClient c;
  c.Seed(kube::kTrainingRuntimes,
         Runtime("TrainingRuntime", "team", {api::kFinalizerResourceInUse}));
  ClientReader reader(c);
  RuntimeReconciler r({&reader, &c, {}}, /*cluster=*/false, /*protect_in_use=*/false);
  c.FailNext("patch", ConflictError("the object has been modified"));
  ReconcileResult result = r.Reconcile("team", "torch");
  CHECK(result.error.message() ==
        "removing finalizer of TrainingRuntime team/torch: the object has been modified");
  CHECK(r.Reconcile("team", "torch").error.ok());
  CHECK(Finalizers(c, kube::kTrainingRuntimes, "team").empty());
  CHECK(r.Reconcile("team", "missing").error.ok());
}

TEST_CASE("only a runtime's own bookkeeping changed: nothing for its TrainJobs") {
  json::Value before = Runtime("TrainingRuntime", "team", {});
  before["metadata"].Set("resourceVersion", "1");
  before["spec"]["mlPolicy"].Set("numNodes", 1);
  auto after = [&] { return before.Clone(); };

  json::Value same = after();
  CHECK_FALSE(RuntimeChangeReachesTrainJobs(before, same));  // a relist that found it unchanged
  json::Value finalized = after();
  finalized["metadata"].Set("resourceVersion", "2");
  finalized["metadata"].Set("finalizers",
                            json::Value::StringArray({api::kFinalizerResourceInUse}));
  finalized["metadata"]["managedFields"] = json::Value::Array();
  CHECK_FALSE(RuntimeChangeReachesTrainJobs(before, finalized));

  json::Value spec = after();
  spec["spec"]["mlPolicy"].Set("numNodes", 2);
  CHECK(RuntimeChangeReachesTrainJobs(before, spec));
  json::Value added = after();
  added["spec"].Set("podGroupPolicy", json::Value::Object());
  CHECK(RuntimeChangeReachesTrainJobs(before, added));
  json::Value removed = after();
  removed.Erase("spec");
  CHECK(RuntimeChangeReachesTrainJobs(before, removed));
  json::Value labeled = after();
  labeled["metadata"]["labels"].Set("team", "a");
  CHECK(RuntimeChangeReachesTrainJobs(before, labeled));
  json::Value deleting = after();
  deleting["metadata"].Set("deletionTimestamp", "2026-11-28T00:00:00Z");
  CHECK(RuntimeChangeReachesTrainJobs(before, deleting));
}

}  // namespace
}  // namespace trainer::controller
