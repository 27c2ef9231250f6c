// Tests of runtime/api/podtemplateoverrides.h: the v2.1 spec.podTemplateOverrides become one
// spec.runtimePatches entry with the same effect, with errors named as the user wrote the field.
#include "runtime/api/podtemplateoverrides.h"

#include <catch2/catch.hpp>

#include "common/json/patch.h"
#include "runtime/api/codec.h"
#include "runtime/api/defaults.h"
#include "tests/unit/runtime/api/test_util.h"

namespace trainer::api {
namespace {

using testing::Get;
using testing::J;
using testing::ReadYamlFile;

TranslationResult MustTranslate(const json::Value& spec) {
  StatusOr<TranslationResult> r = TranslatePodTemplateOverrides(spec);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return std::move(r).value();
}

std::string TranslateError(std::string_view spec) {
  StatusOr<TranslationResult> r = TranslatePodTemplateOverrides(J(spec));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  return r.status().message();
}

// The pod template patch the translation wrote for replicatedJob `job`.
const json::Value& PodTemplateFor(const TranslationResult& r, std::string_view job) {
  REQUIRE(r.runtime_patches.size() == 1);
  const json::Value& jobs =
      Get(r.runtime_patches.at(0), {"trainingRuntimeSpec", "template", "spec", "replicatedJobs"});
  const json::Value* entry = json::FindByKey(jobs, "name", job);
  REQUIRE(entry != nullptr);
  return Get(*entry, {"template", "spec", "template"});
}

TEST_CASE("the legacy example becomes one runtimePatches entry") {
  const json::Value doc = ReadYamlFile("examples/trainjobs/podtemplateoverrides-legacy.yaml");
  TranslationResult r = MustTranslate(Get(doc, {"spec"}));
  CHECK(r.index == 0);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0] ==
        "spec.podTemplateOverrides is deprecated; it was translated into spec.runtimePatches[0] "
        "(manager \"trainer.kubeflow.org/podtemplateoverrides\")");
  REQUIRE_JSON_EQ(r.runtime_patches, J(R"([{
    "manager": "trainer.kubeflow.org/podtemplateoverrides",
    "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [{
      "name": "node",
      "template": {"spec": {"template": {
        "metadata": {"labels": {"team": "research"}},
        "spec": {
          "serviceAccountName": "training-sa",
          "nodeSelector": {"node-pool": "training"},
          "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "training",
                           "effect": "NoSchedule"}],
          "volumes": [{"name": "scratch", "emptyDir": {"sizeLimit": "10Gi"}}],
          "containers": [{"name": "node",
                          "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}]}]}}}}}]}}}
  }])"));
}

TEST_CASE("one override with several target jobs patches each of them") {
  TranslationResult r = MustTranslate(J(R"({"podTemplateOverrides": [{
    "targetJobs": [{"name": "launcher"}, {"name": "node"}],
    "spec": {"nodeSelector": {"pool": "mpi"}}}]})"));
  const json::Value& jobs =
      Get(r.runtime_patches.at(0), {"trainingRuntimeSpec", "template", "spec", "replicatedJobs"});
  REQUIRE(jobs.size() == 2);
  CHECK(jobs.at(0).Find("name")->AsString() == "launcher");
  CHECK(jobs.at(1).Find("name")->AsString() == "node");
  REQUIRE_JSON_EQ(PodTemplateFor(r, "node"), J(R"({"spec": {"nodeSelector": {"pool": "mpi"}}})"));
  REQUIRE_JSON_EQ(PodTemplateFor(r, "launcher"),
                  J(R"({"spec": {"nodeSelector": {"pool": "mpi"}}})"));
}

TEST_CASE("later overrides for the same job win over earlier ones") {
  TranslationResult r = MustTranslate(J(R"({"podTemplateOverrides": [
    {"targetJobs": [{"name": "node"}],
     "metadata": {"labels": {"a": "1", "b": "1"}},
     "spec": {"serviceAccountName": "first", "nodeSelector": {"zone": "a", "disk": "ssd"},
              "tolerations": [{"key": "t1", "operator": "Exists"}],
              "initContainers": [{"name": "fetch", "env": [{"name": "X", "value": "1"}]}]}},
    {"targetJobs": [{"name": "launcher"}], "spec": {"serviceAccountName": "launcher-sa"}},
    {"targetJobs": [{"name": "node"}],
     "metadata": {"labels": {"b": "2"}},
     "spec": {"serviceAccountName": "second", "nodeSelector": {"zone": "b"},
              "tolerations": [{"key": "t2", "operator": "Exists"}],
              "initContainers": [{"name": "fetch", "env": [{"name": "X", "value": "2"},
                                                           {"name": "Y", "value": "3"}]}]}}]})"));
  REQUIRE_JSON_EQ(PodTemplateFor(r, "node"), J(R"({
    "metadata": {"labels": {"a": "1", "b": "2"}},
    "spec": {"serviceAccountName": "second", "nodeSelector": {"zone": "b", "disk": "ssd"},
             "tolerations": [{"key": "t2", "operator": "Exists"}],
             "initContainers": [{"name": "fetch", "env": [{"name": "X", "value": "2"},
                                                          {"name": "Y", "value": "3"}]}]}})"));
  REQUIRE_JSON_EQ(PodTemplateFor(r, "launcher"),
                  J(R"({"spec": {"serviceAccountName": "launcher-sa"}})"));
}

