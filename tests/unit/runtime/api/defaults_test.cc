// Tests of runtime/api/defaults.h: the runtimePatches time table of upstream's TrainJob defaulter
// (cases named after upstream's integration and e2e tests), the CRD structural defaults, and the
// runtime registry key.
#include "runtime/api/defaults.h"

#include <catch2/catch.hpp>

#include "runtime/api/codec.h"
#include "tests/unit/runtime/api/test_util.h"

namespace trainer::api {
namespace {

using testing::J;
using testing::ReadYamlFile;

constexpr char kNow[] = "2026-01-02T03:04:05Z";
constexpr char kUserTime[] = "2026-01-02T02:04:05Z";
constexpr char kEarlier[] = "2026-01-01T00:00:00Z";

RuntimePatch Patch(std::string manager, std::optional<std::string> time = std::nullopt,
                   std::string_view zone = "") {
  RuntimePatch p;
  p.manager = std::move(manager);
  p.time = std::move(time);
  if (!zone.empty()) {
    p.training_runtime_spec = J(R"({"template": {"spec": {"replicatedJobs": [{"name": "node",
        "template": {"spec": {"template": {"spec": {"nodeSelector": {"zone": ")" +
                                std::string(zone) + R"("}}}}}}]}}})");
  }
  return p;
}

TrainJob JobWith(std::vector<RuntimePatch> patches) {
  TrainJob job;
  job.metadata.name = "tj";
  job.spec.runtime_ref.name = "torch-distributed";
  job.spec.runtime_patches = std::move(patches);
  return job;
}

std::vector<RuntimePatch> Patches(std::initializer_list<RuntimePatch*> ps) {
  std::vector<RuntimePatch> out;
  for (RuntimePatch* p : ps) out.push_back(std::move(*p));
  return out;
}

TEST_CASE("Should set Time on each RuntimePatch when creating a TrainJob") {
  RuntimePatch a = Patch("acme.io/manager-one"), b = Patch("acme.io/manager-two");
  TrainJob job = JobWith(Patches({&a, &b}));
  DefaultRuntimePatchTimes(job, nullptr, kNow);
  CHECK(job.spec.runtime_patches[0].time == kNow);
  CHECK(job.spec.runtime_patches[1].time == kNow);
}

TEST_CASE("should preserve user-provided manager fields") {
  RuntimePatch one = Patch("test.io/manager-one", kUserTime, "a");
  RuntimePatch kueue = Patch("kueue.k8s.io/manager", std::nullopt, "b");
  TrainJob job = JobWith(Patches({&one, &kueue}));
  DefaultRuntimePatchTimes(job, nullptr, kNow);
  REQUIRE(job.spec.runtime_patches.size() == 2);
  CHECK(job.spec.runtime_patches[0].manager == "test.io/manager-one");
  CHECK(job.spec.runtime_patches[0].time == kUserTime);
  CHECK(job.spec.runtime_patches[1].manager == "kueue.k8s.io/manager");
  CHECK(job.spec.runtime_patches[1].time == kNow);
}

TEST_CASE("should update Time only for the changed patch on update") {
  // As stored after creation: both patches stamped.
  RuntimePatch unchanged_old = Patch("test.io/unchanged", kEarlier, "keep");
  RuntimePatch will_change_old = Patch("test.io/will-change", kUserTime, "old");
  const TrainJob old = JobWith(Patches({&unchanged_old, &will_change_old}));

  // The client changes the second patch (keeping the time it read) and adds two patches.
  RuntimePatch unchanged = Patch("test.io/unchanged", kEarlier, "keep");
  RuntimePatch will_change = Patch("test.io/will-change", kUserTime, "new");
  RuntimePatch new_no_time = Patch("test.io/new-no-time");
  RuntimePatch new_with_time = Patch("test.io/new-with-time", kEarlier);
  TrainJob job = JobWith(Patches({&unchanged, &will_change, &new_no_time, &new_with_time}));
  DefaultRuntimePatchTimes(job, &old, kNow);

  REQUIRE(job.spec.runtime_patches.size() == 4);
  CHECK(job.spec.runtime_patches[0].time == kEarlier);  // unchanged: preserved
  CHECK(job.spec.runtime_patches[1].time == kNow);      // changed: client time replaced
  CHECK(job.spec.runtime_patches[2].time == kNow);      // new without time: stamped
  CHECK(job.spec.runtime_patches[3].time == kEarlier);  // new with time: kept
}

