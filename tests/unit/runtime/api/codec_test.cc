// Tests of runtime/api/codec.h: round trips on the examples and on edge cases, strict types with
// exact field paths, SDK-style numbers, quantities, unknown fields, and the status encoding.
#include "runtime/api/codec.h"

#include <catch2/catch.hpp>
#include <string>

#include "runtime/api/labels.h"
#include "tests/unit/runtime/api/test_util.h"

namespace trainer::api {
namespace {

using testing::J;
using testing::ReadYamlFile;
using testing::YamlFiles;

TrainJob MustDecodeTrainJob(const json::Value& doc) {
  StatusOr<TrainJob> job = DecodeTrainJob(doc);
  INFO(job.status().message());
  REQUIRE(job.ok());
  return std::move(job).value();
}

TrainingRuntime MustDecodeRuntime(const json::Value& doc) {
  StatusOr<TrainingRuntime> rt = DecodeTrainingRuntime(doc);
  INFO(rt.status().message());
  REQUIRE(rt.ok());
  return std::move(rt).value();
}

// The error of both decode forms (a document kept, one given away), which must agree.
std::string TrainJobError(std::string_view text) {
  const json::Value kept = J(text);
  StatusOr<TrainJob> job = DecodeTrainJob(kept);
  REQUIRE_FALSE(job.ok());
  CHECK(job.status().code() == StatusCode::kInvalidArgument);
  StatusOr<TrainJob> moved = DecodeTrainJob(J(text));
  REQUIRE_FALSE(moved.ok());
  CHECK(moved.status() == job.status());
  return job.status().message();
}

std::string RuntimeError(std::string_view text) {
  StatusOr<TrainingRuntime> rt = DecodeTrainingRuntime(J(text));
  REQUIRE_FALSE(rt.ok());
  CHECK(rt.status().code() == StatusCode::kInvalidArgument);
  return rt.status().message();
}

// ---- examples ----

TEST_CASE("every example runtime decodes, and its typed fields alone encode the document") {
  const auto files = YamlFiles("examples/runtimes");
  REQUIRE(files.size() == 8);
  for (const std::string& file : files) {
    INFO(file);
    json::Value doc = ReadYamlFile(file);
    TrainingRuntime rt = MustDecodeRuntime(doc);
    CHECK(rt.kind == kClusterTrainingRuntimeKind);
    CHECK(rt.metadata.labels.count(kLabelFramework) == 1);
    REQUIRE_JSON_EQ(EncodeTrainingRuntime(rt), doc);
    // Nothing in the examples is unknown to the typed structs.
    rt.raw = json::Value();
    REQUIRE_JSON_EQ(EncodeTrainingRuntime(rt), doc);
    // Decode -> Encode -> Decode is stable.
    TrainingRuntime again = MustDecodeRuntime(EncodeTrainingRuntime(rt));
    REQUIRE_JSON_EQ(EncodeTrainingRuntime(again), doc);
  }
}

TEST_CASE("every example TrainJob decodes and round-trips") {
  const auto files = YamlFiles("examples/trainjobs");
  REQUIRE(files.size() == 9);
  for (const std::string& file : files) {
    INFO(file);
    TrainJob job = MustDecodeTrainJob(ReadYamlFile(file));
    CHECK_FALSE(job.metadata.name.empty());
    CHECK_FALSE(job.spec.runtime_ref.name.empty());
    const json::Value once = EncodeTrainJob(job);
    TrainJob again = MustDecodeTrainJob(once);
    REQUIRE_JSON_EQ(EncodeTrainJob(again), once);
  }
}

TEST_CASE("the deepspeed runtime decodes its MPI policy") {
  TrainingRuntime rt =
      MustDecodeRuntime(ReadYamlFile("examples/runtimes/deepspeed-distributed.yaml"));
  CHECK(rt.metadata.name == "deepspeed-distributed");
  CHECK(rt.metadata.labels.at(kLabelFramework) == "deepspeed");
  REQUIRE(rt.spec.ml_policy);
  CHECK(rt.spec.ml_policy->num_nodes == 1);
  REQUIRE(rt.spec.ml_policy->mpi);
  CHECK(rt.spec.ml_policy->mpi->num_proc_per_node == 1);
  CHECK(rt.spec.ml_policy->mpi->mpi_implementation == "OpenMPI");
  CHECK(rt.spec.ml_policy->mpi->ssh_auth_mount_path == "/home/mpiuser/.ssh");
  CHECK(rt.spec.ml_policy->mpi->run_launcher_as_node == true);
  CHECK_FALSE(rt.spec.ml_policy->torch);
  CHECK_FALSE(rt.spec.ml_policy->jax);
  const json::Value* jobs = rt.spec.template_["spec"].Find("replicatedJobs");
  REQUIRE(jobs != nullptr);
  REQUIRE(jobs->size() == 2);
  CHECK(jobs->at(1).Find("name")->AsString() == "launcher");
}

TEST_CASE("the torch example TrainJob decodes its trainer with canonical quantities") {
  TrainJob job = MustDecodeTrainJob(ReadYamlFile("examples/trainjobs/torch-distributed.yaml"));
  CHECK(job.metadata.name == "torch-distributed");
  CHECK(job.spec.runtime_ref.name == "torch-distributed");
  CHECK_FALSE(job.spec.runtime_ref.kind);  // left to the CRD default
  REQUIRE(job.spec.trainer);
  CHECK(job.spec.trainer->num_nodes == 2);
  REQUIRE(job.spec.trainer->command);
  CHECK(job.spec.trainer->command->front() == "torchrun");
  // `cpu: 2` (a YAML integer) is stored as the quantity string "2".
  REQUIRE_JSON_EQ(job.spec.trainer->resources_per_node,
                  J(R"({"requests": {"cpu": "2", "memory": "4Gi"},
                        "limits": {"cpu": "2", "memory": "4Gi"}})"));
}

TEST_CASE("a TrainJob with podTemplateOverrides decodes and keeps the field in raw") {
  TrainJob job =
      MustDecodeTrainJob(ReadYamlFile("examples/trainjobs/podtemplateoverrides-legacy.yaml"));
  CHECK(job.spec.runtime_patches.empty());
  const json::Value* overrides = job.raw["spec"].Find("podTemplateOverrides");
  REQUIRE(overrides != nullptr);
  CHECK(overrides->size() == 2);
  CHECK(EncodeTrainJob(job)["spec"].Has("podTemplateOverrides"));
}

// ---- hand-written round trips ----

TEST_CASE("a fully populated TrainJob round-trips") {
  const json::Value doc = J(R"({
    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
    "metadata": {"name": "full", "namespace": "ns", "uid": "u-1", "resourceVersion": "42",
                 "generation": 3, "creationTimestamp": "2026-01-02T03:04:05Z",
                 "labels": {"a": "b"}, "annotations": {"c": "d"}, "finalizers": ["f"]},
    "spec": {
      "runtimeRef": {"name": "torch-distributed", "apiGroup": "trainer.kubeflow.org",
                     "kind": "ClusterTrainingRuntime"},
      "initializer": {
        "dataset": {"storageUri": "hf://a/b", "env": [{"name": "X", "value": "1"}],
                    "secretRef": {"name": "s"}},
        "model": {"storageUri": ""}},
      "trainer": {"image": "img", "command": ["a"], "args": ["b", "c"],
                  "env": [{"name": "E", "value": "v"}], "numNodes": 4,
                  "resourcesPerNode": {"limits": {"nvidia.com/gpu": "1"}},
                  "numProcPerNode": 2},
      "runtimePatches": [{"manager": "acme.io/x", "time": "2026-01-02T03:04:05Z",
                          "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
                            {"name": "node", "template": {"spec": {"template": {"spec": {
                              "nodeSelector": {"k": "v"}}}}}}]}}}}],
      "suspend": true, "activeDeadlineSeconds": 3600,
      "managedBy": "kueue.x-k8s.io/multikueue"},
    "status": {
      "conditions": [{"type": "Complete", "status": "True", "observedGeneration": 3,
                      "lastTransitionTime": "2026-01-02T03:04:05Z",
                      "reason": "AllJobsCompleted", "message": "jobset completed successfully"}],
      "jobsStatus": [{"name": "node", "ready": 0, "succeeded": 4, "failed": 0, "active": 0,
                      "suspended": 0}],
      "trainerStatus": {"progressPercentage": 100, "lastUpdatedTime": "2026-01-02T03:04:05Z"}}
  })");
  TrainJob job = MustDecodeTrainJob(doc);
  CHECK(job.metadata.generation == 3);
  CHECK(job.spec.initializer->dataset->secret_ref == "s");
  CHECK(job.spec.initializer->model->storage_uri == "");
  CHECK(job.spec.trainer->num_proc_per_node == 2);
  CHECK(job.spec.runtime_patches.at(0).time == "2026-01-02T03:04:05Z");
  CHECK(job.spec.suspend == true);
  CHECK(job.spec.active_deadline_seconds == 3600);
  CHECK(job.spec.managed_by == "kueue.x-k8s.io/multikueue");
  CHECK(job.status.conditions.at(0).observed_generation == 3);
  CHECK(job.status.jobs_status.at(0).succeeded == 4);
  REQUIRE_JSON_EQ(EncodeTrainJob(job), doc);
  job.raw = json::Value();
  REQUIRE_JSON_EQ(EncodeTrainJob(job), doc);
}

