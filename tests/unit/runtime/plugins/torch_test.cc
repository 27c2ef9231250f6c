// Torch plugin (upstream plugins/torch/{torch_test.go,torchtune_test.go}):
// TestTorchEnforceMLPolicy, TestTorchValidate and the torchtune helper tests, by upstream case
// name.
#include "runtime/plugins/torch/torch.h"

#include <catch2/catch.hpp>

#include "runtime/framework/testing/testing.h"

namespace trainer::plugins {
namespace {

using testing::EnvNames;
using testing::EnvValue;
using testing::InfoBuilder;
using testing::PodSet;

framework::Info TorchInfo(std::string_view policy = "{torch: {}}") {
  return InfoBuilder()
      .MLPolicy(policy)
      .PodSet(PodSet("node").Ancestor("trainer").Count(1).Containers({"node"}))
      .Build();
}

api::TrainJob Job(std::string_view name, std::string_view trainer,
                  std::string_view runtime = "torch-distributed") {
  return testing::TrainJob("metadata: {name: " + std::string(name) +
                           ", namespace: default}\nspec:\n  runtimeRef: {name: " +
                           std::string(runtime) + "}\n  trainer: " + std::string(trainer) + "\n");
}

const framework::Container& Node(const framework::Info& info) {
  return info.template_spec.pod_sets[0].containers[0];
}

std::string NprocFor(std::string_view trainer) {
  Torch t;
  framework::Info info = TorchInfo();
  api::TrainJob job = Job("test-job", trainer);
  REQUIRE(t.EnforceMLPolicy(&info, job).ok());
  return EnvValue(Node(info).env, "PET_NPROC_PER_NODE");
}

std::string Command(const api::TrainJob& job) {
  std::string out;
  for (const std::string& s : *job.spec.trainer->command) {
    out += (out.empty() ? "" : " ") + s;
  }
  return out;
}

TEST_CASE("TestTorchEnforceMLPolicy", "[torch]") {
  Torch t;
  SECTION("no action when info is nil") {
    api::TrainJob job = Job("test-job", "{numNodes: 2}");
    CHECK(t.EnforceMLPolicy(nullptr, job).ok());
  }
  SECTION("no action when mlPolicySource is nil") {
    framework::Info info =
        InfoBuilder().PodSet(PodSet("node").Ancestor("trainer").Containers({"node"})).Build();
    api::TrainJob job = Job("test-job", "{numNodes: 2}");
    REQUIRE(t.EnforceMLPolicy(&info, job).ok());
    CHECK(Node(info).env.empty());
  }
  SECTION("no action when mlPolicySource torch is null") {
    framework::Info info = TorchInfo("{numNodes: 1}");
    api::TrainJob job = Job("test-job", "{numNodes: 2}");
    REQUIRE(t.EnforceMLPolicy(&info, job).ok());
    CHECK(Node(info).env.empty());
    CHECK(*info.template_spec.pod_sets[0].count == 1);
  }
  SECTION("trainJob numNodes is respected rather than mlPolicy one") {
    framework::Info info = TorchInfo("{numNodes: 1, torch: {}}");
    api::TrainJob job = Job("test-job", "{numNodes: 2, env: [{name: TRAIN_JOB, value: x}]}");
    REQUIRE(t.EnforceMLPolicy(&info, job).ok());
    CHECK(*info.template_spec.pod_sets[0].count == 2);
    CHECK(EnvNames(Node(info).env) ==
          "TRAIN_JOB,PET_NNODES,PET_NPROC_PER_NODE,PET_NODE_RANK,PET_MASTER_ADDR,PET_MASTER_PORT");
    CHECK(EnvValue(Node(info).env, "PET_NNODES") == "2");
    CHECK(EnvValue(Node(info).env, "PET_MASTER_ADDR") == "test-job-node-0-0.test-job");
    CHECK(EnvValue(Node(info).env, "PET_MASTER_PORT") == "29500");
    const json::Value* rank = json::FindByKey(Node(info).env, "name", "PET_NODE_RANK");
    REQUIRE(rank != nullptr);
    CHECK(
        testing::Canon(*rank) ==
        R"({"name":"PET_NODE_RANK","valueFrom":{"fieldRef":{"fieldPath":"metadata.annotations['batch.kubernetes.io/job-completion-index']"}}})");
    CHECK(testing::Canon(Node(info).ports) == R"([{"containerPort":29500}])");
  }
  SECTION("nproc_per_node=auto with CPU limit") {
    CHECK(NprocFor("{resourcesPerNode: {requests: {cpu: 4}}}") == "4");
  }
  SECTION("nproc_per_node=auto with no CPU resources") { CHECK(NprocFor("{}") == "1"); }
  SECTION("nproc_per_node=auto with low CPU limit") {
    CHECK(NprocFor("{resourcesPerNode: {requests: {cpu: 2}}}") == "2");
  }
  SECTION("nproc_per_node=auto with CPU request but no limit") {
    CHECK(NprocFor("{resourcesPerNode: {requests: {cpu: 3}}}") == "3");
  }
  SECTION("nproc_per_node=auto with millicore CPU limit") {
    CHECK(NprocFor("{resourcesPerNode: {requests: {cpu: 2.5}}}") == "3");
  }
  SECTION("nproc_per_node=auto with fractional CPU limit") {
    CHECK(NprocFor("{resourcesPerNode: {requests: {cpu: 0.7}}}") == "1");
  }
  SECTION("nproc_per_node=auto with GPU request should remain auto") {
    CHECK(NprocFor("{resourcesPerNode: {requests: {example.com/gpu: 2}}}") == "auto");
  }
  SECTION("explicitly set nproc_per_node should be preserved") {
    CHECK(NprocFor("{numProcPerNode: 3, resourcesPerNode: {requests: {cpu: 8}}}") == "3");
  }
  SECTION("nproc_per_node=auto with millicore CPU limit in m format") {
    CHECK(NprocFor("{resourcesPerNode: {requests: {cpu: 2500m}}}") == "3");
  }
  SECTION("nproc_per_node=cpu with CPU limit") {
    CHECK(NprocFor("{resourcesPerNode: {limits: {cpu: 4}}}") == "4");
  }
  SECTION("nproc_per_node=auto resolves to GPU count when GPU resources present") {
    CHECK(NprocFor("{resourcesPerNode: {requests: {cpu: 6, example.com/gpu: 2}}}") == "auto");
  }
  SECTION("nproc_per_node=cpu with fractional CPU") {
    CHECK(NprocFor("{resourcesPerNode: {requests: {cpu: 3.7}}}") == "4");
  }
  SECTION("runtime resources are used when the TrainJob has none") {
    framework::Info info = TorchInfo();
    info.template_spec.jobset_spec = testing::Yaml(R"(
replicatedJobs:
- name: node
  template:
    metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
    spec: {template: {spec: {containers: [{name: node, resources: {limits: {cpu: 5}}}]}}}
)");
    api::TrainJob job = Job("test-job", "{}");
    REQUIRE(t.EnforceMLPolicy(&info, job).ok());
    CHECK(EnvValue(Node(info).env, "PET_NPROC_PER_NODE") == "5");
  }
  SECTION("multi-node multi-GPU training with complete info") {
    framework::Info info = TorchInfo();
    api::TrainJob job =
        Job("test-job", "{numNodes: 2, resourcesPerNode: {requests: {nvidia.com/gpu: 4}}}");
    REQUIRE(t.EnforceMLPolicy(&info, job).ok());
    CHECK(EnvValue(Node(info).env, "PET_NNODES") == "2");
    CHECK(EnvValue(Node(info).env, "PET_NPROC_PER_NODE") == "auto");
  }
  SECTION("multi-devices full fine-tuning with torchtune") {
    framework::Info info = TorchInfo();
    api::TrainJob job =
        Job("torchtune-job",
            "{numNodes: 1, command: [tune, run], args: [dtype=fp16, batch_size=32], "
            "resourcesPerNode: {requests: {cpu: 8, example.com/gpu: 4}}}",
            "torchtune-llama3.2-1b");
    REQUIRE(t.EnforceMLPolicy(&info, job).ok());
    CHECK(EnvNames(Node(info).env) == "PET_NNODES,PET_NPROC_PER_NODE,PET_NODE_RANK");
    CHECK(EnvValue(Node(info).env, "PET_NPROC_PER_NODE") == "auto");
    CHECK(Command(job) ==
          "tune run --rdzv_endpoint=torchtune-job-node-0-0.torchtune-job:29500 "
          "full_finetune_distributed --config llama3_2/1B_full");
  }
  SECTION("single-device full fine-tuning with torchtune") {
    framework::Info info = TorchInfo();
    api::TrainJob job = Job("torchtune-job",
                            "{numNodes: 1, command: [tune, run], "
                            "resourcesPerNode: {requests: {example.com/gpu: 1}}}",
                            "torchtune-llama3.2-1b");
    REQUIRE(t.EnforceMLPolicy(&info, job).ok());
    CHECK(Command(job) ==
          "tune run full_finetune_single_device --config llama3_2/1B_full_single_device");
  }
  SECTION("multi-nodes full fine-tuning with torchtune") {
    framework::Info info = TorchInfo();
    info.template_spec.jobset_spec = testing::Yaml(R"(
replicatedJobs:
- name: node
  template:
    metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
    spec: {template: {spec: {containers: [{name: node, command: [tune, run, output_dir=/workspace/output, lr=1, tokenizer.path=/workspace/model/tok]}]}}}
)");
    api::TrainJob job = Job("torchtune-job",
                            "{numNodes: 2, command: [tune, run], "
                            "resourcesPerNode: {requests: {example.com/gpu: 8}}}",
                            "torchtune-llama3.3-70b");
    REQUIRE(t.EnforceMLPolicy(&info, job).ok());
    CHECK(Command(job) ==
          "tune run --rdzv_endpoint=torchtune-job-node-0-0.torchtune-job:29500 "
          "full_finetune_distributed --config llama3_3/70B_full_multinode "
          "output_dir=/workspace/output tokenizer.path=/workspace/model/tok");
  }
  SECTION("envInjection with init container") {
    framework::Info info =
        InfoBuilder()
            .MLPolicy(
                "{torch: {envInjection: {targets: [{jobName: node, containerNames: [init]}]}}}")
            .PodSet(
                PodSet("node").Ancestor("trainer").Containers({"node"}).InitContainers({"init"}))
            .Build();
    api::TrainJob job = Job("test-job", "{}");
    REQUIRE(t.EnforceMLPolicy(&info, job).ok());
    CHECK(EnvNames(info.template_spec.pod_sets[0].init_containers[0].env) ==
          "PET_NNODES,PET_NPROC_PER_NODE,PET_NODE_RANK,PET_MASTER_ADDR,PET_MASTER_PORT");
  }
  SECTION("envInjection with torchtune command") {
    framework::Info info =
        InfoBuilder()
            .MLPolicy(
                "{torch: {envInjection: {targets: [{jobName: node, containerNames: [init]}]}}}")
            .PodSet(
                PodSet("node").Ancestor("trainer").Containers({"node"}).InitContainers({"init"}))
            .Build();
    api::TrainJob job = Job("tt", "{command: [tune, run]}", "torchtune-llama3.2-1b");
    REQUIRE(t.EnforceMLPolicy(&info, job).ok());
    CHECK(EnvNames(Node(info).env) == "PET_NNODES,PET_NPROC_PER_NODE,PET_NODE_RANK");
    CHECK(EnvNames(info.template_spec.pod_sets[0].init_containers[0].env) ==
          "PET_NNODES,PET_NPROC_PER_NODE,PET_NODE_RANK,PET_MASTER_ADDR,PET_MASTER_PORT");
  }
  SECTION("envInjection with sidecar (regular container)") {
    framework::Info info =
        InfoBuilder()
            .MLPolicy(
                "{torch: {envInjection: {targets: [{jobName: node, containerNames: [side]}]}}}")
            .PodSet(PodSet("node").Ancestor("trainer").Containers({"node", "side"}))
            .Build();
    api::TrainJob job = Job("test-job", "{}");
    REQUIRE(t.EnforceMLPolicy(&info, job).ok());
    CHECK(EnvValue(info.template_spec.pod_sets[0].containers[1].env, "PET_MASTER_PORT") == "29500");
  }
  SECTION("envInjection with multiple containers in same target") {
    framework::Info info =
        InfoBuilder()
            .MLPolicy(
                "{torch: {envInjection: {targets: [{jobName: node, containerNames: [a, b]}]}}}")
            .PodSet(
                PodSet("node").Ancestor("trainer").Containers({"node", "a"}).InitContainers({"b"}))
            .Build();
    api::TrainJob job = Job("test-job", "{}");
    REQUIRE(t.EnforceMLPolicy(&info, job).ok());
    CHECK(EnvValue(info.template_spec.pod_sets[0].containers[1].env, "PET_NNODES") == "1");
    CHECK(EnvValue(info.template_spec.pod_sets[0].init_containers[0].env, "PET_NNODES") == "1");
  }
  SECTION("envInjection with empty targets (no additional injection)") {
    framework::Info info =
        InfoBuilder()
            .MLPolicy("{torch: {envInjection: {targets: []}}}")
            .PodSet(
                PodSet("node").Ancestor("trainer").Containers({"node"}).InitContainers({"init"}))
            .Build();
    api::TrainJob job = Job("test-job", "{}");
    REQUIRE(t.EnforceMLPolicy(&info, job).ok());
    CHECK(info.template_spec.pod_sets[0].init_containers[0].env.empty());
  }
  SECTION(
      "envInjection with multiple targets in different jobs leaves unlisted init container "
      "unchanged") {
    framework::Info info =
        InfoBuilder()
            .MLPolicy(
                "{torch: {envInjection: {targets: [{jobName: node, containerNames: [a]}, "
                "{jobName: other, containerNames: [c]}]}}}")
            .PodSet(PodSet("node").Ancestor("trainer").Containers({"node"}).InitContainers(
                {"a", "unlisted"}))
            .PodSet(PodSet("other").Containers({"c"}))
            .Build();
    api::TrainJob job = Job("test-job", "{numNodes: 3}");
    REQUIRE(t.EnforceMLPolicy(&info, job).ok());
    CHECK(EnvValue(info.template_spec.pod_sets[0].init_containers[0].env, "PET_NNODES") == "3");
    CHECK(info.template_spec.pod_sets[0].init_containers[1].env.empty());
    CHECK(EnvValue(info.template_spec.pod_sets[1].containers[0].env, "PET_MASTER_ADDR") ==
          "test-job-node-0-0.test-job");
  }
  SECTION("envInjection target container does not exist") {
    framework::Info info =
        InfoBuilder()
            .MLPolicy(
                "{torch: {envInjection: {targets: [{jobName: node, containerNames: [nope]}]}}}")
            .PodSet(PodSet("node").Ancestor("trainer").Containers({"node"}))
            .Build();
    api::TrainJob job = Job("test-job", "{}");
    Status s = t.EnforceMLPolicy(&info, job);
    CHECK(s.message() ==
          "envInjection target podSet \"node\" container \"nope\" not found in runtime template");
  }
  SECTION("envInjection target job does not exist") {
    framework::Info info =
        InfoBuilder()
            .MLPolicy("{torch: {envInjection: {targets: [{jobName: other, containerNames: [c]}]}}}")
            .PodSet(PodSet("node").Ancestor("trainer").Containers({"node"}))
            .Build();
    api::TrainJob job = Job("test-job", "{}");
    CHECK_FALSE(t.EnforceMLPolicy(&info, job).ok());
  }
  SECTION("no trainer section means no PET envs in the node container") {
    framework::Info info = TorchInfo();
    api::TrainJob job =
        testing::TrainJob("metadata: {name: j, namespace: d}\nspec: {runtimeRef: {name: r}}");
    REQUIRE(t.EnforceMLPolicy(&info, job).ok());
    CHECK(Node(info).env.empty());
    CHECK(Node(info).ports.empty());
  }
}

std::string Errors(const field::ValidationResult& r) { return r.ErrorMessage(); }

TEST_CASE("TestTorchValidate", "[torch]") {
  Torch t;
  SECTION("no action when info is nil") {
    CHECK(t.Validate(nullptr, nullptr, Job("j", "{}")).ok());
  }
  SECTION("no action when info does not have MLPolicySource") {
    framework::Info info;
    CHECK(t.Validate(&info, nullptr, Job("j", "{env: [{name: PET_NNODES, value: '1'}]}")).ok());
  }
  SECTION("no action when info has MLPolicySource but no Torch policy") {
    framework::Info info = TorchInfo("{numNodes: 1}");
    CHECK(t.Validate(&info, nullptr, Job("j", "{env: [{name: PET_NNODES, value: '1'}]}")).ok());
  }
  SECTION("envInjection target container does not exist") {
    framework::Info info =
        InfoBuilder()
            .MLPolicy(
                "{torch: {envInjection: {targets: [{jobName: node, containerNames: [nope]}]}}}")
            .PodSet(PodSet("node").Ancestor("trainer").Containers({"node"}))
            .Build();
    field::ValidationResult r = t.Validate(&info, nullptr, Job("j", "{}"));
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].field == "spec.runtimeRef");
    CHECK(r.errors[0].detail ==
          "envInjection target podSet \"node\" container \"nope\" not found in runtime template");
  }
  SECTION("no action when info does not have numProcPerNode") {
    framework::Info info = TorchInfo();
    CHECK(t.Validate(&info, nullptr, Job("j", "{numNodes: 2}")).ok());
  }
  SECTION("valid environment variable present") {
    framework::Info info = TorchInfo();
    CHECK(t.Validate(&info, nullptr, Job("j", "{env: [{name: TEST, value: '1'}]}")).ok());
  }
  SECTION("reserved environment variable present") {
    framework::Info info = TorchInfo();
    field::ValidationResult r = t.Validate(
        &info, nullptr,
        Job("j", "{env: [{name: PET_NODE_RANK, value: '1'}, {name: PET_MASTER_ADDR, value: x}]}"));
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].field == "spec.trainer.env");
    CHECK(r.errors[0].detail ==
          "must not have reserved envs, invalid envs configured: [PET_MASTER_ADDR PET_NODE_RANK]");
    CHECK(Errors(r).rfind("spec.trainer.env: Invalid value: []v1.EnvVar{v1.EnvVar{Name:"
                          "\"PET_NODE_RANK\", Value:\"1\"",
                          0) == 0);
  }
  SECTION("unsupported pretrained model") {
    framework::Info info = TorchInfo();
    field::ValidationResult r =
        t.Validate(&info, nullptr, Job("j", "{command: [tune, run]}", "torchtune-llama3.1-8b"));
    REQUIRE(r.errors.size() == 1);
    CHECK(Errors(r) ==
          "spec.runtimeRef.name: Invalid value: \"torchtune-llama3.1-8b\": must have a supported "
          "pretrained model, invalid model configured: llama3_1/8B");
  }
  SECTION("multi-node mode is only enabled for Llama-3.3-70b") {
    framework::Info info = TorchInfo();
    field::ValidationResult r = t.Validate(
        &info, nullptr, Job("j", "{numNodes: 2, command: [tune, run]}", "torchtune-llama3.2-1b"));
    CHECK(Errors(r) == "spec.trainer.numNodes: Invalid value: 2: must be 1 for llama3_2/1B model");
  }
  SECTION("qlora is not supported for qwen in torchtune") {
    framework::Info info = TorchInfo();
    field::ValidationResult r =
        t.Validate(&info, nullptr,
                   Job("j", "{command: [tune, run], args: [model.quantize_base=True]}",
                       "torchtune-qwen2.5-1.5b"));
    CHECK(Errors(r) ==
          "spec.runtimeRef.name: Invalid value: \"torchtune-qwen2.5-1.5b\": QLoRA is not "
          "supported for qwen2_5/1.5B model");
  }
  SECTION("muti-devices qlora is not supported for llama3.2-1b in torchtune") {
    framework::Info info = TorchInfo();
    field::ValidationResult r =
        t.Validate(&info, nullptr,
                   Job("j",
                       "{command: [tune, run], args: [model.quantize_base=True], "
                       "resourcesPerNode: {limits: {nvidia.com/gpu: 2}}}",
                       "torchtune-llama3.2-1b"));
    REQUIRE(r.errors.size() == 2);
    CHECK(r.errors[0].ToString() ==
          "spec.trainer.numProcPerNode: Invalid value: intstr.IntOrString{Type:1, IntVal:0, "
          "StrVal:\"auto\"}: must be auto or 1 for llama3_2/1B model when using QLoRA");
    CHECK(r.errors[1].field == "spec.trainer.resourcesPerNode");
    CHECK(r.errors[1].detail ==
          "must have gpu resource with value 1 for llama3_2/1B model when using QLoRA");
  }
  SECTION("lora is not supported for multi-node training in torchtune") {
    framework::Info info = TorchInfo();
    field::ValidationResult r = t.Validate(
        &info, nullptr,
        Job("j", "{numNodes: 2, command: [tune, run], args: ['model.lora_attn_modules=[q_proj]']}",
            "torchtune-llama3.3-70b"));
    CHECK(Errors(r) ==
          "spec.trainer.numNodes: Invalid value: 2: LoRA fine-tuning is not supported for "
          "multi-node training in TorchTune");
  }
  SECTION("lora is supported for single-node training in torchtune") {
    framework::Info info = TorchInfo();
    CHECK(t.Validate(&info, nullptr,
                     Job("j", "{command: [tune, run], args: ['model.lora_attn_modules=[q_proj]']}",
                         "torchtune-llama3.2-1b"))
              .ok());
  }
  SECTION("immutable runtime config must not be set in trainer args") {
    framework::Info info = TorchInfo();
    field::ValidationResult r = t.Validate(
        &info, nullptr,
        Job("j", "{command: [tune, run], args: [output_dir=/tmp]}", "torchtune-llama3.2-1b"));
    CHECK(Errors(r) ==
          "spec.trainer.args[0]: Invalid value: \"output_dir=/tmp\": must not set immutable "
          "config \"output_dir\" in trainer args; it is managed by the runtime");
  }
  SECTION("multiple immutable runtime configs must not be set in trainer args") {
    framework::Info info = TorchInfo();
    field::ValidationResult r =
        t.Validate(&info, nullptr,
                   Job("j",
                       "{command: [tune, run], args: [a=1, tokenizer.path=/x, "
                       "checkpointer.checkpoint_dir=/y]}",
                       "torchtune-llama3.2-1b"));
    REQUIRE(r.errors.size() == 2);
    CHECK(r.errors[0].field == "spec.trainer.args[1]");
    CHECK(r.errors[1].field == "spec.trainer.args[2]");
  }
}

