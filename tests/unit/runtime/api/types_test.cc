// Tests of the Clone helpers in runtime/api/types.h: a clone encodes exactly like its source (so
// no member is forgotten) and shares nothing with it.
#include "runtime/api/types.h"

#include <catch2/catch.hpp>

#include "runtime/api/codec.h"
#include "tests/unit/runtime/api/test_util.h"

namespace trainer::api {
namespace {

using testing::J;
using testing::ReadYamlFile;
using testing::YamlFiles;

TEST_CASE("a cloned TrainJob encodes like the original and is independent") {
  StatusOr<TrainJob> job = DecodeTrainJob(J(R"({
    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
    "metadata": {"name": "tj", "namespace": "ns", "labels": {"a": "b"}, "generation": 2,
                 "deletionTimestamp": "2026-01-02T03:04:05Z", "finalizers": ["f"]},
    "spec": {"runtimeRef": {"name": "r", "kind": "TrainingRuntime", "apiGroup": "g"},
             "initializer": {"dataset": {"storageUri": "s3://b", "env": [{"name": "A"}],
                                         "secretRef": {"name": "s"}},
                             "model": {"storageUri": "hf://m"}},
             "trainer": {"image": "i", "command": ["c"], "args": ["a"],
                         "env": [{"name": "E", "value": "1"}], "numNodes": 3,
                         "resourcesPerNode": {"limits": {"cpu": "1"}}, "numProcPerNode": 2},
             "runtimePatches": [{"manager": "a.io/a", "time": "2026-01-02T03:04:05Z",
                                 "trainingRuntimeSpec": {"template": {}}}],
             "suspend": true, "activeDeadlineSeconds": 5, "managedBy": "x"},
    "status": {"conditions": [{"type": "Complete", "status": "True", "reason": "r",
                               "message": "m", "lastTransitionTime": "2026-01-02T03:04:05Z"}],
               "jobsStatus": [{"name": "node", "ready": 1, "succeeded": 0, "failed": 0,
                               "active": 1, "suspended": 0}],
               "trainerStatus": {"progressPercentage": 5}},
    "extra": true})"));
  REQUIRE(job.ok());
  TrainJob copy = Clone(*job);
  REQUIRE_JSON_EQ(EncodeTrainJob(copy), EncodeTrainJob(*job));
  // Typed-only encodings agree too (raw cannot hide a member Clone forgot).
  copy.raw = json::Value();
  TrainJob original_typed = Clone(*job);
  original_typed.raw = json::Value();
  REQUIRE_JSON_EQ(EncodeTrainJob(copy), EncodeTrainJob(original_typed));

  copy.spec.trainer->env.PushBack(J(R"({"name": "B"})"));
  copy.spec.runtime_patches[0].training_runtime_spec["template"].Set("x", json::Value(1));
  copy.status.trainer_status.Set("progressPercentage", json::Value(6));
  CHECK(job->spec.trainer->env.size() == 1);
  CHECK_FALSE(job->spec.runtime_patches[0].training_runtime_spec["template"].Has("x"));
  CHECK(job->status.trainer_status["progressPercentage"].AsInt() == 5);
}

TEST_CASE("a cloned runtime encodes like the original and is independent") {
  for (const std::string& file : YamlFiles("examples/runtimes")) {
    INFO(file);
    StatusOr<TrainingRuntime> rt = DecodeTrainingRuntime(ReadYamlFile(file));
    REQUIRE(rt.ok());
    TrainingRuntime copy = Clone(*rt);
    copy.raw = json::Value();
    REQUIRE_JSON_EQ(EncodeTrainingRuntime(copy), EncodeTrainingRuntime(*rt));
    copy.spec.template_["spec"].Set("suspend", json::Value(true));
    CHECK_FALSE(rt->spec.template_["spec"].Has("suspend"));
  }
}

}  // namespace
}  // namespace trainer::api