TEST_CASE("a TrainJob document given away decodes as one kept, without copying whole sub-trees") {
  const json::Value doc = J(R"({
    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
    "metadata": {"name": "moved", "namespace": "ns"},
    "spec": {
      "initializer": {"dataset": {"env": [{"name": "X", "value": "1"}], "storageUri": "s3://b"},
                      "model": {"env": [{"name": "Y", "value": "2"}]}},
      "trainer": {"env": [{"name": "E", "value": "v"}], "image": "img",
                  "resourcesPerNode": {"limits": {"cpu": 0.5}, "claims": [{"name": "c"}]},
                  "numNodes": 2},
      "runtimePatches": [{"manager": "acme.io/x", "trainingRuntimeSpec": {"template": {}}}],
      "unknown": {"kept": true}}})");
  const TrainJob kept = MustDecodeTrainJob(doc);
  StatusOr<TrainJob> moved = DecodeTrainJob(doc.Clone());
  REQUIRE(moved.ok());
  // The same typed fields...
  REQUIRE_JSON_EQ(moved->spec.trainer->env, kept.spec.trainer->env);
  REQUIRE_JSON_EQ(moved->spec.trainer->resources_per_node, kept.spec.trainer->resources_per_node);
  CHECK(json::Write(moved->spec.trainer->resources_per_node) ==
        R"({"limits":{"cpu":"500m"},"claims":[{"name":"c"}]})");
  REQUIRE_JSON_EQ(moved->spec.initializer->dataset->env, kept.spec.initializer->dataset->env);
  REQUIRE_JSON_EQ(moved->spec.initializer->model->env, kept.spec.initializer->model->env);
  REQUIRE_JSON_EQ(moved->spec.runtime_patches.at(0).training_runtime_spec,
                  kept.spec.runtime_patches.at(0).training_runtime_spec);
  // ...taken out of raw, with null left in their places (the keys keep their order)...
  const json::Value& trainer = moved->raw["spec"]["trainer"];
  CHECK(json::Write(trainer) ==
        R"({"env":null,"image":"img","resourcesPerNode":null,"numNodes":2})");
  CHECK(moved->raw["spec"]["initializer"]["dataset"]["env"].IsNull());
  CHECK(json::Write(moved->raw["spec"]["runtimePatches"]) ==
        R"([{"manager":"acme.io/x","trainingRuntimeSpec":null}])");
  // ...and encoding writes them back where they were: the same bytes as from the kept document.
  CHECK(json::Write(EncodeTrainJob(*moved)) == json::Write(EncodeTrainJob(kept)));
}

