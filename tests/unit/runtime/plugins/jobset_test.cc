// JobSet plugin (upstream plugins/jobset/{jobset_test.go,builder_test.go}): TestJobSet,
// TestValidate, TestBuild, TestSyncParallelCount, TestBuilder*, and Status, by upstream case name.
#include "runtime/plugins/jobset/jobset.h"

#include <catch2/catch.hpp>

#include "runtime/api/kinds.h"
#include "runtime/framework/map_reader.h"
#include "runtime/framework/testing/testing.h"
#include "runtime/plugins/jobset/builder.h"

namespace trainer::plugins {
namespace {

using testing::Canon;
using testing::EnvNames;
using testing::EnvValue;
using testing::InfoBuilder;
using testing::PodSet;
using testing::Yaml;

constexpr char kInitializerSpec[] = R"(
replicatedJobs:
- name: dataset-initializer
  template:
    metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}}
    spec: {template: {spec: {containers: [{name: dataset-initializer, volumeMounts: [{name: initializer, mountPath: /workspace/dataset}]}]}}}
- name: model-initializer
  template:
    metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: model-initializer}}
    spec: {template: {spec: {containers: [{name: model-initializer, volumeMounts: [{name: initializer, mountPath: /workspace/model}]}]}}}
- name: node
  template:
    metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
    spec: {template: {spec: {containers: [{name: node, image: rt:img, env: [{name: TEMPLATE, value: t}]}]}}}
)";

framework::Info SpecInfo(std::string_view spec) { return InfoBuilder().JobSetSpec(spec).Build(); }

api::TrainJob Job(std::string_view spec) {
  return testing::TrainJob("metadata: {name: test-job, namespace: default, uid: uid-1}\nspec: " +
                           std::string(spec));
}

struct Fixture {
  framework::MapReader reader;
  std::string now = "2026-01-01T00:00:00Z";
  JobSet plugin{framework::PluginContext{&reader, [this] { return now; }}};
};

TEST_CASE("TestJobSet", "[jobset]") {
  Fixture f;
  api::TrainJob job = Job("{runtimeRef: {name: rt}}");
  SECTION("no action when info is nil") { CHECK(f.plugin.IdentifyPodNetwork(nullptr, job).ok()); }
  SECTION("no action when template.spec is not JobSet") {
    framework::Info info;
    CHECK(f.plugin.IdentifyPodNetwork(&info, job).ok());
  }
  SECTION("trainer numNodes is respected rather than parallelism when replicatedJob name is node") {
    framework::Info info =
        InfoBuilder()
            .JobSetSpec("{replicatedJobs: [{name: launcher}, {name: node, replicas: 1}]}")
            .PodSet(PodSet("launcher").Count(1))
            .PodSet(PodSet("node").Ancestor("trainer").Count(2))
            .Build();
    REQUIRE(f.plugin.IdentifyPodNetwork(&info, job).ok());
    info.template_spec.pod_sets[1].count = 3;  // endpoints follow later count changes
    CHECK(info.template_spec.pod_sets[0].Endpoints() ==
          std::vector<std::string>{"test-job-launcher-0-0.test-job"});
    CHECK(info.template_spec.pod_sets[1].Endpoints() ==
          std::vector<std::string>{"test-job-node-0-0.test-job", "test-job-node-0-1.test-job",
                                   "test-job-node-0-2.test-job"});
  }
  SECTION("subDomain in jobSetSpec is used to endpoint") {
    framework::Info info = InfoBuilder()
                               .JobSetSpec(
                                   "{network: {subdomain: kubeflow.org}, "
                                   "replicatedJobs: [{name: node, replicas: 2}]}")
                               .PodSet(PodSet("node").Count(1))
                               .Build();
    REQUIRE(f.plugin.IdentifyPodNetwork(&info, job).ok());
    CHECK(info.template_spec.pod_sets[0].Endpoints() ==
          std::vector<std::string>{"test-job-node-0-0.kubeflow.org",
                                   "test-job-node-1-0.kubeflow.org"});
  }
}

std::string ValidateText(Fixture& f, const framework::Info& info, const api::TrainJob* old_job,
                         const api::TrainJob& new_job) {
  return f.plugin.Validate(&info, old_job, new_job).ErrorMessage();
}