TEST_CASE("TestGetModelFromRuntimeRef", "[torchtune]") {
  CHECK(torch::GetModelFromRuntimeRef("torchtune-llama3.2-1b") == "llama3_2/1B");
  CHECK(torch::GetModelFromRuntimeRef("torchtune-qwen2.5-1.5b") == "qwen2_5/1.5B");
  CHECK(torch::GetModelFromRuntimeRef("torchtune-llama") == "");
  CHECK(torch::GetModelFromRuntimeRef("a-b-c-d") == "");
  CHECK(torch::GetModelFromRuntimeRef("") == "");
}

TEST_CASE("TestIsLoraConfigEnabled", "[torchtune]") {
  CHECK(torch::IsLoraConfigEnabled({"model.lora_attn_modules=[q_proj,v_proj]"}));
  CHECK_FALSE(torch::IsLoraConfigEnabled({"batch_size=2"}));
  CHECK_FALSE(torch::IsLoraConfigEnabled({}));
}

TEST_CASE("TestIsUseQLoraFinetune", "[torchtune]") {
  CHECK(torch::IsUseQLoraFinetune({"model.quantize_base=True"}));
  CHECK_FALSE(torch::IsUseQLoraFinetune({"model.quantize_base=False"}));
  CHECK_FALSE(torch::IsUseQLoraFinetune({"model.quantize_base=True", "model.use_dora=True"}));
  CHECK(torch::IsUseQLoraFinetune({"model.quantize_base=True", "model.use_dora=False"}));
  CHECK_FALSE(torch::IsUseQLoraFinetune({"batch_size=2"}));
  CHECK_FALSE(torch::IsUseQLoraFinetune({}));
}