TEST_CASE("a TrainJob built in code encodes only what is set") {
  TrainJob job;
  job.metadata = {.name = "tj", .namespace_ = "ns"};
  job.spec.runtime_ref.name = "torch-distributed";
  REQUIRE_JSON_EQ(EncodeTrainJob(job), J(R"({
    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
    "metadata": {"name": "tj", "namespace": "ns"},
    "spec": {"runtimeRef": {"name": "torch-distributed"}}})"));
  job.spec.trainer.emplace();
  job.spec.trainer->num_nodes = 0;
  job.spec.suspend = false;
  REQUIRE_JSON_EQ(EncodeTrainJob(job)["spec"], J(R"({
    "runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": 0}, "suspend": false})"));
}

TEST_CASE("typed fields win over raw on encode") {
  TrainJob job = MustDecodeTrainJob(J(R"({
    "metadata": {"name": "tj", "labels": {"old": "1"}},
    "spec": {"runtimeRef": {"name": "r"}, "trainer": {"numNodes": 2}, "suspend": true}})"));
  job.spec.trainer.reset();
  job.spec.suspend.reset();
  job.metadata.labels = {{"new", "2"}};
  json::Value out = EncodeTrainJob(job);
  REQUIRE_JSON_EQ(out["spec"], J(R"({"runtimeRef": {"name": "r"}})"));
  REQUIRE_JSON_EQ(out["metadata"], J(R"({"name": "tj", "labels": {"new": "2"}})"));
}