TEST_CASE("the translated patch has the effect of v2.1's overrides applied in sequence") {
  const json::Value overrides = J(R"({"podTemplateOverrides": [
    {"targetJobs": [{"name": "node"}],
     "spec": {"nodeSelector": {"zone": "a"},
              "volumes": [{"name": "data", "emptyDir": {}}],
              "containers": [{"name": "node", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}},
    {"targetJobs": [{"name": "node"}],
     "metadata": {"annotations": {"note": "x"}},
     "spec": {"nodeSelector": {"rack": "r1"},
              "volumes": [{"name": "cache", "emptyDir": {"medium": "Memory"}}],
              "containers": [{"name": "node", "volumeMounts": [{"name": "cache", "mountPath": "/cache"}]}]}}]})");
  const json::Value runtime = ReadYamlFile("examples/runtimes/torch-distributed.yaml");
  const json::Value& jobset_spec = Get(runtime, {"spec", "template", "spec"});

  // v2.1: each override in turn, strategic-merged into the node job's Pod template.
  json::Value want =
      Get(Get(jobset_spec, {"replicatedJobs"}).at(0), {"template", "spec", "template"}).Clone();
  for (const json::Value& o : Get(overrides, {"podTemplateOverrides"}).elements()) {
    json::Value patch = json::Value::Object();
    if (o.Has("metadata")) patch.Set("metadata", Get(o, {"metadata"}).Clone());
    patch.Set("spec", Get(o, {"spec"}).Clone());
    REQUIRE(json::StrategicMerge(want, patch).ok());
  }

  // v2.3: the translated runtime patch, strategic-merged into the JobSet spec.
  TranslationResult r = MustTranslate(overrides);
  json::Value got_spec = jobset_spec.Clone();
  REQUIRE(json::StrategicMerge(
              got_spec, Get(r.runtime_patches.at(0), {"trainingRuntimeSpec", "template", "spec"}))
              .ok());
  REQUIRE(got_spec["replicatedJobs"].size() == 1);
  REQUIRE_JSON_EQ(got_spec["replicatedJobs"].at(0)["template"]["spec"]["template"], want);
}

TEST_CASE("metadata other than labels and annotations is ignored with a warning") {
  TranslationResult r = MustTranslate(J(R"({"podTemplateOverrides": [{
    "targetJobs": [{"name": "node"}],
    "metadata": {"name": "x", "labels": {"l": "v"}, "annotations": {"a": "v"}}}]})"));
  REQUIRE_JSON_EQ(PodTemplateFor(r, "node"),
                  J(R"({"metadata": {"labels": {"l": "v"}, "annotations": {"a": "v"}}})"));
  REQUIRE(r.warnings.size() == 2);
  CHECK(r.warnings[1] ==
        "spec.podTemplateOverrides[0].metadata.name: ignored; only labels and annotations of a "
        "pod template override are applied");
}

