// runtime/core: snapshots, NewObjects, ValidateObjects, the registry, newRuntimeInfo helpers
// (upstream pkg/runtime/core/{snapshot,trainingruntime,clustertrainingruntime,registry}_test.go),
// by upstream case name.
#include <algorithm>
#include <catch2/catch.hpp>

#include "common/yaml/yaml.h"
#include "runtime/api/codec.h"
#include "runtime/api/kinds.h"
#include "runtime/core/registry.h"
#include "runtime/core/runtime_info.h"
#include "runtime/core/snapshot.h"
#include "runtime/framework/map_reader.h"
#include "runtime/framework/testing/testing.h"

namespace trainer::core {
namespace {

using testing::Canon;
using testing::EnvNames;
using testing::EnvValue;
using testing::Yaml;

constexpr char kRuntime[] = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: %s
metadata: {name: test-runtime, namespace: default, labels: {from: runtime}}
spec:
  mlPolicy: {numNodes: 100%s}
  template:
    metadata: {labels: {jobset-label: a}, annotations: {jobset-annotation: b}}
    spec:
      replicatedJobs:
      - name: dataset-initializer
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}}
          spec:
            template:
              spec:
                containers:
                - name: dataset-initializer
                  image: dataset:img
                  volumeMounts: [{name: initializer, mountPath: /workspace/dataset}]
                volumes: [{name: initializer, persistentVolumeClaim: {claimName: initializer}}]
      - name: model-initializer
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: model-initializer}}
          spec:
            template:
              spec:
                containers:
                - name: model-initializer
                  image: model:img
                  volumeMounts: [{name: initializer, mountPath: /workspace/model}]
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: runtime:img
                  command: [echo, runtime]
                  env: [{name: TEMPLATE, value: t}]
                  resources: {requests: {cpu: 1, memory: 4Gi}}
)";

json::Value RuntimeDoc(std::string_view kind = "TrainingRuntime", std::string_view torch = "") {
  char buf[4096];
  std::snprintf(buf, sizeof(buf), kRuntime, std::string(kind).c_str(), std::string(torch).c_str());
  json::Value doc = Yaml(buf);
  if (kind == "ClusterTrainingRuntime") {
    doc["metadata"].Erase("namespace");
  }
  return doc;
}

api::TrainJob Job(std::string_view kind, std::string_view spec_extra = "") {
  return testing::TrainJob(
      "metadata: {name: test-job, namespace: default, uid: uid-1}\nspec:\n  runtimeRef: {name: "
      "test-runtime, kind: " +
      std::string(kind) + "}\n" + std::string(spec_extra));
}

struct Env {
  framework::MapReader reader;
  std::unique_ptr<Runtimes> runtimes;
  Env() {
    auto r = Runtimes::New(reader, [] { return std::string("2026-01-01T00:00:00Z"); });
    REQUIRE(r.ok());
    runtimes = std::move(r).value();
  }
  Runtime& TR() { return *runtimes->Find(kTrainingRuntimeKey); }
  Runtime& CTR() { return *runtimes->Find(kClusterTrainingRuntimeKey); }
};

const json::Value& Rjob(const json::Value& jobset, size_t i) {
  return jobset.Find("spec")->Find("replicatedJobs")->at(i);
}
const json::Value& PodOf(const json::Value& jobset, size_t i) {
  return *Rjob(jobset, i).Find("template")->Find("spec")->Find("template")->Find("spec");
}
const json::Value& NodeContainer(const json::Value& jobset) {
  return PodOf(jobset, 2).Find("containers")->at(0);
}

TEST_CASE("TestNewRuntimeRegistry", "[core]") {
  Env env;
  SECTION("registry is initialized") {
    CHECK(env.runtimes->Keys() ==
          std::vector<std::string>{kClusterTrainingRuntimeKey, kTrainingRuntimeKey});
  }
  SECTION("TrainingRuntime is registered correctly") {
    CHECK(env.runtimes->ForTrainJob(Job("TrainingRuntime")) == &env.TR());
  }
  SECTION("ClusterTrainingRuntime is registered correctly") {
    CHECK(env.runtimes->ForTrainJob(Job("ClusterTrainingRuntime")) == &env.CTR());
  }
  SECTION("unknown kinds are unsupported") {
    CHECK(env.runtimes->ForTrainJob(Job("Foo")) == nullptr);
  }
  SECTION("watches are not duplicated across kinds") {
    std::vector<framework::Watch> all = env.runtimes->Watches();
    for (size_t i = 0; i < all.size(); ++i) {
      for (size_t j = i + 1; j < all.size(); ++j) {
        CHECK_FALSE(all[i] == all[j]);
      }
    }
    // The runtime snapshot is the runtime's own.
    CHECK(all[0] == framework::Watch{.gvk = api::kConfigMapGVK});
    CHECK(std::any_of(all.begin(), all.end(),
                      [](const framework::Watch& w) { return w.gvk == api::kJobSetGVK; }));
    CHECK(env.runtimes->Find(kClusterTrainingRuntimeKey)->Watches().empty());
  }
}

