// Tests of runtime/api/manifests.h: multi-document YAML into TrainJobs, runtimes and others.
#include "runtime/api/manifests.h"

#include <catch2/catch.hpp>

#include "tests/unit/runtime/api/test_util.h"

namespace trainer::api {
namespace {

using testing::ReadFile;
using testing::YamlFiles;

TEST_CASE("all examples decode as one stream") {
  std::string text;
  for (const char* dir : {"examples/runtimes", "examples/trainjobs"}) {
    for (const std::string& file : YamlFiles(dir)) text += "---\n" + ReadFile(file);
  }
  StatusOr<Manifests> m = DecodeManifests(text);
  INFO(m.status().message());
  REQUIRE(m.ok());
  CHECK(m->runtimes.size() == 8);
  CHECK(m->train_jobs.size() == 9);
  CHECK(m->others.empty());
}

TEST_CASE("lists are expanded and other kinds are handed back") {
  StatusOr<Manifests> m = DecodeManifests(R"(
apiVersion: v1
kind: List
items:
- apiVersion: trainer.kubeflow.org/v1alpha1
  kind: TrainingRuntime
  metadata: {name: tr, namespace: team}
  spec: {mlPolicy: {torch: {}}}
- apiVersion: v1
  kind: Secret
  metadata: {name: s}
---
# an empty document is skipped
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj, namespace: team}
spec: {runtimeRef: {name: tr, kind: TrainingRuntime}}
)");
  INFO(m.status().message());
  REQUIRE(m.ok());
  REQUIRE(m->runtimes.size() == 1);
  CHECK(m->runtimes[0].kind == "TrainingRuntime");
  CHECK(m->runtimes[0].metadata.namespace_ == "team");
  REQUIRE(m->train_jobs.size() == 1);
  CHECK(m->train_jobs[0].spec.runtime_ref.kind == "TrainingRuntime");
  REQUIRE(m->others.size() == 1);
  CHECK(m->others[0].Find("kind")->AsString() == "Secret");
}

TEST_CASE("errors name the document and the object") {
  StatusOr<Manifests> m = DecodeManifests(R"(
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: x, namespace: ns}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {numNodes: two}
)");
  REQUIRE_FALSE(m.ok());
  CHECK(m.status().message() ==
        "document 2 (TrainJob ns/x): spec.trainer.numNodes: expected integer, got string");

  StatusOr<Manifests> list = DecodeManifests(R"(
kind: ClusterTrainingRuntimeList
items:
- apiVersion: trainer.kubeflow.org/v1alpha1
  kind: ClusterTrainingRuntime
  metadata: {name: c}
  spec: {mlPolicy: {numNodes: [1]}}
)");
  REQUIRE_FALSE(list.ok());
  CHECK(list.status().message() ==
        "document 1, item 0 (ClusterTrainingRuntime c): "
        "spec.mlPolicy.numNodes: expected integer, got array");
}

}  // namespace
}  // namespace trainer::api