TEST_CASE("fields outside the v2.1 schema are dropped with the apiserver's warning") {
  TranslationResult r = MustTranslate(J(R"({"podTemplateOverrides": [{
    "targetJobs": [{"name": "node", "extra": 1}],
    "priority": 5,
    "spec": {"hostNetwork": true, "affinity": {"nodeAffinity": null, "podAffinity": {}},
             "containers": [{"name": "node", "image": "other",
                             "volumeMounts": [{"name": "v", "mountPath": "/v", "readOnly": null}]}]}}]})"));
  REQUIRE_JSON_EQ(PodTemplateFor(r, "node"), J(R"({"spec": {
    "affinity": {"podAffinity": {}},
    "containers": [{"name": "node", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}]}})"));
  REQUIRE(r.warnings.size() == 5);
  CHECK(r.warnings[1] == "unknown field \"spec.podTemplateOverrides[0].targetJobs[0].extra\"");
  CHECK(r.warnings[2] == "unknown field \"spec.podTemplateOverrides[0].spec.containers[0].image\"");
  CHECK(r.warnings[3] == "unknown field \"spec.podTemplateOverrides[0].spec.hostNetwork\"");
  CHECK(r.warnings[4] == "unknown field \"spec.podTemplateOverrides[0].priority\"");
}

TEST_CASE("the entry goes after the existing runtimePatches, or replaces a previous translation") {
  SECTION("appended") {
    TranslationResult r = MustTranslate(J(R"({
      "runtimePatches": [{"manager": "a.io/a"}, {"manager": "b.io/b"}],
      "podTemplateOverrides": [{"targetJobs": [{"name": "node"}]}]})"));
    CHECK(r.index == 2);
    CHECK(r.warnings[0] ==
          "spec.podTemplateOverrides is deprecated; it was translated into spec.runtimePatches[2] "
          "(manager \"trainer.kubeflow.org/podtemplateoverrides\")");
  }
  SECTION("replacing") {
    TranslationResult r = MustTranslate(J(R"({
      "runtimePatches": [{"manager": "a.io/a"},
                         {"manager": "trainer.kubeflow.org/podtemplateoverrides"},
                         {"manager": "b.io/b"}],
      "podTemplateOverrides": [{"targetJobs": [{"name": "node"}]}]})"));
    CHECK(r.index == 1);
  }
}

TEST_CASE("no podTemplateOverrides, no patch and no warning") {
  for (const char* spec : {R"({"runtimeRef": {"name": "r"}})", R"({"podTemplateOverrides": []})",
                           R"({"podTemplateOverrides": null})"}) {
    INFO(spec);
    TranslationResult r = MustTranslate(J(spec));
    CHECK(r.runtime_patches.empty());
    CHECK(r.warnings.empty());
  }
}

