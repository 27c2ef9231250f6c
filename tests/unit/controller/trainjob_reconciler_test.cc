// Unit tests of the TrainJob reconcile pass against an in-memory cluster and a fake runtime that
// behaves like upstream's JobSet plugin (build a JobSet unless it runs; copy JobSet conditions
// and replicatedJobsStatus into the status).
#include "controller/trainjob_reconciler.h"

#include <catch2/catch.hpp>
#include <set>

#include "common/kube/meta.h"
#include "runtime/api/labels.h"
#include "runtime/framework/trainjob.h"
#include "tests/unit/controller/fake_cluster.h"

namespace trainer::controller {
namespace {

using testing::FakeCluster;
using Clock = std::chrono::system_clock;

json::Value MustParse(std::string_view text) {
  StatusOr<json::Value> v = json::Parse(text);
  REQUIRE(v.ok());
  return std::move(*v);
}

json::Value TrainJob(std::string_view name, std::string_view extra_spec = "") {
  std::string text = R"({"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob",
    "metadata":{"name":")" +
                     std::string(name) + R"(","namespace":"ns","uid":"uid-)" + std::string(name) +
                     R"(","creationTimestamp":"2026-01-01T00:00:00Z"},
    "spec":{"runtimeRef":{"name":"torch","apiGroup":"trainer.kubeflow.org",
            "kind":"ClusterTrainingRuntime"})" +
                     std::string(extra_spec) + "}}";
  return MustParse(text);
}

const char* const kCTRKey = "ClusterTrainingRuntime.trainer.kubeflow.org";

// Builds a snapshot ConfigMap (when absent) and a JobSet (unless it exists and neither it nor the
// TrainJob is suspended), like runtime/core + the JobSet plugin.
class FakeRuntime final : public core::Runtime {
 public:
  explicit FakeRuntime(FakeCluster& cluster) : cluster_(cluster) {}
  Status build_error;
  int new_objects_calls = 0;

  StatusOr<std::vector<json::Value>> NewObjects(const api::TrainJob& job) override {
    ++new_objects_calls;
    if (!build_error.ok()) return build_error;
    std::vector<json::Value> out;
    const std::string& ns = job.metadata.namespace_;
    const std::string& name = job.metadata.name;
    json::Value owner = MustParse(R"([{"apiVersion":"trainer.kubeflow.org/v1alpha1",
        "kind":"TrainJob","controller":true,"blockOwnerDeletion":true}])");
    owner.at(0).Set("name", name);
    owner.at(0).Set("uid", job.metadata.uid);
    if (cluster_.Find("ConfigMap", ns, name + "-runtime-snapshot") == nullptr) {
      json::Value cm = MustParse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{},
                                     "data":{"runtime":"kind: ClusterTrainingRuntime\n"}})");
      cm["metadata"].Set("name", name + "-runtime-snapshot");
      cm["metadata"].Set("namespace", ns);
      cm["metadata"].Set("ownerReferences", owner.Clone());
      out.push_back(std::move(cm));
    }
    bool suspend = job.spec.suspend.value_or(false);
    if (const json::Value* live = cluster_.Find("JobSet", ns, name)) {
      const json::Value* s = live->Find("spec") ? live->Find("spec")->Find("suspend") : nullptr;
      if (!suspend && !(s != nullptr && s->AsBool())) return out;
    }
    json::Value js = MustParse(R"({"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet",
        "metadata":{},"spec":{"replicatedJobs":[{"name":"node","replicas":1,
        "template":{"spec":{"parallelism":2,"completions":2,"template":{"spec":{
        "containers":[{"name":"node","image":"pytorch"}]}}}}}]}})");
    js["metadata"].Set("name", name);
    js["metadata"].Set("namespace", ns);
    js["metadata"].Set("ownerReferences", std::move(owner));
    js["spec"].Set("suspend", suspend);
    out.push_back(std::move(js));
    return out;
  }

  StatusOr<std::optional<api::TrainJobStatus>> TrainJobStatus(const api::TrainJob& job) override {
    json::Value* js = cluster_.Find("JobSet", job.metadata.namespace_, job.metadata.name);
    if (js == nullptr) {
      if (framework::IsTrainJobFinished(job)) return std::optional<api::TrainJobStatus>();
      return NotFoundError("jobsets.jobset.x-k8s.io \"" + job.metadata.name + "\" not found");
    }
    api::TrainJobStatus st = api::Clone(job.status);
    const json::Value* status = js->Find("status");
    if (status != nullptr) {
      if (const json::Value* conds = status->Find("conditions")) {
        for (const json::Value& c : conds->elements()) {
          if (c.Find("status")->AsString() != "True") continue;
          std::string type = c.Find("type")->AsString();
          if (type != "Completed" && type != "Failed") continue;
          api::Condition out;
          out.type = type == "Completed" ? "Complete" : "Failed";
          out.status = "True";
          out.reason = c.Find("reason")->AsString();
          out.message = c.Find("message")->AsString();
          out.last_transition_time = c.Find("lastTransitionTime")->AsString();
          framework::SetStatusCondition(st.conditions, out, nullptr);
        }
      }
    }
    st.jobs_status.clear();
    if (status != nullptr) {
      if (const json::Value* rjs = status->Find("replicatedJobsStatus")) {
        for (const json::Value& r : rjs->elements()) {
          api::JobStatus j;
          j.name = r.Find("name")->AsString();
          if (const json::Value* v = r.Find("ready")) j.ready = static_cast<int32_t>(v->AsInt());
          if (const json::Value* v = r.Find("active")) j.active = static_cast<int32_t>(v->AsInt());
          st.jobs_status.push_back(j);
        }
      }
    }
    return std::optional<api::TrainJobStatus>(std::move(st));
  }
  StatusOr<framework::Info> RuntimeInfo(api::TrainJob&, const api::TrainingRuntimeSpec&) override {
    return UnimplementedError("not used by the controller");
  }
  std::vector<framework::Watch> Watches() const override { return {}; }
  field::ValidationResult ValidateObjects(const api::TrainJob*, const api::TrainJob&) override {
    return {};
  }

 private:
  FakeCluster& cluster_;
};