TEST_CASE("an unchanged patch gets the old time even when the client sends another") {
  RuntimePatch old_patch = Patch("test.io/p", kEarlier, "z");
  const TrainJob old = JobWith(Patches({&old_patch}));
  SECTION("client time differs") {
    RuntimePatch p = Patch("test.io/p", kUserTime, "z");
    TrainJob job = JobWith(Patches({&p}));
    DefaultRuntimePatchTimes(job, &old, kNow);
    CHECK(job.spec.runtime_patches[0].time == kEarlier);
  }
  SECTION("client dropped the time") {
    RuntimePatch p = Patch("test.io/p", std::nullopt, "z");
    TrainJob job = JobWith(Patches({&p}));
    DefaultRuntimePatchTimes(job, &old, kNow);
    CHECK(job.spec.runtime_patches[0].time == kEarlier);
  }
  SECTION("the old patch had no time: it stays unset") {
    RuntimePatch untimed = Patch("test.io/p", std::nullopt, "z");
    const TrainJob old_untimed = JobWith(Patches({&untimed}));
    RuntimePatch p = Patch("test.io/p", kUserTime, "z");
    TrainJob job = JobWith(Patches({&p}));
    DefaultRuntimePatchTimes(job, &old_untimed, kNow);
    CHECK_FALSE(job.spec.runtime_patches[0].time);
  }
}

TEST_CASE("semantic equality ignores member order, nulls, empty lists and number spelling") {
  RuntimePatch old_patch;
  old_patch.manager = "test.io/p";
  old_patch.time = kEarlier;
  old_patch.training_runtime_spec = J(R"({"template": {"spec": {"replicatedJobs": [
      {"name": "node", "template": {"spec": {"template": {"spec": {
        "terminationGracePeriodSeconds": 30, "nodeSelector": {"a": "1"}}}}}}]}}})");
  const TrainJob old = JobWith(Patches({&old_patch}));

  RuntimePatch same;
  same.manager = "test.io/p";
  same.training_runtime_spec = J(R"({"template": {"metadata": null, "spec": {"replicatedJobs": [
      {"template": {"spec": {"template": {"spec": {"nodeSelector": {"a": "1"},
        "terminationGracePeriodSeconds": 30.0, "tolerations": []}}}}, "name": "node"}]}}})");
  TrainJob job = JobWith(Patches({&same}));
  DefaultRuntimePatchTimes(job, &old, kNow);
  CHECK(job.spec.runtime_patches[0].time == kEarlier);

  RuntimePatch different;
  different.manager = "test.io/p";
  different.training_runtime_spec = J(R"({"template": {"spec": {"replicatedJobs": [
      {"name": "node", "template": {"spec": {"template": {"spec": {
        "terminationGracePeriodSeconds": 31, "nodeSelector": {"a": "1"}}}}}}]}}})");
  TrainJob changed = JobWith(Patches({&different}));
  DefaultRuntimePatchTimes(changed, &old, kNow);
  CHECK(changed.spec.runtime_patches[0].time == kNow);
}

TEST_CASE("a new manager on update keeps a client time and stamps a missing one") {
  const TrainJob old = JobWith({});
  RuntimePatch with = Patch("test.io/with", kUserTime), without = Patch("test.io/without");
  TrainJob job = JobWith(Patches({&with, &without}));
  DefaultRuntimePatchTimes(job, &old, kNow);
  CHECK(job.spec.runtime_patches[0].time == kUserTime);
  CHECK(job.spec.runtime_patches[1].time == kNow);
}

TEST_CASE("the stamped times reach the encoded TrainJob") {
  StatusOr<TrainJob> job = DecodeTrainJob(ReadYamlFile("examples/trainjobs/jax-distributed.yaml"));
  REQUIRE(job.ok());
  DefaultRuntimePatchTimes(*job, nullptr, kNow);
  CHECK(EncodeTrainJob(*job)["spec"]["runtimePatches"].at(0)["time"].AsString() == kNow);
}

TEST_CASE("ApplySchemaDefaults fills the TrainJob CRD defaults only where unset") {
  TrainJob job = JobWith({});
  ApplySchemaDefaults(job);
  CHECK(job.spec.suspend == false);
  CHECK(job.spec.managed_by == "trainer.kubeflow.org/trainjob-controller");
  CHECK(job.spec.runtime_ref.api_group == "trainer.kubeflow.org");
  CHECK(job.spec.runtime_ref.kind == "ClusterTrainingRuntime");

  TrainJob set = JobWith({});
  set.spec.suspend = true;
  set.spec.managed_by = "kueue.x-k8s.io/multikueue";
  set.spec.runtime_ref.api_group = "";
  set.spec.runtime_ref.kind = "TrainingRuntime";
  ApplySchemaDefaults(set);
  CHECK(set.spec.suspend == true);
  CHECK(set.spec.managed_by == "kueue.x-k8s.io/multikueue");
  CHECK(set.spec.runtime_ref.api_group == "");
  CHECK(set.spec.runtime_ref.kind == "TrainingRuntime");
}