TEST_CASE("TestGetRecipeAndConfig", "[torchtune]") {
  auto rc = [](int32_t nodes, torch::ProcPerNode proc, int64_t gpu, std::string_view args) {
    api::TrainJob job = Job("j", "{command: [tune, run], args: " + std::string(args) + "}",
                            "torchtune-llama3.2-1b");
    torch::RecipeAndConfig r = torch::GetRecipeAndConfig(nodes, proc, gpu, job);
    return r.recipe + " " + r.config;
  };
  torch::ProcPerNode kAuto;
  CHECK(rc(1, kAuto, 1, "[]") == "full_finetune_single_device llama3_2/1B_full_single_device");
  CHECK(rc(1, kAuto, 1, "[model.lora_attn_modules=x]") ==
        "lora_finetune_single_device llama3_2/1B_lora_single_device");
  CHECK(rc(1, kAuto, 1, "[model.quantize_base=True]") ==
        "lora_finetune_single_device llama3_2/1B_qlora_single_device");
  CHECK(rc(1, kAuto, 4, "[]") == "full_finetune_distributed llama3_2/1B_full");
  CHECK(rc(1, kAuto, 4, "[model.lora_attn_modules=x]") ==
        "lora_finetune_distributed llama3_2/1B_lora");
  CHECK(rc(1, kAuto, 4, "[model.quantize_base=True]") ==
        "lora_finetune_distributed llama3_2/1B_qlora");
  CHECK(rc(2, kAuto, 4, "[]") == "full_finetune_distributed llama3_2/1B_full_multinode");
  CHECK(rc(1, {true, 1}, 4, "[]") == "full_finetune_single_device llama3_2/1B_full_single_device");
  CHECK(rc(1, {true, 2}, 0, "[]") == "full_finetune_distributed llama3_2/1B_full");
}

TEST_CASE("TestExtractOverridesFromRuntime", "[torchtune]") {
  SECTION("no jobset template") {
    framework::Info info;
    CHECK(torch::ExtractOverridesFromRuntime(info).empty());
  }
  framework::Info info;
  info.template_spec.jobset_spec = testing::Yaml(R"(
replicatedJobs:
- name: node
  template:
    metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
    spec: {template: {spec: {containers: [
      {name: node, command: [tune, run, output_dir=/o, epochs=1, tokenizer.merges_file=/m]},
      {name: other, command: [output_dir=/x]}]}}}
- name: init
  template:
    metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: model-initializer}}
    spec: {template: {spec: {containers: [{name: node, command: [output_dir=/y]}]}}}
)");
  SECTION("trainer node container returns only immutable configs") {
    CHECK(torch::ExtractOverridesFromRuntime(info) ==
          std::vector<std::string>{"output_dir=/o", "tokenizer.merges_file=/m"});
  }
}

}  // namespace
}  // namespace trainer::plugins