TEST_CASE("unknown fields are tolerated and survive an encode") {
  const json::Value doc = J(R"({
    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
    "metadata": {"name": "tj", "managedFields": [{"manager": "kubectl"}],
                 "ownerReferences": [{"name": "o"}]},
    "spec": {"runtimeRef": {"name": "r", "extra": 1},
             "trainer": {"numNodes": 1, "futureField": {"x": true}},
             "runtimePatches": [{"manager": "b.io/b", "note": "kept"},
                                {"manager": "a.io/a", "note": "also kept"}],
             "somethingNew": "yes"},
    "status": {"unknownStatus": 1},
    "topLevel": [1, 2]})");
  TrainJob job = MustDecodeTrainJob(doc);
  REQUIRE_JSON_EQ(EncodeTrainJob(job), doc);
  // Reordering the typed patches keeps each one's unknown fields (matched by manager).
  std::swap(job.spec.runtime_patches[0], job.spec.runtime_patches[1]);
  REQUIRE_JSON_EQ(EncodeTrainJob(job)["spec"]["runtimePatches"],
                  J(R"([{"manager": "a.io/a", "note": "also kept"},
                        {"manager": "b.io/b", "note": "kept"}])"));
}

// ---- strict types, with paths as the user wrote them ----

TEST_CASE("wrong types in a TrainJob name the field path") {
  struct Case {
    const char* name;
    const char* doc;
    const char* want;
  };
  const Case cases[] = {
      {"numNodes as string", R"({"spec": {"trainer": {"numNodes": "2"}}})",
       "spec.trainer.numNodes: expected integer, got string"},
      {"numNodes fractional", R"({"spec": {"trainer": {"numNodes": 2.5}}})",
       "spec.trainer.numNodes: expected integer, got number"},
      {"numProcPerNode auto (v2.1 int-or-string)",
       R"({"spec": {"trainer": {"numProcPerNode": "auto"}}})",
       "spec.trainer.numProcPerNode: expected integer, got string"},
      {"command not a list", R"({"spec": {"trainer": {"command": "python"}}})",
       "spec.trainer.command: expected array, got string"},
      {"command item", R"({"spec": {"trainer": {"command": ["a", 1]}}})",
       "spec.trainer.command[1]: expected string, got integer"},
      {"env object", R"({"spec": {"trainer": {"env": {"A": "1"}}}})",
       "spec.trainer.env: expected array, got object"},
      {"image", R"({"spec": {"trainer": {"image": ["x"]}}})",
       "spec.trainer.image: expected string, got array"},
      {"trainer", R"({"spec": {"trainer": []}})", "spec.trainer: expected object, got array"},
      {"suspend", R"({"spec": {"suspend": "true"}})", "spec.suspend: expected boolean, got string"},
      {"activeDeadlineSeconds", R"({"spec": {"activeDeadlineSeconds": "60"}})",
       "spec.activeDeadlineSeconds: expected integer, got string"},
      {"managedBy", R"({"spec": {"managedBy": 1}})",
       "spec.managedBy: expected string, got integer"},
      {"runtimeRef", R"({"spec": {"runtimeRef": "torch"}})",
       "spec.runtimeRef: expected object, got string"},
      {"runtimeRef.kind", R"({"spec": {"runtimeRef": {"name": "r", "kind": false}}})",
       "spec.runtimeRef.kind: expected string, got boolean"},
      {"storageUri", R"({"spec": {"initializer": {"model": {"storageUri": 5}}}})",
       "spec.initializer.model.storageUri: expected string, got integer"},
      {"secretRef.name", R"({"spec": {"initializer": {"dataset": {"secretRef": {"name": 5}}}}})",
       "spec.initializer.dataset.secretRef.name: expected string, got integer"},
      {"resources limits", R"({"spec": {"trainer": {"resourcesPerNode": {"limits": ["cpu"]}}}})",
       "spec.trainer.resourcesPerNode.limits: expected object, got array"},
      {"runtimePatches", R"({"spec": {"runtimePatches": {"manager": "a.io/b"}}})",
       "spec.runtimePatches: expected array, got object"},
      {"runtimePatch manager",
       R"({"spec": {"runtimePatches": [{"manager": "a.io/b"}, {"manager": 5}]}})",
       "spec.runtimePatches[1].manager: expected string, got integer"},
      {"runtimePatch time",
       R"({"spec": {"runtimePatches": [{"manager": "a.io/b", "time": "yesterday"}]}})",
       "spec.runtimePatches[0].time: invalid RFC 3339 time \"yesterday\""},
      {"runtimePatch replicatedJobs",
       R"({"spec": {"runtimePatches": [{"manager": "a.io/b", "trainingRuntimeSpec":
           {"template": {"spec": {"replicatedJobs": {"name": "node"}}}}}]}})",
       "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs: expected array, "
       "got object"},
      {"runtimePatch container name",
       R"({"spec": {"runtimePatches": [{"manager": "a.io/b", "trainingRuntimeSpec":
           {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec":
             {"template": {"spec": {"containers": [{"name": 7}]}}}}}]}}}}]}})",
       "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec"
       ".template.spec.containers[0].name: expected string, got integer"},
      {"label value", R"({"metadata": {"name": "a", "labels": {"team": 1}}})",
       "metadata.labels.team: expected string, got integer"},
      {"metadata", R"({"metadata": "a"})", "metadata: expected object, got string"},
      {"kind", R"({"kind": "Pod"})", "kind: expected \"TrainJob\", got \"Pod\""},
      {"apiVersion", R"({"apiVersion": "v1", "kind": "TrainJob"})",
       "apiVersion: expected \"trainer.kubeflow.org/v1alpha1\", got \"v1\""},
      {"status counter", R"({"status": {"jobsStatus": [{"name": "node", "ready": "1"}]}})",
       "status.jobsStatus[0].ready: expected integer, got string"},
      {"condition message", R"({"status": {"conditions": [{"type": "Complete", "message": 1}]}})",
       "status.conditions[0].message: expected string, got integer"},
      {"trainerStatus", R"({"status": {"trainerStatus": 5}})",
       "status.trainerStatus: expected object, got integer"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) { CHECK(TrainJobError(c.doc) == c.want); }
  }
}