TEST_CASE("TestGetRuntimeSnapshot", "[core][snapshot]") {
  framework::MapReader reader;
  api::TrainJob ctr_job = Job("ClusterTrainingRuntime");
  SECTION("successfully retrieves ClusterTrainingRuntime snapshot from ConfigMap") {
    REQUIRE(reader.Add(NewRuntimeSnapshot(ctr_job, RuntimeDoc("ClusterTrainingRuntime"))).ok());
    auto rt = GetRuntimeSnapshot(reader, ctr_job);
    REQUIRE(rt.ok());
    CHECK(rt->kind == "ClusterTrainingRuntime");
    CHECK(rt->metadata.name == "test-runtime");
    CHECK(rt->spec.ml_policy->num_nodes == 100);
  }
  SECTION("successfully retrieves TrainingRuntime snapshot from ConfigMap") {
    api::TrainJob job = Job("TrainingRuntime");
    REQUIRE(reader.Add(NewRuntimeSnapshot(job, RuntimeDoc("TrainingRuntime"))).ok());
    auto rt = GetRuntimeSnapshot(reader, job);
    REQUIRE(rt.ok());
    CHECK(rt->kind == "TrainingRuntime");
  }
  SECTION("returns not found error when ConfigMap does not exist") {
    CHECK(IsNotFound(GetRuntimeSnapshot(reader, ctr_job).status()));
  }
  SECTION("returns error when ConfigMap is not owned and controlled by the TrainJob") {
    json::Value cm = NewRuntimeSnapshot(ctr_job, RuntimeDoc("ClusterTrainingRuntime"));
    cm["metadata"]["ownerReferences"].at(0).Set("uid", json::Value("other"));
    REQUIRE(reader.Add(std::move(cm)).ok());
    CHECK(GetRuntimeSnapshot(reader, ctr_job).status().message() ==
          "invalid runtime snapshot: a snapshot configmap exists but is owned by another object");
  }
  SECTION("returns error when ConfigMap is missing runtime data key") {
    json::Value cm = NewRuntimeSnapshot(ctr_job, RuntimeDoc("ClusterTrainingRuntime"));
    cm["data"].Erase("runtime");
    REQUIRE(reader.Add(std::move(cm)).ok());
    CHECK(GetRuntimeSnapshot(reader, ctr_job).status().message() ==
          "invalid runtime snapshot: snapshot ConfigMap missing \"runtime\" data key");
  }
  SECTION("returns error when ConfigMap contains invalid YAML") {
    json::Value cm = NewRuntimeSnapshot(ctr_job, RuntimeDoc("ClusterTrainingRuntime"));
    cm["data"].Set("runtime", json::Value("a: [b"));
    REQUIRE(reader.Add(std::move(cm)).ok());
    CHECK(GetRuntimeSnapshot(reader, ctr_job)
              .status()
              .message()
              .starts_with("invalid runtime snapshot: unable to unmarshal the snapshot: "));
  }
  SECTION("returns error when snapshot runtime name does not match RuntimeRef") {
    json::Value doc = RuntimeDoc("ClusterTrainingRuntime");
    doc["metadata"].Set("name", json::Value("other"));
    REQUIRE(reader.Add(NewRuntimeSnapshot(ctr_job, doc)).ok());
    CHECK(GetRuntimeSnapshot(reader, ctr_job).status().message() ==
          "invalid runtime snapshot: the snapshot refers to the wrong runtime: expecting a runtime "
          "with name, api group and kind of \"test-runtime\", \"trainer.kubeflow.org\", "
          "\"ClusterTrainingRuntime\" but found runtime with name, api group and kind of "
          "\"other\", \"trainer.kubeflow.org\", \"ClusterTrainingRuntime\"");
  }
  SECTION("returns error when snapshot runtime kind does not match RuntimeRef") {
    REQUIRE(reader.Add(NewRuntimeSnapshot(ctr_job, RuntimeDoc("TrainingRuntime"))).ok());
    CHECK(GetRuntimeSnapshot(reader, ctr_job)
              .status()
              .message()
              .ends_with("but found runtime with name, api group and kind of \"test-runtime\", "
                         "\"trainer.kubeflow.org\", \"TrainingRuntime\""));
  }
}