struct Fixture {
  FakeCluster cluster;
  FakeRuntime runtime{cluster};
  OverlayReader overlay{cluster};
  kube::EventRecorder events{cluster, kTrainJobReportingController, "test"};
  Clock::time_point now = *kube::ParseTime("2026-01-01T00:00:30Z");
  ReconcilerOptions options;

  TrainJobReconciler Make() {
    TrainJobReconciler::Deps deps;
    deps.reader = &overlay;
    deps.overlay = &overlay;
    deps.writer = &cluster;
    deps.runtimes = [this](std::string_view key) -> core::Runtime* {
      return key == kCTRKey ? &runtime : nullptr;
    };
    deps.events = &events;
    deps.now = [this] { return now; };
    return TrainJobReconciler(std::move(deps), options);
  }
  ReconcileResult Run(std::string_view name = "tj") { return Make().Reconcile("ns", name); }
  json::Value& Job(std::string_view name = "tj") { return *cluster.Find("TrainJob", "ns", name); }
  const json::Value* Condition(std::string_view type, std::string_view name = "tj") {
    const json::Value* st = Job(name).Find("status");
    const json::Value* conds = st != nullptr ? st->Find("conditions") : nullptr;
    return conds != nullptr ? json::FindByKey(*conds, "type", type) : nullptr;
  }
  void SetJobSetStatus(std::string_view status_json) {
    cluster.Find("JobSet", "ns", "tj")->Set("status", MustParse(status_json));
  }
};

TEST_CASE("new TrainJob: snapshot and JobSet applied by trainer with force, status untouched",
          "[reconciler]") {
  Fixture f;
  f.cluster.Put(TrainJob("tj"));
  ReconcileResult r = f.Run();
  REQUIRE(r.error.ok());
  CHECK_FALSE(r.requeue_after.has_value());
  REQUIRE(f.cluster.Count("apply") == 2);
  // Applied concurrently: both, in either order.
  std::set<std::string> resources{f.cluster.writes()[0].resource, f.cluster.writes()[1].resource};
  CHECK(resources == std::set<std::string>{"configmaps", "jobsets"});
  CHECK(f.cluster.last_apply_options().field_manager == "trainer");
  CHECK(f.cluster.last_apply_options().force);
  const json::Value* js = f.cluster.Find("JobSet", "ns", "tj");
  REQUIRE(js != nullptr);
  CHECK(js->Find("metadata")->Find("annotations")->Has(api::kAnnotationAppliedHash));
  // No conditions in the normal path (the SDK derives Running from the pods only then).
  CHECK(f.cluster.Count("patch-status") == 0);
  CHECK_FALSE(f.Job().Has("status"));
}