TEST_CASE("int32 fields reject values out of range") {
  CHECK(TrainJobError(R"({"spec": {"trainer": {"numNodes": 3000000000}}})") ==
        "spec.trainer.numNodes: 3000000000 overflows int32");
  CHECK(TrainJobError(R"({"spec": {"trainer": {"numProcPerNode": -2147483649}}})") ==
        "spec.trainer.numProcPerNode: -2147483649 overflows int32");
  CHECK(TrainJobError(R"({"status": {"jobsStatus": [{"name": "n", "active": 4.0e9}]}})") ==
        "status.jobsStatus[0].active: 4000000000 overflows int32");
  TrainJob job = MustDecodeTrainJob(J(R"({"spec": {"trainer": {"numNodes": 2147483647}}})"));
  CHECK(job.spec.trainer->num_nodes == 2147483647);
}

TEST_CASE("a bad quantity names its resource") {
  const std::string msg =
      TrainJobError(R"({"spec": {"trainer": {"resourcesPerNode": {"limits": {"cpu": "two"}}}}})");
  CHECK(msg.rfind("spec.trainer.resourcesPerNode.limits.cpu: ", 0) == 0);
  const std::string msg2 = TrainJobError(
      R"({"spec": {"trainer": {"resourcesPerNode": {"requests": {"memory": true}}}}})");
  CHECK(msg2.rfind("spec.trainer.resourcesPerNode.requests.memory: ", 0) == 0);
}