TEST_CASE("TestCreateRuntimeSnapshot", "[core][snapshot]") {
  api::TrainJob job = Job("ClusterTrainingRuntime");
  SECTION("successfully creates snapshot ConfigMap for ClusterTrainingRuntime") {
    json::Value cm = NewRuntimeSnapshot(job, RuntimeDoc("ClusterTrainingRuntime"));
    CHECK(
        Canon(cm["metadata"]) ==
        R"({"name":"test-job-runtime-snapshot","namespace":"default","ownerReferences":[{"apiVersion":"trainer.kubeflow.org/v1alpha1","blockOwnerDeletion":true,"controller":true,"kind":"TrainJob","name":"test-job","uid":"uid-1"}]})");
    std::string text = cm["data"]["runtime"].AsString();
    CHECK(text.starts_with(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\n"));
    CHECK(text.find("name: test-runtime") != std::string::npos);
  }
}

TEST_CASE("TestRuntimeSnapshotRoundTrip", "[core][snapshot]") {
  framework::MapReader reader;
  api::TrainJob job = Job("TrainingRuntime");
  json::Value doc = RuntimeDoc("TrainingRuntime");
  json::Value cm = NewRuntimeSnapshot(job, doc);
  auto back = yaml::ParseYaml(cm["data"]["runtime"].AsString());
  REQUIRE(back.ok());
  CHECK(*back == doc);
}

TEST_CASE("TestTrainingRuntimeNewObjects", "[core]") {
  Env env;
  REQUIRE(env.reader.Add(RuntimeDoc("TrainingRuntime")).ok());
  SECTION(
      "succeeded to build JobSet with NumNodes from the Runtime and container from the TrainJob.") {
    auto objs = env.TR().NewObjects(Job("TrainingRuntime", R"(
  suspend: true
  trainer: {image: tj:img, command: [python], args: [main.py], env: [{name: TRAIN_JOB, value: v}]}
)"));
    REQUIRE(objs.ok());
    REQUIRE(objs->size() == 2);
    CHECK((*objs)[0]["kind"].AsString() == "ConfigMap");
    const json::Value& js = (*objs)[1];
    CHECK(js.Find("kind")->AsString() == "JobSet");
    CHECK(Canon(*js.Find("metadata")->Find("labels")) == R"({"jobset-label":"a"})");
    CHECK(Canon(*js.Find("metadata")->Find("annotations")) == R"({"jobset-annotation":"b"})");
    CHECK(js.Find("spec")->Find("suspend")->AsBool());
    CHECK(Rjob(js, 2).Find("template")->Find("spec")->Find("parallelism")->AsInt() == 100);
    CHECK(Rjob(js, 2).Find("template")->Find("spec")->Find("completions")->AsInt() == 100);
    CHECK(Rjob(js, 0).Find("template")->Find("spec")->Find("parallelism")->AsInt() == 1);
    CHECK(Rjob(js, 2).Find("replicas")->AsInt() == 1);
    const json::Value& node = NodeContainer(js);
    CHECK(node.Find("image")->AsString() == "tj:img");
    CHECK(Canon(*node.Find("command")) == R"(["python"])");
    CHECK(Canon(*node.Find("args")) == R"(["main.py"])");
    CHECK(EnvNames(*node.Find("env")) == "TEMPLATE,TRAIN_JOB");
  }
  SECTION("succeeded to build JobSet with TrainJob's RuntimePatches.") {
    auto objs = env.TR().NewObjects(Job("TrainingRuntime", R"(
  runtimePatches:
  - manager: trainer.kubeflow.org/test
    trainingRuntimeSpec:
      template:
        spec:
          replicatedJobs:
          - name: node
            template:
              spec:
                template:
                  spec:
                    nodeSelector: {disk: ssd}
                    tolerations: [{key: gpu, operator: Exists}]
                    containers: [{name: node, volumeMounts: [{name: data, mountPath: /data}]}]
                    volumes: [{name: data, emptyDir: {}}]
)"));
    REQUIRE(objs.ok());
    const json::Value& pod = PodOf((*objs)[1], 2);
    CHECK(Canon(*pod.Find("nodeSelector")) == R"({"disk":"ssd"})");
    CHECK(Canon(*pod.Find("volumes")) == R"([{"emptyDir":{},"name":"data"}])");
    CHECK(Canon(*pod.Find("containers")->at(0).Find("volumeMounts")) ==
          R"([{"mountPath":"/data","name":"data"}])");
    CHECK(pod.Find("containers")->at(0).Find("image")->AsString() == "runtime:img");
  }
  SECTION(
      "succeeded to build JobSet with nil affinity overrides from the TrainJob's RuntimePatches.") {
    json::Value doc = RuntimeDoc("TrainingRuntime");
    doc["metadata"].Set("name", json::Value("with-affinity"));
    doc["spec"]["template"]["spec"]["replicatedJobs"]
        .at(2)["template"]["spec"]["template"]["spec"]
        .Set("affinity",
             Yaml("{nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: []}}"));
    REQUIRE(env.reader.Add(std::move(doc)).ok());
    api::TrainJob job = Job("TrainingRuntime", R"(
  runtimePatches:
  - manager: trainer.kubeflow.org/test
    trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: {spec: {template: {spec: {affinity: null, nodeSelector: {a: b}}}}}}]}}}
)");
    job.spec.runtime_ref.name = "with-affinity";
    auto objs = env.TR().NewObjects(job);
    REQUIRE(objs.ok());
    CHECK(PodOf((*objs)[1], 2).Find("affinity") != nullptr);
    CHECK(Canon(*PodOf((*objs)[1], 2).Find("nodeSelector")) == R"({"a":"b"})");
  }
  SECTION(
      "succeeded to build JobSet with securityContext overrides from the TrainJob's "
      "RuntimePatches.") {
    auto objs = env.TR().NewObjects(Job("TrainingRuntime", R"(
  runtimePatches:
  - manager: trainer.kubeflow.org/test
    trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: {spec: {template: {spec: {securityContext: {runAsUser: 1000}, containers: [{name: node, securityContext: {runAsNonRoot: true}}]}}}}}]}}}
)"));
    REQUIRE(objs.ok());
    CHECK(Canon(*PodOf((*objs)[1], 2).Find("securityContext")) == R"({"runAsUser":1000})");
    CHECK(Canon(*NodeContainer((*objs)[1]).Find("securityContext")) == R"({"runAsNonRoot":true})");
  }
  SECTION(
      "succeeded to build JobSet with TrainJob's RuntimePatches containing duplicate patches for "
      "same job") {
    auto objs = env.TR().NewObjects(Job("TrainingRuntime", R"(
  runtimePatches:
  - manager: trainer.kubeflow.org/a
    trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: {spec: {template: {spec: {nodeSelector: {a: b}}}}}}]}}}
  - manager: trainer.kubeflow.org/b
    trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: {spec: {template: {spec: {nodeSelector: {a: b}}}}}}]}}}
)"));
    REQUIRE(objs.ok());
    CHECK(Canon(*PodOf((*objs)[1], 2).Find("nodeSelector")) == R"({"a":"b"})");
    CHECK((*objs)[1]["spec"]["replicatedJobs"].size() == 3);
  }
  SECTION(
      "succeeded to build JobSet with labels and annotations overrides from the TrainJob's "
      "RuntimePatches.") {
    auto objs = env.TR().NewObjects(Job("TrainingRuntime", R"(
  runtimePatches:
  - manager: trainer.kubeflow.org/a
    trainingRuntimeSpec: {template: {metadata: {labels: {jobset-label: patched, extra: x}}}}
  - manager: trainer.kubeflow.org/b
    trainingRuntimeSpec: {template: {metadata: {labels: {extra: later}, annotations: {note: v}}}}
)"));
    REQUIRE(objs.ok());
    const json::Value& meta = *(*objs)[1].Find("metadata");
    CHECK(Canon(*meta.Find("labels")) == R"({"extra":"later","jobset-label":"patched"})");
    CHECK(Canon(*meta.Find("annotations")) == R"({"jobset-annotation":"b","note":"v"})");
  }
  SECTION(
      "succeeded to build JobSet with TrainJob's RuntimePatches targeting the same job with "
      "different values") {
    auto objs = env.TR().NewObjects(Job("TrainingRuntime", R"(
  runtimePatches:
  - manager: trainer.kubeflow.org/a
    trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: {spec: {template: {spec: {nodeSelector: {a: first, b: kept}}}}}}]}}}
  - manager: trainer.kubeflow.org/b
    trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: {spec: {template: {spec: {nodeSelector: {a: second}}}}}}, {name: dataset-initializer, template: {spec: {template: {spec: {nodeSelector: {d: x}}}}}}]}}}
)"));
    REQUIRE(objs.ok());
    const json::Value& js = (*objs)[1];
    CHECK(Canon(*PodOf(js, 2).Find("nodeSelector")) == R"({"a":"second","b":"kept"})");
    // replicatedJobs keep the template order even though the patch listed node first.
    CHECK(Rjob(js, 0).Find("name")->AsString() == "dataset-initializer");
    CHECK(Canon(*PodOf(js, 0).Find("nodeSelector")) == R"({"d":"x"})");
  }
  SECTION("succeeded to build JobSet with dataset and model initializer from the TrainJob.") {
    auto objs = env.TR().NewObjects(Job("TrainingRuntime", R"(
  initializer:
    dataset: {storageUri: hf://dataset, env: [{name: D, value: d}], secretRef: {name: ds}}
    model: {storageUri: hf://model}
)"));
    REQUIRE(objs.ok());
    const json::Value& js = (*objs)[1];
    const json::Value& dataset = PodOf(js, 0).Find("containers")->at(0);
    CHECK(Canon(*dataset.Find("env")) ==
          R"([{"name":"STORAGE_URI","value":"hf://dataset"},{"name":"D","value":"d"}])");
    CHECK(Canon(*dataset.Find("envFrom")) == R"([{"secretRef":{"name":"ds"}}])");
    CHECK(EnvValue(*PodOf(js, 1).Find("containers")->at(0).Find("env"), "STORAGE_URI") ==
          "hf://model");
  }
  SECTION("succeeded to build JobSet with Torch values from the TrainJob") {
    framework::MapReader reader;
    REQUIRE(reader.Add(RuntimeDoc("TrainingRuntime", ", torch: {}")).ok());
    auto runtimes = Runtimes::New(reader, [] { return std::string("now"); });
    REQUIRE(runtimes.ok());
    auto objs = (*runtimes)->Find(kTrainingRuntimeKey)->NewObjects(Job("TrainingRuntime", R"(
  trainer: {numNodes: 2, env: [{name: TRAIN_JOB, value: v}], resourcesPerNode: {requests: {cpu: 3}}}
)"));
    REQUIRE(objs.ok());
    const json::Value& node = NodeContainer((*objs)[1]);
    CHECK(EnvNames(*node.Find("env")) ==
          "TEMPLATE,TRAIN_JOB,PET_NNODES,PET_NPROC_PER_NODE,PET_NODE_RANK,PET_MASTER_ADDR,"
          "PET_MASTER_PORT");
    CHECK(EnvValue(*node.Find("env"), "PET_NNODES") == "2");
    CHECK(EnvValue(*node.Find("env"), "PET_NPROC_PER_NODE") == "3");
    CHECK(Canon(*node.Find("ports")) == R"([{"containerPort":29500}])");
    CHECK(Canon(*node.Find("resources")) == R"({"requests":{"cpu":"3","memory":"4Gi"}})");
    CHECK(Rjob((*objs)[1], 2).Find("template")->Find("spec")->Find("parallelism")->AsInt() == 2);
  }
  SECTION("succeeded to build JobSet with Torch values from the Runtime and envs.") {
    framework::MapReader reader;
    json::Value doc = RuntimeDoc("TrainingRuntime", ", torch: {}");
    doc["spec"]["template"]["spec"]["replicatedJobs"]
        .at(2)["template"]["spec"]["template"]["spec"]["containers"]
        .at(0)
        .Set("env", Yaml("[{name: TRAIN_JOB, value: original}, "
                         "{name: RUNTIME, value: 'test:runtime'}]"));
    REQUIRE(reader.Add(std::move(doc)).ok());
    auto runtimes = Runtimes::New(reader, [] { return std::string("now"); });
    REQUIRE(runtimes.ok());
    auto objs = (*runtimes)->Find(kTrainingRuntimeKey)->NewObjects(Job("TrainingRuntime", R"(
  trainer:
    image: test:trainjob
    command: [trainjob]
    args: [trainjob]
    env: [{name: TRAIN_JOB, value: override}, {name: TRAIN_JOB_CUSTOM, value: 'test:trainjob'}]
    resourcesPerNode: {requests: {cpu: 1, memory: 4Gi}}
)"));
    REQUIRE(objs.ok());
    const json::Value& node = NodeContainer((*objs)[1]);
    CHECK(EnvNames(*node.Find("env")) ==
          "TRAIN_JOB,RUNTIME,TRAIN_JOB_CUSTOM,PET_NNODES,PET_NPROC_PER_NODE,PET_NODE_RANK,"
          "PET_MASTER_ADDR,PET_MASTER_PORT");
    CHECK(EnvValue(*node.Find("env"), "TRAIN_JOB") == "override");
    CHECK(EnvValue(*node.Find("env"), "PET_NNODES") == "100");
    CHECK(EnvValue(*node.Find("env"), "PET_NPROC_PER_NODE") == "1");
    CHECK(node.Find("image")->AsString() == "test:trainjob");
  }
  SECTION("merged resourcesPerNode keeps runtime resources when trainjob sets gpu only") {
    auto objs = env.TR().NewObjects(Job("TrainingRuntime", R"(
  trainer: {resourcesPerNode: {limits: {nvidia.com/gpu: 1}}}
)"));
    REQUIRE(objs.ok());
    CHECK(Canon(*NodeContainer((*objs)[1]).Find("resources")) ==
          R"({"limits":{"nvidia.com/gpu":"1"},"requests":{"cpu":1,"memory":"4Gi"}})");
  }
  SECTION("the snapshot is used rather than the live runtime") {
    api::TrainJob job = Job("TrainingRuntime");
    json::Value frozen = RuntimeDoc("TrainingRuntime");
    frozen["spec"]["template"]["metadata"]["labels"].Set("jobset-label", json::Value("frozen"));
    REQUIRE(env.reader.Add(NewRuntimeSnapshot(job, frozen)).ok());
    auto objs = env.TR().NewObjects(job);
    REQUIRE(objs.ok());
    REQUIRE(objs->size() == 1);  // no new snapshot
    CHECK((*objs)[0]["metadata"]["labels"]["jobset-label"].AsString() == "frozen");
  }
  SECTION("missing trainingRuntime resource") {
    api::TrainJob job = Job("TrainingRuntime");
    job.spec.runtime_ref.name = "absent";
    CHECK(
        env.TR().NewObjects(job).status().message() ==
        "TrainingRuntime specified in TrainJob is not found: trainingruntimes.trainer.kubeflow.org "
        "\"absent\" not found");
  }
}

TEST_CASE("TestTrainingRuntimeNewObjects (torchtune)", "[core]") {
  framework::MapReader reader;
  json::Value doc = RuntimeDoc("ClusterTrainingRuntime", ", torch: {}");
  doc["metadata"].Set("name", json::Value("torchtune-llama3.2-1b"));
  doc["spec"]["mlPolicy"].Set("numNodes", json::Value(1));
  json::Value& node = doc["spec"]["template"]["spec"]["replicatedJobs"]
                          .at(2)["template"]["spec"]["template"]["spec"]["containers"]
                          .at(0);
  node.Set("command",
           Yaml("[tune, run, --rdzv_endpoint=localhost:29500, full_finetune_distributed, "
                "--config, llama3_2/1B_full, output_dir=/workspace/output, "
                "tokenizer.path=/workspace/model/tokenizer.model, "
                "checkpointer.checkpoint_dir=/workspace/model]"));
  node.Set("resources", Yaml("{limits: {nvidia.com/gpu: 2}}"));
  REQUIRE(reader.Add(std::move(doc)).ok());
  auto runtimes = Runtimes::New(reader, [] { return std::string("now"); });
  REQUIRE(runtimes.ok());
  auto command = [&](std::string_view args) {
    api::TrainJob job = testing::TrainJob(
        "metadata: {name: tune, namespace: default}\nspec:\n  runtimeRef: {name: "
        "torchtune-llama3.2-1b}\n  trainer: {command: [tune, run], args: " +
        std::string(args) + "}\n");
    auto objs = (*runtimes)->Find(kClusterTrainingRuntimeKey)->NewObjects(job);
    REQUIRE(objs.ok());
    std::string out;
    for (const json::Value& a : NodeContainer((*objs)[1]).Find("command")->elements()) {
      out += (out.empty() ? "" : " ") + a.AsString();
    }
    return out;
  };
  constexpr char kTail[] =
      " output_dir=/workspace/output tokenizer.path=/workspace/model/tokenizer.model "
      "checkpointer.checkpoint_dir=/workspace/model";
  SECTION("succeeded to build JobSet with TorchTune values from the TrainJob") {
    CHECK(command("[]") == std::string("tune run --rdzv_endpoint=tune-node-0-0.tune:29500 "
                                       "full_finetune_distributed --config llama3_2/1B_full") +
                               kTail);
  }
  SECTION("succeeded to build Jobset with TorchTune values from the TrainJob (LoRA)") {
    CHECK(command("['model.lora_attn_modules=[q_proj,v_proj]']") ==
          std::string("tune run --rdzv_endpoint=tune-node-0-0.tune:29500 "
                      "lora_finetune_distributed --config llama3_2/1B_lora") +
              kTail);
  }
  SECTION("succeeded to build Jobset with TorchTune values from the TrainJob (QLoRA)") {
    CHECK(command("['model.lora_attn_modules=[q_proj,v_proj]', model.quantize_base=True]") ==
          std::string("tune run --rdzv_endpoint=tune-node-0-0.tune:29500 "
                      "lora_finetune_distributed --config llama3_2/1B_qlora") +
              kTail);
  }
  SECTION("succeeded to build Jobset with TorchTune values from the TrainJob (DoRA)") {
    CHECK(command("['model.lora_attn_modules=[q_proj,v_proj]', model.quantize_base=True, "
                  "model.use_dora=True]") ==
          std::string("tune run --rdzv_endpoint=tune-node-0-0.tune:29500 "
                      "lora_finetune_distributed --config llama3_2/1B_lora") +
              kTail);
  }
}

TEST_CASE("TestRuntimeInfo", "[core]") {
  Env env;
  SECTION("invalid template type returns error") {
    api::TrainJob job = Job("TrainingRuntime");
    api::TrainingRuntimeSpec spec;
    spec.template_ = json::Value("not a template");
    CHECK(env.TR().RuntimeInfo(job, spec).status().message() == "unsupported runtimeTemplateSpec");
  }
}

TEST_CASE("TestNewInfo", "[core]") {
  api::TrainingRuntime rt = testing::Runtime(R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: rt}
spec:
  mlPolicy: {numNodes: 3}
  template:
    metadata: {labels: {l: v}}
    spec:
      replicatedJobs:
      - name: launcher
        template:
          spec:
            parallelism: 0
            template:
              spec:
                initContainers: [{name: init, image: init:1, command: [a]}]
                containers: [{name: main, image: main:1, command: [b], ports: [{containerPort: 22}]}]
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {parallelism: 7, template: {spec: {containers: [{name: node, resources: {requests: {cpu: 2}}}]}}}
)");
  auto info = NewRuntimeInfo(Job("TrainingRuntime"), rt.spec.template_, rt.spec.ml_policy,
                             rt.spec.pod_group_policy);
  REQUIRE(info.ok());
  SECTION("all arguments are specified") {
    CHECK(info->labels == std::map<std::string, std::string>{{"l", "v"}});
    REQUIRE(info->template_spec.pod_sets.size() == 2);
    CHECK(*info->template_spec.pod_sets[0].count == 1);  // parallelism 0 becomes 1
    CHECK(*info->template_spec.pod_sets[1].count == 3);  // mlPolicy.numNodes for the trainer
    CHECK(info->template_spec.pod_sets[1].ancestor == "trainer");
    CHECK(Canon(info->template_spec.pod_sets[1].single_pod_requests) == R"({"cpu":"2"})");
  }
  SECTION("image and command are extracted from containers and init containers") {
    const framework::PodSet& ps = info->template_spec.pod_sets[0];
    CHECK(ps.init_containers[0].image == "init:1");
    CHECK(ps.init_containers[0].command == std::vector<std::string>{"a"});
    CHECK(ps.containers[0].image == "main:1");
    CHECK(Canon(ps.containers[0].ports) == R"([{"containerPort":22,"protocol":"TCP"}])");
  }
}

// Everything NewRuntimeInfo fills, as canonical JSON, to compare two Infos.
json::Value ContainersJson(const std::vector<framework::Container>& cs) {
  json::Value out = json::Value::Array();
  for (const framework::Container& c : cs) {
    json::Value j = json::Value::Object();
    j.Set("name", json::Value(c.name));
    j.Set("image", json::Value(c.image));
    j.Set("command", json::Value::StringArray(c.command));
    j.Set("env", c.env.Clone());
    j.Set("ports", c.ports.Clone());
    j.Set("volumeMounts", c.volume_mounts.Clone());
    out.PushBack(std::move(j));
  }
  return out;
}

std::string InfoText(const StatusOr<framework::Info>& info) {
  if (!info.ok()) return "error: " + info.status().ToString();
  json::Value j = json::Value::Object();
  for (const auto& [k, v] : info->labels) j["labels"].Set(k, json::Value(v));
  for (const auto& [k, v] : info->annotations) j["annotations"].Set(k, json::Value(v));
  const framework::RuntimePolicy& policy = info->runtime_policy;
  j.Set("mlPolicy",
        policy.ml_policy ? json::Value(policy.ml_policy->num_nodes.value_or(-1)) : json::Value());
  j.Set("podGroupPolicy", json::Value(policy.pod_group_policy.has_value()));
  j.Set("jobsetSpec", info->template_spec.jobset_spec.Clone());
  json::Value sets = json::Value::Array();
  for (const framework::PodSet& ps : info->template_spec.pod_sets) {
    json::Value p = json::Value::Object();
    p.Set("name", json::Value(ps.name));
    p.Set("ancestor", ps.ancestor ? json::Value(*ps.ancestor) : json::Value());
    p.Set("count", ps.count ? json::Value(*ps.count) : json::Value());
    p.Set("initContainers", ContainersJson(ps.init_containers));
    p.Set("containers", ContainersJson(ps.containers));
    p.Set("volumes", ps.volumes.Clone());
    p.Set("network", json::Value(ps.network.has_value()));
    p.Set("singlePodRequests", ps.single_pod_requests.Clone());
    sets.PushBack(std::move(p));
  }
  j.Set("podSets", std::move(sets));
  return Canon(j);
}

std::string InfoText(const StatusOr<RuntimeInfoCache::SharedInfo>& info) {
  if (!info.ok()) return "error: " + info.status().ToString();
  return InfoText(StatusOr<framework::Info>((*info)->Clone()));
}

// The `node` container of RuntimeDoc().
json::Value& RuntimeNode(json::Value& doc) {
  json::Value& rjob = doc["spec"]["template"]["spec"]["replicatedJobs"].at(2);
  return rjob["template"]["spec"]["template"]["spec"]["containers"].at(0);
}

std::shared_ptr<const api::TrainingRuntime> Versioned(std::string_view uid, std::string_view rv,
                                                      std::string_view image = "runtime:img") {
  json::Value doc = RuntimeDoc();
  doc["metadata"].Set("uid", json::Value(uid));
  doc["metadata"].Set("resourceVersion", json::Value(rv));
  RuntimeNode(doc).Set("image", json::Value(image));
  StatusOr<api::TrainingRuntime> rt = api::DecodeTrainingRuntime(doc);
  REQUIRE(rt.ok());
  return std::make_shared<const api::TrainingRuntime>(std::move(rt).value());
}

StatusOr<framework::Info> Uncached(const api::TrainJob& job, const api::TrainingRuntime& rt) {
  return NewRuntimeInfo(job, rt.spec.template_, rt.spec.ml_policy, rt.spec.pod_group_policy);
}

constexpr char kResources[] =
    "  trainer: {resourcesPerNode: {requests: {cpu: 3}, limits: {memory: 8Gi}}}\n";
constexpr char kPatches[] = R"(  runtimePatches:
  - manager: example.com/m
    trainingRuntimeSpec:
      template:
        metadata: {labels: {patched: "yes"}}
        spec:
          replicatedJobs:
          - name: node
            template: {spec: {template: {spec: {nodeSelector: {pool: gpu}}}}}
)";

TEST_CASE("RuntimeInfoCache shares what NewRuntimeInfo computes, for TrainJobs adding nothing",
          "[core][cache]") {
  RuntimeInfoCache cache;
  auto rt = Versioned("uid-a", "1");
  json::Value mpi_doc = RuntimeDoc("TrainingRuntime", ", mpi: {runLauncherAsNode: true}");
  mpi_doc["metadata"].Set("name", json::Value("mpi"));
  mpi_doc["metadata"].Set("uid", json::Value("uid-mpi"));
  mpi_doc["metadata"].Set("resourceVersion", json::Value("1"));
  auto mpi = std::make_shared<const api::TrainingRuntime>(*api::DecodeTrainingRuntime(mpi_doc));
  const std::vector<std::pair<std::string, bool>> specs = {
      {"", true},
      {kResources, false},
      {kPatches, false},
      {std::string(kResources) + kPatches, false},
      {"  trainer: {numNodes: 5, image: other:img, resourcesPerNode: null}\n", true},
      {"  trainer: {resourcesPerNode: {requests: {cpu: null, nvidia.com/gpu: 1}}}\n", false}};
  for (int round = 0; round < 2; ++round) {
    for (const auto& runtime : {rt, mpi}) {
      for (const auto& [extra, shared] : specs) {
        api::TrainJob job = Job("TrainingRuntime", extra);
        INFO(runtime->metadata.name << ", spec extra:\n" << extra);
        auto got = cache.Shared("TrainingRuntime", job, runtime);
        CHECK(got.has_value() == shared);
        if (got.has_value()) {
          CHECK(InfoText(*got) == InfoText(Uncached(job, *runtime)));
        }
      }
    }
  }
  CHECK(cache.computed() == 2);  // the runtime-only Info of each runtime, once

  SECTION("one Info for all of them") {
    auto a = cache.Shared("TrainingRuntime", Job("TrainingRuntime"), rt);
    auto b = cache.Shared("TrainingRuntime", Job("TrainingRuntime", "  suspend: true\n"), rt);
    REQUIRE(a.has_value());
    REQUIRE(b.has_value());
    REQUIRE(a->ok());
    CHECK(a->value().get() == b->value().get());
  }

  SECTION("resourcesPerNode no pod set takes adds nothing") {
    json::Value doc = RuntimeDoc();
    doc["spec"].Erase("mlPolicy");  // no mlPolicy: the trainer takes no resourcesPerNode
    doc["metadata"].Set("uid", json::Value("uid-b"));
    doc["metadata"].Set("resourceVersion", json::Value("1"));
    auto no_ml = std::make_shared<const api::TrainingRuntime>(*api::DecodeTrainingRuntime(doc));
    api::TrainJob job = Job("TrainingRuntime", kResources);
    auto got = cache.Shared("TrainingRuntime", job, no_ml);
    REQUIRE(got.has_value());
    CHECK(InfoText(*got) == InfoText(Uncached(job, *no_ml)));
  }
}

TEST_CASE("RuntimeInfoCache never answers from another runtime version", "[core][cache]") {
  RuntimeInfoCache cache;
  api::TrainJob job = Job("TrainingRuntime");
  auto expect = [&](const std::shared_ptr<const api::TrainingRuntime>& rt, std::string_view image) {
    auto got = cache.Shared("TrainingRuntime", job, rt);
    REQUIRE(got.has_value());
    CHECK(InfoText(*got) == InfoText(Uncached(job, *rt)));
    REQUIRE(got->ok());
    CHECK(got->value()->template_spec.pod_sets[2].containers[0].image == image);
  };
  auto v1 = Versioned("uid-a", "1", "v1:img");
  expect(v1, "v1:img");
  // Updated: a new resourceVersion.
  auto v2 = Versioned("uid-a", "2", "v2:img");
  expect(v2, "v2:img");
  // The older version read again (an admission still holding it) is not answered with v2's.
  expect(v1, "v1:img");
  // Deleted and re-created: a new uid, the resourceVersion string seen before.
  auto recreated = Versioned("uid-b", "1", "recreated:img");
  expect(recreated, "recreated:img");
  // The same uid and resourceVersion decoded again into another object: computed from it.
  auto again = Versioned("uid-b", "1", "again:img");
  expect(again, "again:img");
  CHECK(cache.computed() == 5);
  expect(again, "again:img");
  CHECK(cache.computed() == 5);
  // Another kind with the same namespace and name is another entry.
  CHECK(cache.Shared("ClusterTrainingRuntime", job, v1).has_value());
  expect(again, "again:img");
  CHECK(cache.computed() == 6);
}

TEST_CASE("RuntimeInfoCache: a runtime whose own Info fails", "[core][cache]") {
  RuntimeInfoCache cache;
  json::Value doc = RuntimeDoc();
  RuntimeNode(doc)["resources"]["requests"].Set("cpu", json::Value("bad"));
  doc["metadata"].Set("uid", json::Value("uid-a"));
  doc["metadata"].Set("resourceVersion", json::Value("1"));
  auto rt = std::make_shared<const api::TrainingRuntime>(*api::DecodeTrainingRuntime(doc));
  api::TrainJob plain = Job("TrainingRuntime");
  auto got = cache.Shared("TrainingRuntime", plain, rt);
  REQUIRE(got.has_value());
  CHECK_FALSE(got->ok());
  CHECK(InfoText(*got) == InfoText(Uncached(plain, *rt)));
  // The TrainJob's resourcesPerNode replaces the bad request, so its Info builds: not shared.
  api::TrainJob fixed = Job("TrainingRuntime", kResources);
  CHECK_FALSE(cache.Shared("TrainingRuntime", fixed, rt).has_value());
  CHECK(Uncached(fixed, *rt).ok());
}

// ForJob shares Infos between TrainJobs NewRuntimeInfo cannot tell apart, and only those: every
// answer equals the Info computed afresh, across near-identical jobs (a changed value, member
// order, 3 vs 3.0, a reordered or extra patch), runtime versions and evictions.
TEST_CASE("RuntimeInfoCache::ForJob never answers another TrainJob's Info", "[core][cache]") {
  RuntimeInfoCache cache;
  auto v1 = Versioned("uid-a", "1", "v1:img");
  auto patch = [](std::string_view manager, std::string_view selector) {
    return "  - manager: " + std::string(manager) +
           "\n    trainingRuntimeSpec:\n      template:\n        spec:\n          replicatedJobs:\n"
           "          - name: node\n            template: {spec: {template: {spec: " +
           std::string(selector) + "}}}\n";
  };
  const std::string gpu = patch("example.com/m", "{nodeSelector: {pool: gpu}}");
  const std::string cpu = patch("example.com/m", "{nodeSelector: {pool: cpu}}");
  const std::string two = patch("example.com/m", "{nodeSelector: {pool: gpu, zone: a}}");
  const std::string two_swapped = patch("example.com/m", "{nodeSelector: {zone: a, pool: gpu}}");
  const std::string other_manager = patch("example.com/other", "{nodeSelector: {pool: gpu}}");
  const std::vector<std::string> specs = {
      "",
      kResources,
      "  trainer: {resourcesPerNode: {requests: {cpu: 3.0}, limits: {memory: 8Gi}}}\n",
      "  trainer: {resourcesPerNode: {requests: {cpu: 4}, limits: {memory: 8Gi}}}\n",
      "  runtimePatches:\n" + gpu,
      "  runtimePatches:\n" + cpu,
      "  runtimePatches:\n" + two,
      "  runtimePatches:\n" + two_swapped,
      "  runtimePatches:\n" + gpu + cpu,
      "  runtimePatches:\n" + cpu + gpu,
      "  runtimePatches:\n" + other_manager,  // the manager is not read: same Info as `gpu`
      "  runtimePatches:\n" + patch("example.com/m", "{terminationGracePeriodSeconds: 3}"),
      std::string(kResources) + "  runtimePatches:\n" + gpu,
      kPatches,
  };
  auto check_all = [&](const std::shared_ptr<const api::TrainingRuntime>& rt) {
    for (const std::string& extra : specs) {
      api::TrainJob job = Job("TrainingRuntime", extra);
      INFO(rt->metadata.resource_version << ", spec extra:\n" << extra);
      CHECK(InfoText(cache.ForJob("TrainingRuntime", job, rt)) == InfoText(Uncached(job, *rt)));
    }
  };
  static_assert(RuntimeInfoCache::kJobVariants < 10);
  check_all(v1);
  check_all(v1);  // more inputs than kJobVariants: evicted ones are computed again

  SECTION("a repeated TrainJob is served from the cache, also as the runtime's first") {
    RuntimeInfoCache fresh;
    api::TrainJob job = Job("TrainingRuntime", "  runtimePatches:\n" + gpu);
    auto first = fresh.ForJob("TrainingRuntime", job, v1);
    const int computed = fresh.computed();
    auto again = fresh.ForJob("TrainingRuntime", job, v1);
    CHECK(fresh.computed() == computed);
    REQUIRE(first.ok());
    REQUIRE(again.ok());
    CHECK(first->get() == again->get());
  }
  SECTION("a repeated TrainJob is served from the cache") {
    api::TrainJob job = Job("TrainingRuntime", "  runtimePatches:\n" + gpu);
    auto a = cache.ForJob("TrainingRuntime", job, v1);
    const int before = cache.computed();
    auto b =
        cache.ForJob("TrainingRuntime", Job("TrainingRuntime", "  runtimePatches:\n" + gpu), v1);
    CHECK(cache.computed() == before);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(a->get() == b->get());
  }
  SECTION("member order and number types tell jobs apart") {
    const std::string grace = patch("example.com/m", "{terminationGracePeriodSeconds: 3}");
    api::TrainJob as_int = Job("TrainingRuntime", "  runtimePatches:\n" + grace);
    api::TrainJob as_double = Job("TrainingRuntime", "  runtimePatches:\n" + grace);
    as_double.spec.runtime_patches[0]
        .training_runtime_spec["template"]["spec"]["replicatedJobs"]
        .at(0)["template"]["spec"]["template"]["spec"]
        .Set("terminationGracePeriodSeconds", json::Value(3.0));
    std::vector<std::pair<api::TrainJob, api::TrainJob>> pairs;
    pairs.emplace_back(Job("TrainingRuntime", "  runtimePatches:\n" + two),
                       Job("TrainingRuntime", "  runtimePatches:\n" + two_swapped));
    pairs.emplace_back(std::move(as_int), std::move(as_double));
    for (const auto& [x, y] : pairs) {
      auto a = cache.ForJob("TrainingRuntime", x, v1);
      auto b = cache.ForJob("TrainingRuntime", y, v1);
      REQUIRE(a.ok());
      REQUIRE(b.ok());
      CHECK(a->get() != b->get());
      // InfoText sorts keys and reads numbers by value: compare the JobSet specs as written.
      CHECK(json::Write((*b)->template_spec.jobset_spec) ==
            json::Write(Uncached(y, *v1)->template_spec.jobset_spec));
      CHECK(json::Write((*a)->template_spec.jobset_spec) !=
            json::Write((*b)->template_spec.jobset_spec));
    }
  }
  SECTION("another runtime version is computed from that version") {
    auto v2 = Versioned("uid-a", "2", "v2:img");
    check_all(v2);
    api::TrainJob job = Job("TrainingRuntime", "  runtimePatches:\n" + gpu);
    auto got = cache.ForJob("TrainingRuntime", job, v2);
    REQUIRE(got.ok());
    CHECK((*got)->template_spec.pod_sets[2].containers[0].image == "v2:img");
    // The older version read again is not answered with v2's.
    auto old = cache.ForJob("TrainingRuntime", job, v1);
    REQUIRE(old.ok());
    CHECK((*old)->template_spec.pod_sets[2].containers[0].image == "v1:img");
    check_all(v1);
  }
}

TEST_CASE("TestClusterTrainingRuntimeNewObjects", "[core]") {
  Env env;
  REQUIRE(env.reader.Add(RuntimeDoc("ClusterTrainingRuntime")).ok());
  SECTION(
      "succeeded to build PodGroup and JobSet with NumNodes from the Runtime and container from "
      "the Trainer.") {
    auto objs = env.CTR().NewObjects(Job("ClusterTrainingRuntime"));
    REQUIRE(objs.ok());
    REQUIRE(objs->size() == 2);
    CHECK((*objs)[1]["spec"]["replicatedJobs"].at(2)["template"]["spec"]["parallelism"].AsInt() ==
          100);
  }
  SECTION("missing trainingRuntime resource") {
    api::TrainJob job = Job("ClusterTrainingRuntime");
    job.spec.runtime_ref.name = "absent";
    CHECK(env.CTR().NewObjects(job).status().message() ==
          "not found ClusterTrainingRuntime specified in TrainJob: "
          "clustertrainingruntimes.trainer.kubeflow.org \"absent\" not found");
  }
}

TEST_CASE("TestValidateObjects", "[core]") {
  Env env;
  SECTION("TrainingRuntime must exist") {
    field::ValidationResult r = env.TR().ValidateObjects(nullptr, Job("TrainingRuntime"));
    CHECK(r.ErrorMessage() ==
          "spec.runtimeRef: Invalid value: v1alpha1.RuntimeRef{Name:\"test-runtime\", "
          "APIGroup:(*string)(\"trainer.kubeflow.org\"), Kind:(*string)(\"TrainingRuntime\")}: "
          "trainingruntimes.trainer.kubeflow.org \"test-runtime\" not found: specified "
          "trainingRuntime must be created before the TrainJob is created");
  }
  SECTION("ClusterTrainingRuntime must exist") {
    field::ValidationResult r = env.CTR().ValidateObjects(nullptr, Job("ClusterTrainingRuntime"));
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].field == "spec.RuntimeRef");
    CHECK(r.errors[0].detail ==
          "clustertrainingruntimes.trainer.kubeflow.org \"test-runtime\" not found: specified "
          "clusterTrainingRuntime must be created before the TrainJob is created");
  }
  SECTION("deprecated runtime referenced") {
    json::Value doc = RuntimeDoc("ClusterTrainingRuntime");
    doc["metadata"]["labels"].Set("trainer.kubeflow.org/support", json::Value("deprecated"));
    REQUIRE(env.reader.Add(std::move(doc)).ok());
    field::ValidationResult r = env.CTR().ValidateObjects(nullptr, Job("ClusterTrainingRuntime"));
    CHECK(r.ok());
    CHECK(
        r.warnings ==
        std::vector<std::string>{
            "Referenced ClusterTrainingRuntime \"test-runtime\" is deprecated and will be removed "
            "in a future release of Kubeflow Trainer. See runtime deprecation policy: "
            "https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html"
            "#runtime-deprecation-policy"});
  }
  SECTION("initializer jobs are checked against the live runtime") {
    REQUIRE(env.reader.Add(RuntimeDoc("TrainingRuntime")).ok());
    CHECK(env.TR()
              .ValidateObjects(nullptr, Job("TrainingRuntime",
                                            "  initializer: {dataset: {storageUri: hf://x}}\n"))
              .ok());
  }
  SECTION("podTemplateOverrides are checked against the live runtime's template, as v2.1 did") {
    REQUIRE(env.reader.Add(RuntimeDoc("TrainingRuntime")).ok());
    field::ValidationResult r = env.TR().ValidateObjects(
        nullptr,
        Job("TrainingRuntime", "  podTemplateOverrides: [{targetJobs: [{name: absent}]}]\n"));
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].field == "spec.podTemplateOverrides");
    CHECK(r.errors[0].detail ==
          "must not have targetJob that doesn't exist in the runtime job template");
    CHECK(env.TR()
              .ValidateObjects(nullptr,
                               Job("TrainingRuntime",
                                   "  podTemplateOverrides: [{targetJobs: [{name: node}]}]\n"))
              .ok());
  }
}