TEST_CASE("second pass over a converged TrainJob writes nothing", "[reconciler]") {
  Fixture f;
  f.cluster.Put(TrainJob("tj", R"(,"suspend":true)"));
  REQUIRE(f.Run().error.ok());
  size_t writes = f.cluster.writes().size();
  // Suspended: the runtime rebuilds the JobSet on every pass; its hash matches the live copy.
  REQUIRE(f.Run().error.ok());
  REQUIRE(f.Run().error.ok());
  CHECK(f.cluster.writes().size() == writes);
  CHECK(f.runtime.new_objects_calls == 3);
}

TEST_CASE("a suspended JobSet someone else edited is applied again", "[reconciler]") {
  Fixture f;
  f.cluster.Put(TrainJob("tj", R"(,"suspend":true)"));
  REQUIRE(f.Run().error.ok());
  json::Value* js = f.cluster.Find("JobSet", "ns", "tj");
  js->Find("spec")->Find("replicatedJobs")->at(0).Set("replicas", 3);
  js->Find("metadata")
      ->Find("managedFields")
      ->PushBack(MustParse(R"({"manager":"kubectl-edit","operation":"Update"})"));
  size_t applies = f.cluster.Count("apply");
  REQUIRE(f.Run().error.ok());
  CHECK(f.cluster.Count("apply") == applies + 1);
  CHECK(f.cluster.Find("JobSet", "ns", "tj")
            ->Find("spec")
            ->Find("replicatedJobs")
            ->at(0)
            .Find("replicas")
            ->AsInt() == 1);
}

TEST_CASE("a status-subresource writer does not make the JobSet stale", "[reconciler]") {
  json::Value live =
      MustParse(R"({"metadata":{"annotations":{"trainer.kubeflow.org/applied-hash":"h"},
      "managedFields":[{"manager":"trainer","operation":"Apply"},
                       {"manager":"jobset","operation":"Update","subresource":"status"}]}})");
  CHECK(UpToDate(live, "h"));
  CHECK_FALSE(UpToDate(live, "other"));
  live["metadata"]["managedFields"].PushBack(
      MustParse(R"({"manager":"kueue","operation":"Update"})"));
  CHECK_FALSE(UpToDate(live, "h"));
}

TEST_CASE("JobSet status flows into the TrainJob status", "[reconciler]") {
  Fixture f;
  f.cluster.Put(TrainJob("tj"));
  REQUIRE(f.Run().error.ok());
  f.SetJobSetStatus(R"({"replicatedJobsStatus":[{"name":"node","ready":1,"active":2}]})");
  REQUIRE(f.Run().error.ok());
  const json::Value* jobs = f.Job().Find("status")->Find("jobsStatus");
  REQUIRE(jobs != nullptr);
  // Every counter is written, zeros included (the Python SDK reads all six).
  CHECK(json::WriteCanonical(jobs->at(0)) ==
        R"({"active":2,"failed":0,"name":"node","ready":1,"succeeded":0,"suspended":0})");
  CHECK(f.Condition("Complete") == nullptr);

  f.SetJobSetStatus(
      R"({"conditions":[{"type":"Completed","status":"True","reason":"AllJobsCompleted",
      "message":"jobset completed successfully","lastTransitionTime":"2026-01-01T00:10:00Z"}],
      "replicatedJobsStatus":[{"name":"node","ready":0,"active":0}]})");
  REQUIRE(f.Run().error.ok());
  const json::Value* c = f.Condition("Complete");
  REQUIRE(c != nullptr);
  CHECK(c->Find("reason")->AsString() == "AllJobsCompleted");
  CHECK(c->Find("lastTransitionTime")->AsString() == "2026-01-01T00:10:00Z");
  // Finished: no more applies, status no longer changes.
  size_t writes = f.cluster.writes().size();
  REQUIRE(f.Run().error.ok());
  CHECK(f.cluster.writes().size() == writes);
}