TEST_CASE("ApplyRuntimeSchemaDefaults fills the runtime CRD defaults") {
  StatusOr<TrainingRuntime> rt = DecodeTrainingRuntime(J(R"({
    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
    "metadata": {"name": "r", "namespace": "ns"},
    "spec": {
      "mlPolicy": {"numNodes": 2, "mpi": {}},
      "podGroupPolicy": {"coscheduling": {}, "volcano": {"networkTopology": {}}},
      "template": {"spec": {
        "failurePolicy": {"maxRestarts": 3},
        "volumeClaimPolicies": [{"templates": [], "retentionPolicy": {}}],
        "replicatedJobs": [
          {"name": "launcher", "template": {"spec": {"template": {"spec": {
            "containers": [{"name": "node", "ports": [{"containerPort": 22},
                                                       {"containerPort": 53, "protocol": "UDP"}]}]}}}}},
          {"name": "node", "replicas": 3, "groupName": "workers", "template": {}}]}}}})"));
  REQUIRE(rt.ok());
  ApplyRuntimeSchemaDefaults(*rt);
  const MPIMLPolicySource& mpi = *rt->spec.ml_policy->mpi;
  CHECK(mpi.num_proc_per_node == 1);
  CHECK(mpi.mpi_implementation == "OpenMPI");
  CHECK(mpi.ssh_auth_mount_path == "/root/.ssh");
  CHECK(mpi.run_launcher_as_node == false);
  CHECK(rt->spec.pod_group_policy->coscheduling->schedule_timeout_seconds == 60);
  CHECK(rt->spec.pod_group_policy->volcano->network_topology->mode == "hard");
  CHECK(rt->spec.pod_group_policy->volcano->network_topology->highest_tier_allowed == 1);
  REQUIRE_JSON_EQ(rt->spec.template_, J(R"({"spec": {
        "failurePolicy": {"maxRestarts": 3, "restartStrategy": "Recreate"},
        "volumeClaimPolicies": [{"templates": [], "retentionPolicy": {"whenDeleted": "Delete"}}],
        "replicatedJobs": [
          {"name": "launcher", "groupName": "default", "replicas": 1,
           "template": {"spec": {"template": {"spec": {
            "containers": [{"name": "node", "ports": [{"containerPort": 22, "protocol": "TCP"},
                                                       {"containerPort": 53, "protocol": "UDP"}]}]}}}}},
          {"name": "node", "replicas": 3, "groupName": "workers", "template": {}}]}})"));
}

TEST_CASE("ApplyRuntimeSchemaDefaults on flux and on the shipped deepspeed runtime") {
  StatusOr<TrainingRuntime> flux = DecodeTrainingRuntime(J(R"({
    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
    "spec": {"mlPolicy": {"flux": {}}}})"));
  REQUIRE(flux.ok());
  ApplyRuntimeSchemaDefaults(*flux);
  CHECK(flux->spec.ml_policy->flux->num_proc_per_node == 1);

  StatusOr<TrainingRuntime> ds =
      DecodeTrainingRuntime(ReadYamlFile("examples/runtimes/deepspeed-distributed.yaml"));
  REQUIRE(ds.ok());
  ApplyRuntimeSchemaDefaults(*ds);
  // Explicit values stay; the template gains groupName/replicas.
  CHECK(ds->spec.ml_policy->mpi->ssh_auth_mount_path == "/home/mpiuser/.ssh");
  CHECK(ds->spec.ml_policy->mpi->run_launcher_as_node == true);
  const json::Value& node = ds->spec.template_["spec"]["replicatedJobs"].at(0);
  CHECK(node.Find("groupName")->AsString() == "default");
  CHECK(node.Find("replicas")->AsInt() == 1);
}

TEST_CASE("RuntimeRegistryKey is GroupKind.String()") {
  RuntimeRef ref;
  ref.kind = "ClusterTrainingRuntime";
  ref.api_group = "trainer.kubeflow.org";
  CHECK(RuntimeRegistryKey(ref) == "ClusterTrainingRuntime.trainer.kubeflow.org");
  ref.kind = "TrainingRuntime";
  CHECK(RuntimeRegistryKey(ref) == "TrainingRuntime.trainer.kubeflow.org");
  ref.api_group = "";
  CHECK(RuntimeRegistryKey(ref) == "TrainingRuntime");
  ref.api_group.reset();
  CHECK(RuntimeRegistryKey(ref) == "TrainingRuntime");
  ref.kind = "Foo";
  ref.api_group = "trainer.kubeflow.org";
  CHECK(RuntimeRegistryKey(ref) == "Foo.trainer.kubeflow.org");
}

}  // namespace
}  // namespace trainer::api