TEST_CASE("podTemplateOverrides errors name the field as the user wrote it") {
  struct Case {
    const char* name;
    const char* spec;
    const char* want;
  };
  const Case cases[] = {
      {"not a list", R"({"podTemplateOverrides": {"targetJobs": []}})",
       "spec.podTemplateOverrides: expected array, got object"},
      {"entry not an object", R"({"podTemplateOverrides": ["node"]})",
       "spec.podTemplateOverrides[0]: expected object, got string"},
      {"targetJobs missing", R"({"podTemplateOverrides": [{"spec": {}}]})",
       "spec.podTemplateOverrides[0].targetJobs: Required value"},
      {"targetJobs not a list", R"({"podTemplateOverrides": [{"targetJobs": {"name": "node"}}]})",
       "spec.podTemplateOverrides[0].targetJobs: expected array, got object"},
      {"target name missing",
       R"({"podTemplateOverrides": [{"targetJobs": [{"name": "node"}, {}]}]})",
       "spec.podTemplateOverrides[0].targetJobs[1].name: Required value"},
      {"target name empty",
       R"({"podTemplateOverrides": [{"targetJobs": [{"name": "node"}]},
                                    {"targetJobs": [{"name": ""}]}]})",
       "spec.podTemplateOverrides[1].targetJobs[0].name: Required value"},
      {"target name not a string", R"({"podTemplateOverrides": [{"targetJobs": [{"name": 1}]}]})",
       "spec.podTemplateOverrides[0].targetJobs[0].name: expected string, got integer"},
      {"container name missing",
       R"({"podTemplateOverrides": [{"targetJobs": [{"name": "node"}],
           "spec": {"containers": [{"env": [{"name": "A", "value": "1"}]}]}}]})",
       "spec.podTemplateOverrides[0].spec.containers[0].name: Required value"},
      {"container duplicated",
       R"({"podTemplateOverrides": [{"targetJobs": [{"name": "node"}],
           "spec": {"containers": [{"name": "a"}, {"name": "a"}]}}]})",
       "spec.podTemplateOverrides[0].spec.containers[1]: Duplicate value: "
       "map[string]interface {}{\"name\":\"a\"}"},
      {"env name missing",
       R"({"podTemplateOverrides": [{"targetJobs": [{"name": "node"}],
           "spec": {"initContainers": [{"name": "i", "env": [{"value": "1"}]}]}}]})",
       "spec.podTemplateOverrides[0].spec.initContainers[0].env[0].name: Required value"},
      {"volumes not a list",
       R"({"podTemplateOverrides": [{"targetJobs": [{"name": "node"}],
           "spec": {"volumes": {"name": "v"}}}]})",
       "spec.podTemplateOverrides[0].spec.volumes: expected array, got object"},
      {"volume without name",
       R"({"podTemplateOverrides": [{"targetJobs": [{"name": "node"}],
           "spec": {"volumes": [{"emptyDir": {}}]}}]})",
       "spec.podTemplateOverrides[0].spec.volumes[0].name: Required value"},
      {"toleration not an object",
       R"({"podTemplateOverrides": [{"targetJobs": [{"name": "node"}],
           "spec": {"tolerations": ["gpu"]}}]})",
       "spec.podTemplateOverrides[0].spec.tolerations[0]: expected object, got string"},
      {"nodeSelector value",
       R"({"podTemplateOverrides": [{"targetJobs": [{"name": "node"}],
           "spec": {"nodeSelector": {"zone": 1}}}]})",
       "spec.podTemplateOverrides[0].spec.nodeSelector.zone: expected string, got integer"},
      {"serviceAccountName",
       R"({"podTemplateOverrides": [{"targetJobs": [{"name": "node"}],
           "spec": {"serviceAccountName": true}}]})",
       "spec.podTemplateOverrides[0].spec.serviceAccountName: expected string, got boolean"},
      {"label value",
       R"({"podTemplateOverrides": [{"targetJobs": [{"name": "node"}],
           "metadata": {"labels": {"a": 1}}}]})",
       "spec.podTemplateOverrides[0].metadata.labels.a: expected string, got integer"},
      {"spec not an object",
       R"({"podTemplateOverrides": [{"targetJobs": [{"name": "node"}], "spec": []}]})",
       "spec.podTemplateOverrides[0].spec: expected object, got array"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) { CHECK(TranslateError(c.spec) == c.want); }
  }
}