TEST_CASE("Failed is terminal: a vanished JobSet is not re-created", "[reconciler]") {
  Fixture f;
  f.cluster.Put(TrainJob("tj"));
  REQUIRE(f.Run().error.ok());
  f.SetJobSetStatus(R"({"conditions":[{"type":"Failed","status":"True","reason":"FailedJobs",
      "message":"jobset failed due to one or more job failures",
      "lastTransitionTime":"2026-01-01T00:10:00Z"}]})");
  REQUIRE(f.Run().error.ok());
  REQUIRE(f.Condition("Failed") != nullptr);
  f.cluster.Remove("JobSet", "ns", "tj");
  size_t applies = f.cluster.Count("apply");
  REQUIRE(f.Run().error.ok());
  CHECK(f.cluster.Count("apply") == applies);
  CHECK(f.cluster.Find("JobSet", "ns", "tj") == nullptr);
  CHECK(f.Condition("Failed")->Find("reason")->AsString() == "FailedJobs");
}

TEST_CASE("an owned object's deletion: the TrainJob is confirmed with the apiserver first",
          "[reconciler]") {
  Fixture f;
  f.cluster.Put(TrainJob("tj"));
  REQUIRE(f.Run().error.ok());
  // The JobSet informer relisted first: the JobSet is gone, the TrainJob cache is stale.
  f.cluster.Remove("JobSet", "ns", "tj");
  f.cluster.Remove("ConfigMap", "ns", "tj-runtime-snapshot");
  int live_reads = 0;
  Status live_answer = NotFoundError("trainjobs.trainer.kubeflow.org \"tj\" not found");
  auto make = [&] {
    TrainJobReconciler::Deps deps;
    deps.reader = &f.overlay;
    deps.overlay = &f.overlay;
    deps.writer = &f.cluster;
    deps.runtimes = [&f](std::string_view key) -> core::Runtime* {
      return key == kCTRKey ? &f.runtime : nullptr;
    };
    deps.now = [&f] { return f.now; };
    deps.get_live = [&](std::string_view, std::string_view) -> StatusOr<json::Value> {
      ++live_reads;
      if (!live_answer.ok()) return live_answer;
      return TrainJob("tj");
    };
    return std::make_unique<TrainJobReconciler>(std::move(deps), f.options);
  };
  std::unique_ptr<TrainJobReconciler> r = make();
  size_t writes = f.cluster.writes().size();

  SECTION("deleted there: nothing is re-created") {
    r->ConfirmNextPass("ns/tj");
    REQUIRE(r->Reconcile("ns", "tj").error.ok());
    CHECK(live_reads == 1);
    CHECK(f.cluster.writes().size() == writes);
    CHECK(f.cluster.Find("JobSet", "ns", "tj") == nullptr);
    // The mark is spent: a later pass (the TrainJob really exists) reads the cache only.
    REQUIRE(r->Reconcile("ns", "tj").error.ok());
    CHECK(live_reads == 1);
    CHECK(f.cluster.Find("JobSet", "ns", "tj") != nullptr);
  }
  SECTION("still there: the objects are applied again") {
    live_answer = OkStatus();
    r->ConfirmNextPass("ns/tj");
    REQUIRE(r->Reconcile("ns", "tj").error.ok());
    CHECK(live_reads == 1);
    CHECK(f.cluster.Find("JobSet", "ns", "tj") != nullptr);
    CHECK(f.cluster.Find("ConfigMap", "ns", "tj-runtime-snapshot") != nullptr);
  }
  SECTION("the read fails: an error, nothing applied, the next pass reads again") {
    live_answer = UnavailableError("connection refused");
    r->ConfirmNextPass("ns/tj");
    CHECK_FALSE(r->Reconcile("ns", "tj").error.ok());
    CHECK(f.cluster.writes().size() == writes);
    live_answer = NotFoundError("gone");
    REQUIRE(r->Reconcile("ns", "tj").error.ok());
    CHECK(live_reads == 2);
    CHECK(f.cluster.writes().size() == writes);
  }
  SECTION("no mark: no read") {
    REQUIRE(r->Reconcile("ns", "tj").error.ok());
    CHECK(live_reads == 0);
  }
}