TEST_CASE("TestValidate", "[jobset]") {
  Fixture f;
  framework::Info full = SpecInfo(kInitializerSpec);
  framework::Info node_only = SpecInfo(R"(
replicatedJobs:
- name: node
  template: {spec: {template: {spec: {containers: [{name: node}]}}}}
)");
  SECTION("no initializer job") {
    CHECK(ValidateText(f, node_only, nullptr, Job("{runtimeRef: {name: rt}}")).empty());
  }
  SECTION("no dataset initializer job") {
    CHECK(ValidateText(f, node_only, nullptr,
                       Job("{runtimeRef: {name: rt}, initializer: {model: {storageUri: x}}}"))
              .find("dataset") == std::string::npos);
  }
  SECTION("no model initializer job") {
    CHECK(ValidateText(f, node_only, nullptr,
                       Job("{runtimeRef: {name: rt}, initializer: {dataset: {storageUri: x}}}"))
              .find("model-initializer") == std::string::npos);
  }
  SECTION("valid dataset initializer with volumeClaimPolicies and volumeMount passes") {
    framework::Info info =
        SpecInfo(std::string(kInitializerSpec) +
                 "volumeClaimPolicies: [{templates: [{metadata: {name: initializer}}]}]\n");
    CHECK(ValidateText(f, info, nullptr,
                       Job("{runtimeRef: {name: rt}, initializer: {dataset: {storageUri: x}}}"))
              .empty());
  }
  SECTION("valid model initializer with volumeClaimPolicies and volumeMount passes") {
    CHECK(ValidateText(f, full, nullptr,
                       Job("{runtimeRef: {name: rt}, initializer: {model: {storageUri: x}}}"))
              .empty());
  }
  SECTION("must have volumeMount with name - initializer in the model initializer container") {
    framework::Info info = SpecInfo(
        "{replicatedJobs: [{name: model-initializer, template: {spec: {template: {spec: "
        "{containers: [{name: model-initializer, volumeMounts: [{name: other, mountPath: "
        "/m}]}]}}}}}]}");
    CHECK(ValidateText(f, info, nullptr,
                       Job("{runtimeRef: {name: rt}, initializer: {model: {storageUri: x}}}"))
              .ends_with("must have volumeMount with name - initializer in container "
                         "model-initializer of the model-initializer job"));
  }
  SECTION(
      "must have dataset initializer job when trainJob is configured with input datasetConfig") {
    CHECK(ValidateText(
              f, node_only, nullptr,
              Job("{runtimeRef: {name: rt}, initializer: {dataset: {storageUri: hf://x}}}")) ==
          "spec.runtimeRef: Invalid value: v1alpha1.RuntimeRef{Name:\"rt\", "
          "APIGroup:(*string)(\"trainer.kubeflow.org\"), "
          "Kind:(*string)(\"ClusterTrainingRuntime\")}: "
          "must have dataset-initializer job when trainJob is configured with input datasetConfig");
  }
  SECTION("must have container with name - dataset initializer in the dataset initializer job") {
    framework::Info info = SpecInfo(
        "{replicatedJobs: [{name: dataset-initializer, template: {spec: {template: {spec: "
        "{containers: [{name: other}]}}}}}]}");
    std::string text =
        ValidateText(f, info, nullptr,
                     Job("{runtimeRef: {name: rt}, initializer: {dataset: {storageUri: hf://x}}}"));
    CHECK(text.ends_with(
        "must have container with name - dataset-initializer in the dataset-initializer job"));
  }
  SECTION("must have model initializer job when trainJob is configured with input modelConfig") {
    std::string text =
        ValidateText(f, node_only, nullptr,
                     Job("{runtimeRef: {name: rt}, initializer: {model: {storageUri: hf://x}}}"));
    CHECK(text.ends_with(
        "must have model-initializer job when trainJob is configured with input modelConfig"));
  }
  SECTION("must have container with name - model initializer in the model initializer job") {
    framework::Info info = SpecInfo(
        "{replicatedJobs: [{name: model-initializer, template: {spec: {template: {spec: "
        "{initContainers: [{name: x}], containers: [{name: other}]}}}}}]}");
    CHECK(ValidateText(f, info, nullptr,
                       Job("{runtimeRef: {name: rt}, initializer: {model: {storageUri: hf://x}}}"))
              .ends_with("must have container with name - model-initializer in the "
                         "model-initializer job"));
  }
  SECTION("valid dataset and model initializers together pass") {
    CHECK(ValidateText(f, full, nullptr,
                       Job("{runtimeRef: {name: rt}, initializer: {dataset: {storageUri: hf://x}, "
                           "model: {storageUri: hf://y}}}"))
              .empty());
  }
  SECTION("must have volumeMount with name - initializer in the dataset initializer container") {
    framework::Info info = SpecInfo(
        "{replicatedJobs: [{name: dataset-initializer, template: {spec: {template: {spec: "
        "{containers: [{name: dataset-initializer}]}}}}}]}");
    CHECK(
        ValidateText(f, info, nullptr,
                     Job("{runtimeRef: {name: rt}, initializer: {dataset: {storageUri: hf://x}}}"))
            .ends_with("must have volumeMount with name - initializer in container "
                       "dataset-initializer of the dataset-initializer job"));
  }
  SECTION("runtimePatches contain invalid replicated job") {
    std::string text = ValidateText(f, full, nullptr, Job(R"(
  runtimeRef: {name: rt}
  runtimePatches:
  - manager: trainer.kubeflow.org/test
    trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: invalid}]}}}
)"));
    CHECK(text.starts_with("spec.runtimePatches: Invalid value: "));
    CHECK(text.ends_with(
        ": must not have replicated job that doesn't exist in the runtime job template"));
  }
  SECTION("runtimePatches contain invalid initContainer") {
    CHECK(ValidateText(f, full, nullptr, Job(R"(
  runtimeRef: {name: rt}
  runtimePatches:
  - manager: trainer.kubeflow.org/test
    trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: {spec: {template: {spec: {initContainers: [{name: bad}]}}}}}]}}}
)"))
              .ends_with("must not have initContainer that doesn't exist in the runtime job node"));
  }
  SECTION("runtimePatches contain invalid container") {
    CHECK(ValidateText(f, full, nullptr, Job(R"(
  runtimeRef: {name: rt}
  runtimePatches:
  - manager: trainer.kubeflow.org/test
    trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: {spec: {template: {spec: {containers: [{name: bad}]}}}}}]}}}
)"))
              .ends_with("must not have container that doesn't exist in the runtime job node"));
  }
  SECTION("runtimePatches contain envs for reserved container") {
    CHECK(ValidateText(f, full, nullptr, Job(R"(
  runtimeRef: {name: rt}
  runtimePatches:
  - manager: trainer.kubeflow.org/test
    trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: {spec: {template: {spec: {containers: [{name: node, env: [{name: A, value: b}]}]}}}}}]}}}
)"))
              .ends_with("must not have envs for the dataset-initializer, model-initializer, node "
                         "containers"));
  }
  SECTION("invalid RuntimePatches manager") {
    CHECK(ValidateText(f, full, nullptr,
                       Job("{runtimeRef: {name: rt}, runtimePatches: [{manager: kueue}]}")) ==
          "spec.runtimePatches.manager: Invalid value: \"kueue\": must be a domain-prefixed path "
          "(such as \"acme.io/foo\")");
  }

  constexpr char kPatched[] = R"(
  runtimeRef: {name: rt}
  suspend: %s
  runtimePatches:
  - manager: trainer.kubeflow.org/test
    trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: {spec: {template: {spec: {nodeSelector: {a: %s}}}}}}]}}}
)";
  auto patched = [&](bool suspend, std::string_view value) {
    char buf[1024];
    std::snprintf(buf, sizeof(buf), kPatched, suspend ? "true" : "false",
                  std::string(value).c_str());
    return Job(buf);
  };
  constexpr char kForbidden[] =
      "spec.runtimePatches: Forbidden: RuntimePatches can only be modified when the TrainJob is "
      "suspended before or after the update";
  SECTION("allow runtimePatches when creating a new trainJob") {
    CHECK(ValidateText(f, full, nullptr, patched(false, "x")).empty());
  }
  SECTION("allow updates to trainJob with no changes to runtimePatches") {
    api::TrainJob old_job = patched(false, "x");
    CHECK(ValidateText(f, full, &old_job, patched(false, "x")).empty());
  }
  SECTION("forbid changes to runtimePatches when trainJob is not suspended") {
    api::TrainJob old_job = patched(false, "x");
    CHECK(ValidateText(f, full, &old_job, patched(false, "y")) == kForbidden);
  }
  SECTION("allow changes to runtimePatches when trainJob is suspended and jobSet does not exist") {
    api::TrainJob old_job = patched(true, "x");
    CHECK(ValidateText(f, full, &old_job, patched(true, "y")).empty());
  }
  SECTION("allow atomic update: modify runtimePatches and unsuspend trainJob in a single request") {
    api::TrainJob old_job = patched(true, "x");
    CHECK(ValidateText(f, full, &old_job, patched(false, "y")).empty());
  }
  SECTION("allow atomic update: modify runtimePatches and suspend trainJob in a single request") {
    api::TrainJob old_job = patched(false, "x");
    CHECK(ValidateText(f, full, &old_job, patched(true, "y")).empty());
  }
  auto add_jobset = [&](std::string_view statuses) {
    REQUIRE(f.reader
                .Add(Yaml("{apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, metadata: {name: "
                          "test-job, namespace: default}, status: {replicatedJobsStatus: " +
                          std::string(statuses) + "}}"))
                .ok());
  };
  SECTION(
      "allow changes to runtimePatches when trainJob is suspended and jobSet exists but is "
      "inactive") {
    add_jobset("[{name: node, active: 0, ready: 0}]");
    api::TrainJob old_job = patched(true, "x");
    CHECK(ValidateText(f, full, &old_job, patched(true, "y")).empty());
  }
  SECTION(
      "forbid changes to runtimePatches when trainJob is suspended but jobSet has an active "
      "replicatedJob") {
    add_jobset("[{name: node, active: 1}]");
    api::TrainJob old_job = patched(true, "x");
    CHECK(ValidateText(f, full, &old_job, patched(true, "y")) ==
          "spec.runtimePatches: Forbidden: RuntimePatches cannot be modified when the JobSet's "
          "ReplicatedJob node is still active");
  }
  SECTION(
      "forbid changes to runtimePatches when trainJob is suspended but has multiple active "
      "replicatedJobs") {
    add_jobset("[{name: launcher, active: 1}, {name: node, active: 2}]");
    api::TrainJob old_job = patched(true, "x");
    CHECK(f.plugin.Validate(&full, &old_job, patched(true, "y")).errors.size() == 2);
  }
  SECTION(
      "forbid changes to runtimePatches when trainJob is suspended but jobSet cannot be checked "
      "due to a client error") {
    f.reader.SetError(api::kJobSetGVK, "default", "test-job", UnavailableError("boom"));
    api::TrainJob old_job = patched(true, "x");
    CHECK(ValidateText(f, full, &old_job, patched(true, "y")) ==
          "spec.runtimePatches: Internal error: boom");
  }
}