TEST_CASE("TestPodRequests", "[core]") {
  SECTION("containers are summed, init containers raise the max, sidecars add") {
    auto r = PodRequests(Yaml(R"(
containers:
- {name: a, resources: {requests: {cpu: 1, memory: 1Gi}}}
- {name: b, resources: {requests: {cpu: 500m}}}
initContainers:
- {name: side, restartPolicy: Always, resources: {requests: {cpu: 1}}}
- {name: big, resources: {requests: {cpu: 4}}}
overhead: {cpu: 100m}
)"));
    REQUIRE(r.ok());
    // containers 1.5 + sidecar 1 = 2.5; init big 4 + sidecar 1 = 5 wins; + overhead 0.1
    CHECK(Canon(*r) == R"({"cpu":"5100m","memory":"1Gi"})");
  }
}

TEST_CASE("TestMergeResourceRequirements", "[core]") {
  json::Value base =
      Yaml("{limits: {cpu: 2}, requests: {cpu: 1, memory: 1Gi}, claims: [{name: c}]}");
  SECTION("gpu only overlays runtime cpu and memory") {
    CHECK(Canon(MergeResourceRequirements(base, Yaml("{limits: {nvidia.com/gpu: 1}}"))) ==
          R"({"limits":{"cpu":2,"nvidia.com/gpu":1},"requests":{"cpu":1,"memory":"1Gi"}})");
  }
  SECTION("trainjob cpu overrides runtime cpu") {
    CHECK(Canon(MergeResourceRequirements(base, Yaml("{requests: {cpu: 3}}"))) ==
          R"({"limits":{"cpu":2},"requests":{"cpu":3,"memory":"1Gi"}})");
  }
  SECTION("partial override keeps other runtime keys") {
    CHECK(Canon(MergeResourceRequirements(base, Yaml("{limits: {memory: 2Gi}}"))) ==
          R"({"limits":{"cpu":2,"memory":"2Gi"},"requests":{"cpu":1,"memory":"1Gi"}})");
  }
  SECTION("empty override returns base") {
    CHECK(Canon(MergeResourceRequirements(base, Yaml("{}"))) ==
          R"({"limits":{"cpu":2},"requests":{"cpu":1,"memory":"1Gi"}})");
  }
}

}  // namespace
}  // namespace trainer::core