TEST_CASE("a TrainJob being deleted: no object is re-created, no confirming read", "[reconciler]") {
  // A foreground deletion: the garbage collector deletes the JobSet and the snapshot while the
  // TrainJob, marked with a deletionTimestamp, waits for them. Applying them again would
  // re-create them for as long as the TrainJob exists, and the deletion would never finish.
  Fixture f;
  f.cluster.Put(TrainJob("tj"));
  REQUIRE(f.Run().error.ok());
  f.Job()["metadata"].Set("deletionTimestamp", "2026-01-01T00:00:20Z");
  f.cluster.Remove("JobSet", "ns", "tj");
  f.cluster.Remove("ConfigMap", "ns", "tj-runtime-snapshot");
  int live_reads = 0;
  TrainJobReconciler::Deps deps;
  deps.reader = &f.overlay;
  deps.overlay = &f.overlay;
  deps.writer = &f.cluster;
  deps.runtimes = [&f](std::string_view key) -> core::Runtime* {
    return key == kCTRKey ? &f.runtime : nullptr;
  };
  deps.now = [&f] { return f.now; };
  deps.get_live = [&](std::string_view, std::string_view) -> StatusOr<json::Value> {
    ++live_reads;
    return f.Job().Clone();
  };
  TrainJobReconciler r(std::move(deps), f.options);
  const size_t writes = f.cluster.writes().size();
  r.ConfirmNextPass("ns/tj");  // as the owned objects' delete events do
  ReconcileResult result = r.Reconcile("ns", "tj");
  CHECK(result.error.ok());  // a missing JobSet is no error for a TrainJob being deleted
  CHECK(live_reads == 0);
  CHECK(f.cluster.writes().size() == writes);
  CHECK(f.cluster.Find("JobSet", "ns", "tj") == nullptr);
  CHECK(f.cluster.Find("ConfigMap", "ns", "tj-runtime-snapshot") == nullptr);
  CHECK(f.runtime.new_objects_calls == 1);
}

TEST_CASE("a TrainJob in a namespace being deleted: nothing is re-created, no confirming read",
          "[reconciler]") {
  // The namespace controller deletes the owned objects (their events start passes) before or
  // after the TrainJobs; every write in the namespace is refused meanwhile.
  Fixture f;
  f.cluster.Put(TrainJob("tj"));  // created 2026-01-01T00:00:00Z
  REQUIRE(f.Run().error.ok());
  f.cluster.Remove("JobSet", "ns", "tj");
  f.cluster.Remove("ConfigMap", "ns", "tj-runtime-snapshot");
  int live_reads = 0;
  TrainJobReconciler::Deps deps;
  deps.reader = &f.overlay;
  deps.overlay = &f.overlay;
  deps.writer = &f.cluster;
  deps.runtimes = [&f](std::string_view key) -> core::Runtime* {
    return key == kCTRKey ? &f.runtime : nullptr;
  };
  deps.now = [&f] { return f.now; };
  deps.get_live = [&](std::string_view, std::string_view) -> StatusOr<json::Value> {
    ++live_reads;
    return f.Job().Clone();
  };
  TrainJobReconciler r(std::move(deps), f.options);
  const size_t writes = f.cluster.writes().size();
  auto put_namespace = [&](std::string_view deleted_at) {
    json::Value ns = MustParse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns",
        "creationTimestamp":"2025-12-01T00:00:00Z"}})");
    if (!deleted_at.empty()) ns["metadata"].Set("deletionTimestamp", deleted_at);
    f.cluster.Put(std::move(ns));
  };

  SECTION("deletion began after the TrainJob was created: no writes, no read") {
    put_namespace("2026-01-01T00:00:10Z");
    r.ConfirmNextPass("ns/tj");
    CHECK(r.Reconcile("ns", "tj").error.ok());
    CHECK(live_reads == 0);
    CHECK(f.cluster.writes().size() == writes);
    CHECK(f.cluster.Find("JobSet", "ns", "tj") == nullptr);
  }
  SECTION("a stale cache: a deleted namespace whose name a newer one took is not this one's") {
    // The TrainJob was created when (or after) the cached namespace began to go: it lives in a
    // newer namespace of that name, which the cache has not seen yet.
    put_namespace("2026-01-01T00:00:00Z");
    r.ConfirmNextPass("ns/tj");
    REQUIRE(r.Reconcile("ns", "tj").error.ok());
    CHECK(live_reads == 1);
    CHECK(f.cluster.Find("JobSet", "ns", "tj") != nullptr);
    CHECK(f.cluster.Find("ConfigMap", "ns", "tj-runtime-snapshot") != nullptr);
  }
  SECTION("a live namespace, or none cached: the objects are applied again") {
    put_namespace("");
    r.ConfirmNextPass("ns/tj");
    REQUIRE(r.Reconcile("ns", "tj").error.ok());
    CHECK(live_reads == 1);
    CHECK(f.cluster.Find("JobSet", "ns", "tj") != nullptr);
    f.cluster.Remove("Namespace", "", "ns");
    f.cluster.Remove("JobSet", "ns", "tj");
    REQUIRE(r.Reconcile("ns", "tj").error.ok());
    CHECK(f.cluster.Find("JobSet", "ns", "tj") != nullptr);
  }
}