TEST_CASE("ApplyPodTemplateOverrides rewrites a decoded TrainJob into the v2.3 form") {
  StatusOr<TrainJob> job =
      DecodeTrainJob(ReadYamlFile("examples/trainjobs/podtemplateoverrides-legacy.yaml"));
  REQUIRE(job.ok());
  RuntimePatch existing;
  existing.manager = "example.io/platform";
  job->spec.runtime_patches.push_back(std::move(existing));

  std::vector<std::string> warnings;
  REQUIRE(ApplyPodTemplateOverrides(*job, &warnings).ok());
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] ==
        "spec.podTemplateOverrides is deprecated; it was translated into spec.runtimePatches[1] "
        "(manager \"trainer.kubeflow.org/podtemplateoverrides\")");
  REQUIRE(job->spec.runtime_patches.size() == 2);
  const RuntimePatch& translated = job->spec.runtime_patches[1];
  CHECK(translated.manager == kPodTemplateOverridesManager);
  CHECK_FALSE(translated.time);

  DefaultRuntimePatchTimes(*job, nullptr, "2026-01-02T03:04:05Z");
  json::Value out = EncodeTrainJob(*job);
  CHECK_FALSE(out["spec"].Has("podTemplateOverrides"));
  const json::Value& patches = out["spec"]["runtimePatches"];
  REQUIRE(patches.size() == 2);
  CHECK(Get(patches.at(1), {"time"}).AsString() == "2026-01-02T03:04:05Z");
  const json::Value& jobs =
      Get(patches.at(1), {"trainingRuntimeSpec", "template", "spec", "replicatedJobs"});
  CHECK(Get(jobs.at(0), {"name"}).AsString() == "node");

  // The result decodes as a plain v2.3 TrainJob; applying again changes nothing.
  StatusOr<TrainJob> again = DecodeTrainJob(out);
  REQUIRE(again.ok());
  std::vector<std::string> none;
  REQUIRE(ApplyPodTemplateOverrides(*again, &none).ok());
  CHECK(none.empty());
  REQUIRE_JSON_EQ(EncodeTrainJob(*again), out);
}

TEST_CASE("ApplyPodTemplateOverrides reports translation errors") {
  StatusOr<TrainJob> job = DecodeTrainJob(J(R"({"spec": {"runtimeRef": {"name": "r"},
      "podTemplateOverrides": [{"targetJobs": [{}]}]}})"));
  REQUIRE(job.ok());
  Status s = ApplyPodTemplateOverrides(*job, nullptr);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message() == "spec.podTemplateOverrides[0].targetJobs[0].name: Required value");
}

}  // namespace
}  // namespace trainer::api

namespace trainer::api {
namespace {

TEST_CASE(
    "ValidatePodTemplateOverrides checks targets and containers against the runtime as v2.1 did") {
  const json::Value torch = ReadYamlFile("examples/runtimes/torch-distributed.yaml");
  const json::Value& torch_template = Get(torch, {"spec", "template"});
  const json::Value legacy = ReadYamlFile("examples/trainjobs/podtemplateoverrides-legacy.yaml");
  CHECK(ValidatePodTemplateOverrides(Get(legacy, {"spec"}), torch_template).empty());

  const json::Value deepspeed = ReadYamlFile("examples/runtimes/deepspeed-distributed.yaml");
  const std::vector<std::string> details =
      ValidatePodTemplateOverrides(J(R"({"podTemplateOverrides": [
    {"targetJobs": [{"name": "worker"}], "spec": {"containers": [{"name": "node"}]}},
    {"targetJobs": [{"name": "launcher"}, {"name": "node"}],
     "spec": {"initContainers": [{"name": "init"}],
              "containers": [{"name": "node", "env": [{"name": "A", "value": "1"}]},
                             {"name": "sidecar"}]}}]})"),
                                   Get(deepspeed, {"spec", "template"}));
  const std::vector<std::string> want = {
      "must not have targetJob that doesn't exist in the runtime job template",
      "must not have container that doesn't exist in the runtime job worker",
      "must not have initContainer that doesn't exist in the runtime job launcher",
      "must not have envs for the dataset-initializer, model-initializer, node containers",
      "must not have container that doesn't exist in the runtime job launcher",
      "must not have initContainer that doesn't exist in the runtime job node",
      "must not have envs for the dataset-initializer, model-initializer, node containers",
      "must not have container that doesn't exist in the runtime job node",
  };
  CHECK(details == want);
}

}  // namespace
}  // namespace trainer::api