TEST_CASE("TestSyncParallelCount", "[jobset]") {
  Fixture f;
  SECTION("no action when info is nil") { CHECK(f.plugin.SyncParallelCount(nullptr).ok()); }
  SECTION("no action when template.spec is not JobSet") {
    framework::Info info;
    CHECK(f.plugin.SyncParallelCount(&info).ok());
  }
  framework::Info info = InfoBuilder()
                             .JobSetSpec(
                                 "{replicatedJobs: [{name: a, template: {spec: {parallelism: 1, "
                                 "completions: 5}}}, {name: b}]}")
                             .PodSet(PodSet("b").Count(3))
                             .PodSet(PodSet("a").Count(2))
                             .PodSet(PodSet("c").Count(9))
                             .PodSet(PodSet("d").NoCount())
                             .Build();
  REQUIRE(f.plugin.SyncParallelCount(&info).ok());
  const json::Value& rjobs = *info.template_spec.jobset_spec.Find("replicatedJobs");
  SECTION("parallelism and completions are synced for matching replicatedJob by name") {
    CHECK(Canon(*rjobs.at(0).Find("template")) == R"({"spec":{"completions":2,"parallelism":2}})");
  }
  SECTION("multiple podSets synced to corresponding replicatedJobs") {
    CHECK(
        Canon(info.template_spec.jobset_spec) ==
        R"({"replicatedJobs":[{"name":"a","template":{"spec":{"completions":2,"parallelism":2}}},{"name":"b","template":{"spec":{"completions":3,"parallelism":3}}}]})");
  }
  SECTION("podSet with nil count is skipped") { CHECK(rjobs.size() == 2); }
  SECTION("podSet with no matching replicatedJob name is skipped") {
    CHECK(Canon(rjobs).find("9") == std::string::npos);
  }
}