TEST_CASE("suspend and resume", "[reconciler]") {
  Fixture f;
  f.cluster.Put(TrainJob("tj", R"(,"suspend":true)"));
  REQUIRE(f.Run().error.ok());
  const json::Value* c = f.Condition("Suspended");
  REQUIRE(c != nullptr);
  CHECK(c->Find("status")->AsString() == "True");
  CHECK(c->Find("reason")->AsString() == "Suspended");
  CHECK(c->Find("message")->AsString() == "TrainJob is suspended");
  CHECK(f.cluster.Find("JobSet", "ns", "tj")->Find("spec")->Find("suspend")->AsBool());

  // Same state later: lastTransitionTime does not move.
  f.now += std::chrono::seconds(60);
  REQUIRE(f.Run().error.ok());
  CHECK(f.Condition("Suspended")->Find("lastTransitionTime")->AsString() == "2026-01-01T00:00:30Z");

  f.Job()["spec"].Set("suspend", false);
  REQUIRE(f.Run().error.ok());
  c = f.Condition("Suspended");
  CHECK(c->Find("status")->AsString() == "False");
  CHECK(c->Find("reason")->AsString() == "Resumed");
  CHECK(c->Find("message")->AsString() == "TrainJob is resumed");
  CHECK(c->Find("lastTransitionTime")->AsString() == "2026-01-01T00:01:30Z");
  CHECK_FALSE(f.cluster.Find("JobSet", "ns", "tj")->Find("spec")->Find("suspend")->AsBool());
}

TEST_CASE("activeDeadlineSeconds: requeue until the deadline, then Failed and JobSet deleted",
          "[reconciler]") {
  Fixture f;
  f.cluster.Put(TrainJob("tj", R"(,"activeDeadlineSeconds":60)"));
  ReconcileResult r = f.Run();
  REQUIRE(r.error.ok());
  REQUIRE(r.requeue_after.has_value());
  CHECK(*r.requeue_after == std::chrono::seconds(30));  // created at :00, now :30
  f.now += std::chrono::seconds(31);
  r = f.Run();
  REQUIRE(r.error.ok());
  CHECK_FALSE(r.requeue_after.has_value());
  const json::Value* c = f.Condition("Failed");
  REQUIRE(c != nullptr);
  CHECK(c->Find("reason")->AsString() == "DeadlineExceeded");
  CHECK(c->Find("message")->AsString() == "TrainJob exceeded its active deadline");
  CHECK(f.cluster.Find("JobSet", "ns", "tj") == nullptr);
  CHECK(f.cluster.Count("delete") == 1);
  // And it stays: the next pass neither re-creates the JobSet nor drops the condition.
  REQUIRE(f.Run().error.ok());
  CHECK(f.cluster.Find("JobSet", "ns", "tj") == nullptr);
  CHECK(f.Condition("Failed")->Find("reason")->AsString() == "DeadlineExceeded");
}

TEST_CASE("deadline clock restarts at resume", "[reconciler]") {
  Fixture f;
  f.cluster.Put(TrainJob("tj", R"(,"activeDeadlineSeconds":60,"suspend":true)"));
  REQUIRE_FALSE(f.Run().requeue_after.has_value());  // suspended: no clock
  f.now += std::chrono::seconds(300);
  f.Job()["spec"].Set("suspend", false);
  ReconcileResult r = f.Run();
  REQUIRE(r.requeue_after.has_value());
  CHECK(*r.requeue_after == std::chrono::seconds(60));
  CHECK(f.Condition("Failed") == nullptr);
}