TEST_CASE("wrong types in a runtime name the field path") {
  struct Case {
    const char* name;
    const char* doc;
    const char* want;
  };
  const Case cases[] = {
      {"no kind", R"({"apiVersion": "trainer.kubeflow.org/v1alpha1"})", "kind: Required value"},
      {"no apiVersion", R"({"kind": "TrainingRuntime"})", "apiVersion: Required value"},
      {"other kind", R"({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob"})",
       "kind: expected \"TrainingRuntime\" or \"ClusterTrainingRuntime\", got \"TrainJob\""},
      {"other apiVersion", R"({"apiVersion": "kubeflow.org/v1", "kind": "ClusterTrainingRuntime"})",
       "apiVersion: expected \"trainer.kubeflow.org/v1alpha1\", got \"kubeflow.org/v1\""},
      {"numNodes",
       R"({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
           "spec": {"mlPolicy": {"numNodes": "1"}}})",
       "spec.mlPolicy.numNodes: expected integer, got string"},
      {"runLauncherAsNode",
       R"({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
           "spec": {"mlPolicy": {"mpi": {"runLauncherAsNode": "yes"}}}})",
       "spec.mlPolicy.mpi.runLauncherAsNode: expected boolean, got string"},
      {"jax",
       R"({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
           "spec": {"mlPolicy": {"jax": true}}})",
       "spec.mlPolicy.jax: expected object, got boolean"},
      {"containerNames",
       R"({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
           "spec": {"mlPolicy": {"torch": {"envInjection": {"targets": [
             {"jobName": "j", "containerNames": "c"}]}}}}})",
       "spec.mlPolicy.torch.envInjection.targets[0].containerNames: expected array, got string"},
      {"scheduleTimeoutSeconds",
       R"({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
           "spec": {"podGroupPolicy": {"coscheduling": {"scheduleTimeoutSeconds": "60"}}}})",
       "spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds: expected integer, got string"},
      {"volcano mode",
       R"({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
           "spec": {"podGroupPolicy": {"volcano": {"networkTopology": {"mode": 1}}}}})",
       "spec.podGroupPolicy.volcano.networkTopology.mode: expected string, got integer"},
      {"template",
       R"({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
           "spec": {"template": "x"}})",
       "spec.template: expected object, got string"},
      {"replicatedJob",
       R"({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
           "spec": {"template": {"spec": {"replicatedJobs": ["node"]}}}})",
       "spec.template.spec.replicatedJobs[0]: expected object, got string"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) { CHECK(RuntimeError(c.doc) == c.want); }
  }
}

TEST_CASE("runtime list items without apiVersion and kind decode with a kind hint") {
  const json::Value item = J(R"({"metadata": {"name": "r", "namespace": "ns"},
                                 "spec": {"mlPolicy": {"jax": {}}}})");
  StatusOr<TrainingRuntime> rt = DecodeTrainingRuntimeAs(item, kTrainingRuntimeKind);
  REQUIRE(rt.ok());
  CHECK(rt->kind == kTrainingRuntimeKind);
  CHECK(rt->spec.ml_policy->jax);
  CHECK(EncodeTrainingRuntime(*rt)["kind"].AsString() == "TrainingRuntime");
  // A present kind must agree with the hint.
  StatusOr<TrainingRuntime> wrong =
      DecodeTrainingRuntimeAs(J(R"({"kind": "TrainingRuntime"})"), kClusterTrainingRuntimeKind);
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.status().message() ==
        "kind: expected \"ClusterTrainingRuntime\", got \"TrainingRuntime\"");
}

// ---- SDK-style numbers ----

TEST_CASE("integers sent as integral doubles are accepted (Python SDK)") {
  TrainJob job = MustDecodeTrainJob(J(R"({"spec": {
    "runtimeRef": {"name": "torch-distributed"},
    "trainer": {"numNodes": 2.0, "numProcPerNode": 4.0},
    "activeDeadlineSeconds": 600.0}})"));
  CHECK(job.spec.trainer->num_nodes == 2);
  CHECK(job.spec.trainer->num_proc_per_node == 4);
  CHECK(job.spec.active_deadline_seconds == 600);
  json::Value out = EncodeTrainJob(job);
  CHECK(out["spec"]["trainer"]["numNodes"].IsInt());
  CHECK(out["spec"]["trainer"]["numNodes"].AsInt() == 2);
}