TEST_CASE("TestBuild", "[jobset]") {
  Fixture f;
  api::TrainJob job = Job("{runtimeRef: {name: rt}, suspend: true}");
  SECTION("init containers synced to JobSet replicated jobs") {
    framework::Info info =
        InfoBuilder()
            .JobSetSpec(
                "{replicatedJobs: [{name: node, template: {spec: {template: {spec: "
                "{initContainers: [{name: init}], containers: [{name: node}]}}}}}]}")
            .PodSet(PodSet("node")
                        .InitContainer("{name: init, image: i:1, command: [c], env: [{name: E, "
                                       "value: v}], ports: [{containerPort: 80}], volumeMounts: "
                                       "[{name: v, mountPath: /v}]}")
                        .Containers({"node"}))
            .Build();
    StatusOr<std::vector<json::Value>> objs = f.plugin.Build(&info, job);
    REQUIRE(objs.ok());
    REQUIRE(objs->size() == 1);
    const json::Value& pod =
        (*objs)[0]["spec"]["replicatedJobs"].at(0)["template"]["spec"]["template"]["spec"];
    CHECK(
        Canon(pod) ==
        R"({"containers":[{"name":"node"}],"initContainers":[{"command":["c"],"env":[{"name":"E","value":"v"}],"image":"i:1","name":"init","ports":[{"containerPort":80}],"volumeMounts":[{"mountPath":"/v","name":"v"}]}]})");
  }
  SECTION("multiple init containers synced") {
    framework::Info info =
        InfoBuilder()
            .JobSetSpec(
                "{replicatedJobs: [{name: node, template: {spec: {template: {spec: "
                "{initContainers: [{name: a}, {name: b}], containers: [{name: node}]}}}}}]}")
            .PodSet(PodSet("node")
                        .InitContainer("{name: a, env: [{name: A, value: '1'}]}")
                        .InitContainer("{name: b, env: [{name: B, value: '2'}]}")
                        .Containers({"node"}))
            .Build();
    StatusOr<std::vector<json::Value>> objs = f.plugin.Build(&info, job);
    REQUIRE(objs.ok());
    CHECK(
        Canon((*objs)[0]["spec"]["replicatedJobs"].at(
            0)["template"]["spec"]["template"]["spec"]["initContainers"]) ==
        R"([{"env":[{"name":"A","value":"1"}],"name":"a"},{"env":[{"name":"B","value":"2"}],"name":"b"}])");
  }
  SECTION("auto-append initContainers from podSet when missing from apply configuration") {
    framework::Info info =
        InfoBuilder()
            .JobSetSpec(
                "{replicatedJobs: [{name: node, template: {spec: {template: {spec: "
                "{containers: [{name: node}]}}}}}]}")
            .PodSet(PodSet("node")
                        .InitContainer("{name: flux-installer, image: f:1}")
                        .Containers({"node"}))
            .Build();
    StatusOr<std::vector<json::Value>> objs = f.plugin.Build(&info, job);
    REQUIRE(objs.ok());
    CHECK(Canon((*objs)[0]["spec"]["replicatedJobs"].at(
              0)["template"]["spec"]["template"]["spec"]["initContainers"]) ==
          R"([{"image":"f:1","name":"flux-installer"}])");
  }
  SECTION("jobset metadata and owner reference") {
    framework::Info info = InfoBuilder()
                               .JobSetSpec("{replicatedJobs: [{name: node}]}")
                               .Label("l", "v")
                               .PodSet(PodSet("node"))
                               .Build();
    StatusOr<std::vector<json::Value>> objs = f.plugin.Build(&info, job);
    REQUIRE(objs.ok());
    CHECK(
        Canon((*objs)[0]["metadata"]) ==
        R"({"labels":{"l":"v"},"name":"test-job","namespace":"default","ownerReferences":[{"apiVersion":"trainer.kubeflow.org/v1alpha1","blockOwnerDeletion":true,"controller":true,"kind":"TrainJob","name":"test-job","uid":"uid-1"}]})");
    CHECK((*objs)[0]["spec"]["suspend"].AsBool());
  }
  SECTION("running JobSets are never re-applied") {
    REQUIRE(f.reader
                .Add(Yaml("{apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, metadata: "
                          "{name: test-job, namespace: default}, spec: {suspend: false}}"))
                .ok());
    framework::Info info = SpecInfo("{replicatedJobs: [{name: node}]}");
    api::TrainJob running = Job("{runtimeRef: {name: rt}, suspend: false}");
    StatusOr<std::vector<json::Value>> objs = f.plugin.Build(&info, running);
    REQUIRE(objs.ok());
    CHECK(objs->empty());
    SECTION("but a suspended TrainJob re-applies it") {
      StatusOr<std::vector<json::Value>> again = f.plugin.Build(&info, job);
      REQUIRE(again.ok());
      CHECK(again->size() == 1);
    }
  }
  SECTION("fewer replicatedJobs than podSets is an error") {
    framework::Info info = InfoBuilder()
                               .JobSetSpec("{replicatedJobs: [{name: node}]}")
                               .PodSet(PodSet("node"))
                               .PodSet(PodSet("extra"))
                               .Build();
    CHECK(f.plugin.Build(&info, job).status().message() ==
          "runtime template has 1 replicatedJobs but runtime info has 2 podSets");
  }
}