TEST_CASE("managedBy another controller: nothing is written", "[reconciler]") {
  Fixture f;
  f.cluster.Put(TrainJob("tj", R"(,"managedBy":"kueue.x-k8s.io/multikueue","suspend":true)"));
  REQUIRE(f.Run().error.ok());
  CHECK(f.cluster.writes().empty());
  CHECK(f.runtime.new_objects_calls == 0);
}

TEST_CASE("unsupported runtime: Failed condition is written, no retry", "[reconciler]") {
  Fixture f;
  json::Value tj = TrainJob("tj");
  tj["spec"]["runtimeRef"].Set("kind", "Foo");
  f.cluster.Put(std::move(tj));
  ReconcileResult r = f.Run();
  CHECK(r.error.ok());
  const json::Value* c = f.Condition("Failed");
  REQUIRE(c != nullptr);
  CHECK(c->Find("reason")->AsString() == "TrainingRuntimeNotSupported");
  CHECK(c->Find("message")->AsString() == "unsupported runtime: Foo.trainer.kubeflow.org");
}

TEST_CASE("apply of a kind the apiserver does not serve: upstream's no-match text",
          "[reconciler]") {
  Fixture f;
  f.cluster.Put(TrainJob("tj"));
  // What a PATCH to the path of a resource without a CRD gets: a bare 404 page, no Status.
  f.cluster.FailApplies("JobSet",
                        NotFoundError("the server responded with HTTP 404: 404 page not found\n"));
  CHECK_FALSE(f.Run().error.ok());
  const json::Value* c = f.Condition("ResourcesCreationFailed");
  REQUIRE(c != nullptr);
  CHECK(c->Find("reason")->AsString() == "ApplyFailed");
  CHECK(c->Find("message")->AsString() ==
        "JobSet ns/tj: no matches for kind \"JobSet\" in version \"jobset.x-k8s.io/v1alpha2\"");
  // A NotFound the apiserver explains (a Status body) is passed on as it is.
  f.cluster.FailApplies("JobSet", NotFoundError("namespaces \"ns\" not found"));
  CHECK_FALSE(f.Run().error.ok());
  CHECK(f.Condition("ResourcesCreationFailed")->Find("message")->AsString() ==
        "JobSet ns/tj: namespaces \"ns\" not found");
}

TEST_CASE("apply error: event, condition naming the object while it lasts", "[reconciler]") {
  Fixture f;
  f.cluster.Put(TrainJob("tj"));
  f.cluster.FailApplies("JobSet", InvalidError("JobSet.jobset.x-k8s.io \"tj\" is invalid: boom"));
  ReconcileResult r = f.Run();
  CHECK_FALSE(r.error.ok());
  const json::Value* c = f.Condition("ResourcesCreationFailed");
  REQUIRE(c != nullptr);
  CHECK(c->Find("status")->AsString() == "True");
  CHECK(c->Find("reason")->AsString() == "ApplyFailed");
  CHECK(c->Find("message")->AsString() ==
        "JobSet ns/tj: JobSet.jobset.x-k8s.io \"tj\" is invalid: boom");
  CHECK(c->Has("lastTransitionTime"));
  REQUIRE(f.cluster.Count("create") == 1);
  const json::Value& ev = f.cluster.writes()[f.cluster.writes().size() - 2].body;
  CHECK(ev.Find("reason")->AsString() == "TrainJobResourcesCreationFailed");
  CHECK(ev.Find("action")->AsString() == "Reconciling");
  CHECK(ev.Find("type")->AsString() == "Warning");
  CHECK(ev.Find("note")->AsString() ==
        "TrainJob resources reconciliation failed: JobSet.jobset.x-k8s.io \"tj\" is invalid: boom");

  f.cluster.ClearApplyErrors();
  REQUIRE(f.Run().error.ok());
  CHECK(f.Condition("ResourcesCreationFailed") == nullptr);
  // Back to no conditions at all: status itself goes (an empty one is invalid).
  CHECK_FALSE(f.Job().Has("status"));
}