TEST_CASE("quantities sent as numbers are normalised to canonical strings") {
  TrainJob job = MustDecodeTrainJob(J(R"({"spec": {"trainer": {"resourcesPerNode": {
    "limits": {"cpu": 1.0, "memory": "2Gi", "nvidia.com/gpu": 2},
    "requests": {"cpu": 0.5}}}}})"));
  REQUIRE_JSON_EQ(job.spec.trainer->resources_per_node,
                  J(R"({"limits": {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": "2"},
                        "requests": {"cpu": "500m"}})"));
  // The encoded document carries the canonical strings, and decoding it again changes nothing.
  json::Value out = EncodeTrainJob(job);
  REQUIRE_JSON_EQ(out["spec"]["trainer"]["resourcesPerNode"], job.spec.trainer->resources_per_node);
  TrainJob again = MustDecodeTrainJob(out);
  REQUIRE_JSON_EQ(EncodeTrainJob(again), out);
}

// ---- status ----

TEST_CASE("EncodeTrainJobStatus writes every counter and every condition field") {
  TrainJobStatus status;
  status.conditions.push_back(
      Condition{"Suspended", "True", "Suspended", "", "2026-01-02T03:04:05Z", std::nullopt});
  status.jobs_status.push_back(JobStatus{"node", 0, 0, 0, 0, 2});
  status.jobs_status.push_back(JobStatus{"launcher", 1, 0, 0, 1, 0});
  REQUIRE_JSON_EQ(EncodeTrainJobStatus(status), J(R"({
    "conditions": [{"type": "Suspended", "status": "True",
                    "lastTransitionTime": "2026-01-02T03:04:05Z",
                    "reason": "Suspended", "message": ""}],
    "jobsStatus": [
      {"name": "node", "ready": 0, "succeeded": 0, "failed": 0, "active": 0, "suspended": 2},
      {"name": "launcher", "ready": 1, "succeeded": 0, "failed": 0, "active": 1, "suspended": 0}]
  })"));
  CHECK(json::Write(EncodeTrainJobStatus(TrainJobStatus{})) == "{}");
}

TEST_CASE("DecodeTrainJobStatus reads what EncodeTrainJobStatus writes") {
  const json::Value doc = J(R"({
    "conditions": [{"type": "Failed", "status": "True", "observedGeneration": 2,
                    "lastTransitionTime": "2026-01-02T03:04:05Z", "reason": "DeadlineExceeded",
                    "message": "TrainJob exceeded its active deadline"}],
    "jobsStatus": [{"name": "node", "ready": 0, "succeeded": 0, "failed": 2, "active": 0,
                    "suspended": 0}],
    "trainerStatus": {"progressPercentage": 40, "lastUpdatedTime": "2026-01-02T03:04:05Z",
                      "metrics": [{"name": "loss", "value": "0.1"}]}})");
  StatusOr<TrainJobStatus> status = DecodeTrainJobStatus(doc);
  REQUIRE(status.ok());
  CHECK(status->conditions.at(0).reason == "DeadlineExceeded");
  CHECK(status->jobs_status.at(0).failed == 2);
  REQUIRE_JSON_EQ(EncodeTrainJobStatus(*status), doc);
  // Missing counters are zeros; null is an empty status.
  StatusOr<TrainJobStatus> sparse = DecodeTrainJobStatus(J(R"({"jobsStatus": [{"name": "n"}]})"));
  REQUIRE(sparse.ok());
  CHECK(sparse->jobs_status.at(0).ready == 0);
  StatusOr<TrainJobStatus> none = DecodeTrainJobStatus(json::Value());
  REQUIRE(none.ok());
  CHECK(none->conditions.empty());
}

TEST_CASE("EncodeRuntimePatch omits an unset time") {
  RuntimePatch p;
  p.manager = "acme.io/team";
  REQUIRE_JSON_EQ(EncodeRuntimePatch(p), J(R"({"manager": "acme.io/team"})"));
  p.time = "2026-01-02T03:04:05Z";
  p.training_runtime_spec = J(R"({"template": {}})");
  REQUIRE_JSON_EQ(EncodeRuntimePatch(p), J(R"({"manager": "acme.io/team",
      "time": "2026-01-02T03:04:05Z", "trainingRuntimeSpec": {"template": {}}})"));
}

}  // namespace
}  // namespace trainer::api