json::Value BuildWith(std::string_view spec, const api::TrainJob& job,
                      const framework::Info& info = framework::Info()) {
  json::Value js = json::Value::Object();
  js.Set("spec", Yaml(spec));
  return jobset::Builder(std::move(js)).Initializer(job).Trainer(info, job).Build();
}

const json::Value& ContainerOf(const json::Value& js, size_t rjob) {
  return js.Find("spec")
      ->Find("replicatedJobs")
      ->at(rjob)
      .Find("template")
      ->Find("spec")
      ->Find("template")
      ->Find("spec")
      ->Find("containers")
      ->at(0);
}

TEST_CASE("TestBuilderInitializer", "[jobset]") {
  SECTION("dataset initializer with storageUri and secretRef") {
    json::Value js = BuildWith(kInitializerSpec, Job(R"(
  runtimeRef: {name: rt}
  initializer: {dataset: {storageUri: hf://d, secretRef: {name: s}}}
)"));
    const json::Value& c = ContainerOf(js, 0);
    CHECK(Canon(*c.Find("env")) == R"([{"name":"STORAGE_URI","value":"hf://d"}])");
    CHECK(Canon(*c.Find("envFrom")) == R"([{"secretRef":{"name":"s"}}])");
    CHECK(js["spec"]["replicatedJobs"].at(0)["replicas"].AsInt() == 1);
  }
  SECTION(
      "dataset initializer merges Dataset.Env with storageUri and upserts pre-existing container "
      "env") {
    json::Value js = BuildWith(kInitializerSpec, Job(R"(
  runtimeRef: {name: rt}
  initializer: {dataset: {storageUri: hf://d, env: [{name: STORAGE_URI, value: hf://override}, {name: X, value: 'y'}]}}
)"));
    CHECK(Canon(*ContainerOf(js, 0).Find("env")) ==
          R"([{"name":"STORAGE_URI","value":"hf://override"},{"name":"X","value":"y"}])");
  }
  SECTION("model initializer with storageUri and secretRef") {
    json::Value js = BuildWith(kInitializerSpec, Job(R"(
  runtimeRef: {name: rt}
  initializer: {model: {storageUri: hf://m, secretRef: {name: s}}}
)"));
    CHECK(EnvValue(*ContainerOf(js, 1).Find("env"), "STORAGE_URI") == "hf://m");
    CHECK(ContainerOf(js, 0).Find("env") == nullptr);
  }
  SECTION("dataset initializer ancestor with nil Initializer spec sets replicas to 1") {
    json::Value js = BuildWith(kInitializerSpec, Job("{runtimeRef: {name: rt}}"));
    CHECK(js["spec"]["replicatedJobs"].at(0)["replicas"].AsInt() == 1);
    CHECK(js["spec"]["replicatedJobs"].at(1)["replicas"].AsInt() == 1);
  }
  SECTION("no ancestor label skips modification") {
    json::Value js = BuildWith(
        "{replicatedJobs: [{name: dataset-initializer, template: {spec: "
        "{template: {spec: {containers: [{name: dataset-initializer}]}}}}}]}",
        Job("{runtimeRef: {name: rt}, initializer: {dataset: {storageUri: x}}}"));
    CHECK(
        Canon(js) ==
        R"({"spec":{"replicatedJobs":[{"name":"dataset-initializer","template":{"spec":{"template":{"spec":{"containers":[{"name":"dataset-initializer"}]}}}}}]}})");
  }
}

TEST_CASE("TestBuilderTrainer", "[jobset]") {
  SECTION("trainer ancestor with image command and args") {
    json::Value js = BuildWith(kInitializerSpec, Job(R"(
  runtimeRef: {name: rt}
  trainer: {image: tj:img, command: [python], args: [train.py]}
)"));
    const json::Value& c = ContainerOf(js, 2);
    CHECK(c.Find("image")->AsString() == "tj:img");
    CHECK(Canon(*c.Find("command")) == R"(["python"])");
    CHECK(Canon(*c.Find("args")) == R"(["train.py"])");
    CHECK(js["spec"]["replicatedJobs"].at(2)["replicas"].AsInt() == 1);
  }
  SECTION("trainer ancestor merges Trainer.Env and upserts duplicate container env keys") {
    json::Value js = BuildWith(kInitializerSpec, Job(R"(
  runtimeRef: {name: rt}
  trainer: {env: [{name: TEMPLATE, value: override}, {name: NEW}]}
)"));
    CHECK(Canon(*ContainerOf(js, 2).Find("env")) ==
          R"([{"name":"TEMPLATE","value":"override"},{"name":"NEW","value":""}])");
  }
  SECTION("trainer ancestor with nil Trainer spec sets replicas to 1") {
    json::Value js = BuildWith(kInitializerSpec, Job("{runtimeRef: {name: rt}}"));
    CHECK(js["spec"]["replicatedJobs"].at(2)["replicas"].AsInt() == 1);
    CHECK(ContainerOf(js, 2).Find("image")->AsString() == "rt:img");
  }
  SECTION("non-trainer ancestor is not modified") {
    json::Value js = BuildWith(
        "{replicatedJobs: [{name: node, replicas: 3, template: {spec: {template: {spec: "
        "{containers: [{name: node, image: a}]}}}}}]}",
        Job("{runtimeRef: {name: rt}, trainer: {image: b, env: [{name: X, value: 'y'}]}}"));
    CHECK(js["spec"]["replicatedJobs"].at(0)["replicas"].AsInt() == 3);
    CHECK(ContainerOf(js, 0).Find("image")->AsString() == "a");
    CHECK(ContainerOf(js, 0).Find("env") == nullptr);
  }
  SECTION("trainer ancestor with resourcesPerNode leaves merge to trainingruntime") {
    json::Value js = BuildWith(kInitializerSpec, Job(R"(
  runtimeRef: {name: rt}
  trainer: {resourcesPerNode: {limits: {cpu: 4}}}
)"));
    CHECK(ContainerOf(js, 2).Find("resources") == nullptr);
  }
  SECTION(
      "trainer ancestor with MPI runLauncherAsNode composes trainer fields without duplication") {
    framework::Info info = InfoBuilder().MLPolicy("{mpi: {runLauncherAsNode: true}}").Build();
    json::Value js = BuildWith(
        "{replicatedJobs: [{name: node, template: {metadata: {labels: "
        "{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}, spec: {template: {spec: "
        "{containers: [{name: node, image: a}]}}}}}]}",
        Job("{runtimeRef: {name: rt}, trainer: {image: b, env: [{name: X, value: 'y'}]}}"), info);
    CHECK(ContainerOf(js, 0).Find("image")->AsString() == "b");
    CHECK(EnvNames(*ContainerOf(js, 0).Find("env")) == "X");
  }
  SECTION("MPI runLauncherAsNode injects Trainer.Env into node container") {
    framework::Info info = InfoBuilder().MLPolicy("{mpi: {runLauncherAsNode: true}}").Build();
    json::Value js = BuildWith(
        "{replicatedJobs: [{name: node, template: {spec: {template: {spec: {containers: "
        "[{name: node, image: a}]}}}}}]}",
        Job("{runtimeRef: {name: rt}, trainer: {image: b, env: [{name: X, value: 'y'}]}}"), info);
    CHECK(ContainerOf(js, 0).Find("image")->AsString() == "a");
    CHECK(EnvNames(*ContainerOf(js, 0).Find("env")) == "X");
  }
}

TEST_CASE("TestBuilderPodLabels", "[jobset]") {
  json::Value js = json::Value::Object();
  js.Set("spec", Yaml("{replicatedJobs: [{name: a, template: {spec: {template: {metadata: "
                      "{labels: {keep: k}}}}}}, {name: b}]}"));
  js = jobset::Builder(std::move(js)).PodLabels({{"scheduling.x-k8s.io/pod-group", "tj"}}).Build();
  SECTION(
      "labels applied to every replicated job pod template when multiple replicated jobs exist") {
    CHECK(
        Canon(js["spec"]["replicatedJobs"]) ==
        R"([{"name":"a","template":{"spec":{"template":{"metadata":{"labels":{"keep":"k","scheduling.x-k8s.io/pod-group":"tj"}}}}}},{"name":"b","template":{"spec":{"template":{"metadata":{"labels":{"scheduling.x-k8s.io/pod-group":"tj"}}}}}}])");
  }
}

TEST_CASE("TestBuilderPodAnnotations", "[jobset]") {
  json::Value js = json::Value::Object();
  js.Set("spec", Yaml("{replicatedJobs: [{name: a}, {name: b}]}"));
  js = jobset::Builder(std::move(js))
           .PodAnnotations({{"scheduling.k8s.io/group-name", "tj"}})
           .Build();
  SECTION(
      "annotations applied to every replicated job pod template when multiple replicated jobs "
      "exist") {
    CHECK(js["spec"]["replicatedJobs"]
              .at(1)["template"]["spec"]["template"]["metadata"]["annotations"]
                    ["scheduling.k8s.io/group-name"]
              .AsString() == "tj");
  }
}

TEST_CASE("TestBuilderSuspend", "[jobset]") {
  auto suspended = [](std::optional<bool> s) {
    json::Value js = json::Value::Object();
    js.Set("spec", Yaml("{suspend: true}"));
    return Canon(jobset::Builder(std::move(js)).Suspend(s).Build());
  };
  SECTION("suspend set to true") { CHECK(suspended(true) == R"({"spec":{"suspend":true}})"); }
  SECTION("suspend set to false") { CHECK(suspended(false) == R"({"spec":{"suspend":false}})"); }
  SECTION("suspend set to nil leaves field unset") {
    CHECK(suspended(std::nullopt) == R"({"spec":{}})");
  }
}

TEST_CASE("TestTrainJobStatusPlugins", "[jobset]") {
  Fixture f;
  api::TrainJob job = Job("{runtimeRef: {name: rt}}");
  auto add = [&](std::string_view status) {
    REQUIRE(f.reader
                .Add(Yaml("{apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, metadata: {name: "
                          "test-job, namespace: default}, status: " +
                          std::string(status) + "}"))
                .ok());
  };
  SECTION("jobSet has not been finalized, yet") {
    add("{conditions: [{type: Completed, status: 'False'}]}");
    auto s = f.plugin.Status(job);
    REQUIRE(s.ok());
    REQUIRE(s->has_value());
    CHECK((*s)->conditions.empty());
    CHECK((*s)->jobs_status.empty());
  }
  SECTION("succeeded to obtain completed terminal condition") {
    add("{conditions: [{type: Completed, status: 'True', reason: AllJobsCompleted, message: "
        "jobset completed successfully, lastTransitionTime: '2026-01-02T00:00:00Z', "
        "observedGeneration: 3}]}");
    auto s = f.plugin.Status(job);
    REQUIRE(s.ok());
    REQUIRE((*s)->conditions.size() == 1);
    const api::Condition& c = (*s)->conditions[0];
    CHECK(c.type == "Complete");
    CHECK(c.status == "True");
    CHECK(c.reason == "AllJobsCompleted");
    CHECK(c.message == "jobset completed successfully");
    CHECK(c.last_transition_time == "2026-01-02T00:00:00Z");
    CHECK(c.observed_generation == 3);
  }
  SECTION("succeeded to obtain failed terminal condition") {
    add("{conditions: [{type: Failed, status: 'True', reason: FailedJobs, message: m}]}");
    auto s = f.plugin.Status(job);
    REQUIRE(s.ok());
    REQUIRE((*s)->conditions.size() == 1);
    CHECK((*s)->conditions[0].type == "Failed");
    CHECK((*s)->conditions[0].last_transition_time == "2026-01-01T00:00:00Z");
  }
  SECTION("JobSet with empty replicated jobs status") {
    add("{replicatedJobsStatus: []}");
    auto s = f.plugin.Status(job);
    REQUIRE(s.ok());
    CHECK((*s)->jobs_status.empty());
  }
  SECTION("succeeded to obtain JobsStatus from JobSet with multiple replicated jobs") {
    add("{replicatedJobsStatus: [{name: launcher, ready: 1, active: 1}, {name: node, ready: 2, "
        "succeeded: 3, failed: 4, active: 5, suspended: 6}]}");
    auto s = f.plugin.Status(job);
    REQUIRE(s.ok());
    REQUIRE((*s)->jobs_status.size() == 2);
    const api::JobStatus& n = (*s)->jobs_status[1];
    CHECK(n.name == "node");
    CHECK((n.ready == 2 && n.succeeded == 3 && n.failed == 4 && n.active == 5 && n.suspended == 6));
  }
  SECTION("missing JobSet of an unfinished TrainJob is an error") {
    CHECK(IsNotFound(f.plugin.Status(job).status()));
  }
  SECTION("missing JobSet of a finished TrainJob keeps the status") {
    job.status.conditions.push_back({"Complete", "True", "r", "m", "t", std::nullopt});
    auto s = f.plugin.Status(job);
    REQUIRE(s.ok());
    CHECK_FALSE(s->has_value());
  }
}

}  // namespace
}  // namespace trainer::plugins