TEST_CASE("the JobSet waits for the objects its pods rely on", "[reconciler]") {
  // Upstream applies in builder order, the JobSet last: a PodGroup (or snapshot, Secret,
  // hostfile) that cannot be written must not leave pods running without it.
  Fixture f;
  f.cluster.Put(TrainJob("tj"));
  f.cluster.FailApplies("ConfigMap", InvalidError("ConfigMap \"tj-runtime-snapshot\" is invalid"));
  CHECK_FALSE(f.Run().error.ok());
  CHECK(f.cluster.Find("JobSet", "ns", "tj") == nullptr);
  REQUIRE(f.Condition("ResourcesCreationFailed") != nullptr);
  CHECK(f.Condition("ResourcesCreationFailed")->Find("message")->AsString() ==
        "ConfigMap ns/tj-runtime-snapshot: ConfigMap \"tj-runtime-snapshot\" is invalid");

  f.cluster.ClearApplyErrors();
  REQUIRE(f.Run().error.ok());
  CHECK(f.cluster.Find("ConfigMap", "ns", "tj-runtime-snapshot") != nullptr);
  CHECK(f.cluster.Find("JobSet", "ns", "tj") != nullptr);
}

TEST_CASE("build error surfaces with reason BuildFailed", "[reconciler]") {
  Fixture f;
  f.cluster.Put(TrainJob("tj"));
  f.runtime.build_error = NotFoundError(
      "not found ClusterTrainingRuntime specified in TrainJob: clustertrainingruntimes.trainer."
      "kubeflow.org \"torch\" not found");
  CHECK_FALSE(f.Run().error.ok());
  const json::Value* c = f.Condition("ResourcesCreationFailed");
  REQUIRE(c != nullptr);
  CHECK(c->Find("reason")->AsString() == "BuildFailed");
  CHECK(c->Find("message")->AsString().rfind("not found ClusterTrainingRuntime", 0) == 0);
}

TEST_CASE("lifecycle conditions only when enabled", "[reconciler]") {
  Fixture f;
  f.options.lifecycle_conditions = true;
  f.cluster.Put(TrainJob("tj"));
  REQUIRE(f.Run().error.ok());
  REQUIRE(f.Condition("Created") != nullptr);
  CHECK(f.Condition("Running") == nullptr);
  f.SetJobSetStatus(R"({"replicatedJobsStatus":[{"name":"node","active":2}]})");
  REQUIRE(f.Run().error.ok());
  REQUIRE(f.Condition("Running") != nullptr);
  CHECK(f.Condition("Running")->Find("status")->AsString() == "True");
}

TEST_CASE("event note truncation follows upstream's %.950v", "[reconciler]") {
  CHECK(CreationFailedNote("short") == "TrainJob resources reconciliation failed: short");
  std::string long_err(1000, 'x');
  std::string note = CreationFailedNote(long_err);
  CHECK(note == "TrainJob resources reconciliation failed: " + std::string(950, 'x') + " ...");
  CHECK(CreationFailedNote(std::string(950, 'y')) ==
        "TrainJob resources reconciliation failed: " + std::string(950, 'y'));
}

TEST_CASE("status merge patch carries only changed fields", "[reconciler]") {
  api::TrainJobStatus a;
  api::TrainJobStatus b;
  CHECK(StatusMergePatch(a, b).IsNull());
  b.jobs_status.push_back(api::JobStatus{.name = "node"});
  CHECK(
      json::WriteCanonical(StatusMergePatch(a, b)) ==
      R"({"status":{"jobsStatus":[{"active":0,"failed":0,"name":"node","ready":0,"succeeded":0,"suspended":0}]}})");
  CHECK(json::WriteCanonical(StatusMergePatch(b, a)) == R"({"status":null})");
  api::TrainJobStatus c = api::Clone(b);
  c.conditions.push_back(api::Condition{.type = "Suspended", .status = "True"});
  CHECK(json::WriteCanonical(StatusMergePatch(c, b)) == R"({"status":{"conditions":null}})");
}

TEST_CASE("JobSet readiness counts ready and succeeded jobs per replicated job", "[reconciler]") {
  json::Value js = MustParse(R"({"spec":{"replicatedJobs":[{"name":"a","replicas":2},{"name":"b"}]},
      "status":{"replicatedJobsStatus":[{"name":"a","ready":1,"succeeded":1},{"name":"b","ready":0}]}})");
  CHECK_FALSE(JobSetAllReady(js));
  js["status"]["replicatedJobsStatus"].at(1).Set("ready", 1);
  CHECK(JobSetAllReady(js));
}

}  // namespace
}  // namespace trainer::controller
