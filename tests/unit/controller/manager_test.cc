// The Manager's wiring, on an in-memory apiserver (kube::testing::FakeClient): its informers and
// event handlers come from the plugins' declared watches, so a TrainJob gets its objects, a
// deleted owned object comes back, and the CoScheduling requeues reach suspended TrainJobs; the
// watches of a kind that is not installed are skipped; --protect-runtimes-in-use wires TrainJob
// events to the runtime controllers; while the JobSets still list, live events are served (and
// /readyz says ready) only when the JobSet CRD was installed at start.
#include "controller/manager.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "common/kube/rest_mapper.h"
#include "common/kube/testing/fake_client.h"
#include "common/metrics/metrics.h"
#include "runtime/api/codec.h"
#include "runtime/framework/testing/testing.h"

namespace trainer::controller {
namespace {

using namespace std::chrono_literals;

bool WaitFor(const std::function<bool()>& cond, std::chrono::milliseconds timeout = 10s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

json::Value Yaml(std::string_view text) { return trainer::testing::Yaml(text); }

// TrainJob passes so far, from the (process-wide) reconcile metrics.
int64_t Passes() {
  std::string text = metrics::DefaultRegistry().Text();
  std::smatch m;
  std::regex re(
      R"(controller_runtime_reconcile_total\{controller="trainjob_controller",result="success"\} (\d+))");
  return std::regex_search(text, m, re) ? std::stoll(m[1]) : 0;
}

// Passes settle: no new pass for a while. Returns the count.
int64_t Settled() {
  int64_t last = -1;
  for (int quiet = 0; quiet < 30;) {
    std::this_thread::sleep_for(10ms);
    int64_t now = Passes();
    quiet = now == last ? quiet + 1 : 0;
    last = now;
  }
  return last;
}

// A coscheduling ClusterTrainingRuntime whose pods run with runtimeClassName gvisor.
json::Value Runtime() {
  return api::EncodeTrainingRuntime(trainer::testing::Runtime(R"(
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata: {name: torch}
    spec:
      mlPolicy: {numNodes: 1, torch: {}}
      podGroupPolicy: {coscheduling: {}}
      template:
        spec:
          replicatedJobs:
            - name: node
              template:
                metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
                spec:
                  template:
                    spec:
                      runtimeClassName: gvisor
                      containers: [{name: node, image: pytorch}])"));
}

json::Value TrainJob(std::string name, bool suspend) {
  json::Value tj = Yaml(R"(
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata: {namespace: team}
    spec: {runtimeRef: {name: torch, apiGroup: trainer.kubeflow.org, kind: ClusterTrainingRuntime}})");
  tj["metadata"].Set("name", std::move(name));
  tj["spec"].Set("suspend", suspend);
  return tj;
}

// A running Manager on `client`, stopped on destruction.
class Running {
 public:
  explicit Running(kube::testing::FakeClient& client, Options o = {})
      : frame_({.program = "manager-test",
                .health_probe_bind_address = "0",
                .metrics_bind_address = "0"}) {
    o.trainjob_workers = 2;
    StatusOr<std::unique_ptr<service::Runnable>> m = Manager::New(o, frame_, &client);
    REQUIRE(m.ok());
    manager_ = std::move(*m);
    thread_ = std::thread([this] { result_ = manager_->Run(stop_.get_token()); });
  }
  ~Running() {
    stop_.request_stop();
    thread_.join();
  }
  Status Ready() { return frame_.probes().Ready(); }

 private:
  service::Frame frame_;
  std::unique_ptr<service::Runnable> manager_;
  std::stop_source stop_;
  Status result_;
  std::thread thread_;
};

bool Has(kube::testing::FakeClient& c, const kube::GroupVersionResource& gvr,
         std::string_view name) {
  return c.Get(gvr, "team", name).ok();
}

TEST_CASE("the plugins' watches drive the caches and events", "[manager]") {
  kube::testing::FakeClient c;
  c.Serve(kube::kSchedulerPluginsPodGroups, "PodGroup");
  c.Seed(kube::kClusterTrainingRuntimes, Runtime());
  c.Seed(kube::kTrainJobs, TrainJob("waiting", true));
  c.Seed(kube::kTrainJobs, TrainJob("running", false));
  Running manager(c);

  // Owned kinds: each TrainJob gets its snapshot, PodGroup and JobSet.
  for (const char* tj : {"waiting", "running"}) {
    INFO(tj);
    REQUIRE(WaitFor([&] {
      return Has(c, kube::kConfigMaps, std::string(tj) + "-runtime-snapshot") &&
             Has(c, kube::kSchedulerPluginsPodGroups, tj) && Has(c, kube::kJobSets, tj);
    }));
  }
  // A deleted JobSet is an owned object's event: it comes back.
  REQUIRE(c.Delete(kube::kJobSets, "team", "running").ok());
  CHECK(WaitFor([&] { return Has(c, kube::kJobSets, "running"); }));

  // LimitRange (CoScheduling's requeue): one pass, of the suspended TrainJob of the namespace.
  int64_t before = Settled();
  c.Seed(kube::kLimitRanges, Yaml("{kind: LimitRange, metadata: {name: limits, namespace: team}}"));
  CHECK(WaitFor([&] { return Passes() > before; }));
  CHECK(Settled() - before == 1);
  // Elsewhere: no TrainJob of that namespace.
  before = Settled();
  c.Seed(kube::kLimitRanges, Yaml("{kind: LimitRange, metadata: {name: limits, namespace: x}}"));
  std::this_thread::sleep_for(200ms);
  CHECK(Settled() == before);

  // RuntimeClass: the suspended TrainJobs whose runtime uses it.
  before = Settled();
  c.Seed(kube::kRuntimeClasses, Yaml("{kind: RuntimeClass, metadata: {name: gvisor}}"));
  CHECK(WaitFor([&] { return Passes() > before; }));
  CHECK(Settled() - before == 1);
  before = Settled();
  c.Seed(kube::kRuntimeClasses, Yaml("{kind: RuntimeClass, metadata: {name: kata}}"));
  std::this_thread::sleep_for(200ms);
  CHECK(Settled() == before);
}

TEST_CASE("a PodGroup kind that is not installed: none of its plugin's watches", "[manager]") {
  kube::testing::FakeClient c;  // discovery serves nothing
  c.Seed(kube::kClusterTrainingRuntimes, Runtime());
  c.Seed(kube::kTrainJobs, TrainJob("waiting", true));
  Running manager(c);
  REQUIRE(WaitFor([&] { return Has(c, kube::kJobSets, "waiting"); }));
  int64_t before = Settled();
  c.Seed(kube::kLimitRanges, Yaml("{kind: LimitRange, metadata: {name: limits, namespace: team}}"));
  std::this_thread::sleep_for(200ms);
  CHECK(Settled() == before);
  CHECK(c.Calls("watch") > 0);
}

// Lists of one resource wait (a slow list) until the end of the scope.
class HeldLists {
 public:
  HeldLists(kube::testing::FakeClient& c, const kube::GroupVersionResource& gvr)
      : c_(c), gvr_(gvr) {
    c_.HoldLists(gvr_, true);
  }
  ~HeldLists() { Release(); }
  void Release() { c_.HoldLists(gvr_, false); }

 private:
  kube::testing::FakeClient& c_;
  const kube::GroupVersionResource gvr_;
};

TEST_CASE("while the JobSets still list, a new TrainJob is served and listed ones wait",
          "[manager]") {
  kube::testing::FakeClient c;
  c.Serve(kube::kJobSets, "JobSet");  // installed: live events are served before every list ends
  c.Seed(kube::kClusterTrainingRuntimes, Runtime());
  c.Seed(kube::kTrainJobs, TrainJob("listed", false));
  HeldLists jobsets(c, kube::kJobSets);
  Running manager(c);
  // Ready: the TrainJobs and runtimes are listed.
  REQUIRE(WaitFor([&] { return manager.Ready().ok(); }));

  // A TrainJob created after the TrainJobs' list: its pass reads the absent JobSet and snapshot
  // from the apiserver and applies them.
  REQUIRE(c.Create(kube::kTrainJobs, "team", TrainJob("new", false)).ok());
  REQUIRE(WaitFor([&] { return Has(c, kube::kJobSets, "new"); }));
  CHECK(Has(c, kube::kConfigMaps, "new-runtime-snapshot"));
  // The listed TrainJob waits for every cache: its JobSet may exist unseen.
  std::this_thread::sleep_for(200ms);
  CHECK_FALSE(Has(c, kube::kJobSets, "listed"));
  CHECK_FALSE(Has(c, kube::kConfigMaps, "listed-runtime-snapshot"));

  jobsets.Release();
  CHECK(WaitFor([&] { return Has(c, kube::kJobSets, "listed"); }));
}

TEST_CASE("a JobSet CRD not served at start: not ready and nothing served until every list",
          "[manager]") {
  kube::testing::FakeClient c;  // discovery serves nothing (as when JobSet is installed later)
  c.Seed(kube::kClusterTrainingRuntimes, Runtime());
  HeldLists jobsets(c, kube::kJobSets);
  Running manager(c);
  REQUIRE(c.Create(kube::kTrainJobs, "team", TrainJob("new", false)).ok());
  std::this_thread::sleep_for(300ms);
  CHECK_FALSE(manager.Ready().ok());
  CHECK_FALSE(Has(c, kube::kJobSets, "new"));
  jobsets.Release();
  CHECK(WaitFor([&] { return manager.Ready().ok() && Has(c, kube::kJobSets, "new"); }));
}

TEST_CASE("while the JobSets still list, an existing JobSet is read live, not applied again",
          "[manager]") {
  kube::testing::FakeClient c;
  c.Serve(kube::kJobSets, "JobSet");
  c.Seed(kube::kClusterTrainingRuntimes, Runtime());
  {
    // A first run converges the TrainJob.
    c.Seed(kube::kTrainJobs, TrainJob("done", true));
    Running first(c);
    REQUIRE(WaitFor([&] { return Has(c, kube::kJobSets, "done"); }));
    Settled();
  }
  auto rv = [&](const kube::GroupVersionResource& gvr, const std::string& name) {
    StatusOr<json::Value> obj = c.Get(gvr, "team", name);
    return std::string(obj->Find("metadata")->Find("resourceVersion")->AsString());
  };
  const std::string jobset_rv = rv(kube::kJobSets, "done");
  const std::string snapshot_rv = rv(kube::kConfigMaps, "done-runtime-snapshot");
  HeldLists jobsets(c, kube::kJobSets);
  Running second(c);
  REQUIRE(WaitFor([&] { return second.Ready().ok(); }));
  // A live change of the TrainJob (a label) while the JobSets list: its objects are up to date,
  // which only the apiserver can tell yet.
  const int64_t before = Passes();
  json::Value tj = *c.Get(kube::kTrainJobs, "team", "done");
  tj["metadata"]["labels"].Set("touched", "yes");
  REQUIRE(c.Update(kube::kTrainJobs, "team", tj).ok());
  REQUIRE(WaitFor([&] { return Passes() > before; }));
  Settled();
  CHECK(rv(kube::kJobSets, "done") == jobset_rv);
  CHECK(rv(kube::kConfigMaps, "done-runtime-snapshot") == snapshot_rv);
}

// The runtime's finalizers as stored, or nullopt when the runtime is gone.
std::optional<std::vector<std::string>> Finalizers(kube::testing::FakeClient& c) {
  StatusOr<json::Value> rt = c.Get(kube::kClusterTrainingRuntimes, "", "torch");
  if (!rt.ok()) return std::nullopt;
  std::vector<std::string> out;
  const json::Value* fs = (*rt)["metadata"].Find("finalizers");
  if (fs != nullptr && fs->IsArray()) {
    for (const json::Value& f : fs->elements()) out.push_back(f.AsString());
  }
  return out;
}

const std::vector<std::string> kInUse = {"trainer.kubeflow.org/resource-in-use"};

TEST_CASE("--protect-runtimes-in-use: TrainJob events keep the runtime's finalizer", "[manager]") {
  kube::testing::FakeClient c;
  c.Seed(kube::kClusterTrainingRuntimes, Runtime());
  Options o;
  o.protect_runtimes_in_use = true;
  Running manager(c, o);
  c.Seed(kube::kTrainJobs, TrainJob("first", true));
  c.Seed(kube::kTrainJobs, TrainJob("second", true));
  REQUIRE(WaitFor([&] { return Finalizers(c) == kInUse; }));
  REQUIRE(c.Delete(kube::kTrainJobs, "team", "first").ok());
  std::this_thread::sleep_for(200ms);
  CHECK(Finalizers(c) == kInUse);  // "second" still uses it
  REQUIRE(c.Delete(kube::kTrainJobs, "team", "second").ok());
  CHECK(WaitFor([&] { return Finalizers(c) == std::vector<std::string>{}; }));
}

TEST_CASE("without --protect-runtimes-in-use a used runtime gets no finalizer", "[manager]") {
  kube::testing::FakeClient c;
  c.Seed(kube::kClusterTrainingRuntimes, Runtime());
  Running manager(c);
  c.Seed(kube::kTrainJobs, TrainJob("user", true));
  REQUIRE(WaitFor([&] { return Has(c, kube::kJobSets, "user"); }));
  Settled();
  CHECK(Finalizers(c) == std::vector<std::string>{});
}

}  // namespace
}  // namespace trainer::controller
