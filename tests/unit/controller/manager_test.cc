// The Manager's wiring, on an in-memory apiserver (kube::testing::FakeClient): its informers and
// event handlers come from the plugins' declared watches, so a TrainJob gets its objects, a
// deleted owned object comes back, and the CoScheduling requeues reach suspended TrainJobs; the
// watches of a kind that is not installed are skipped; --protect-runtimes-in-use wires TrainJob
// events to the runtime controllers.
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
