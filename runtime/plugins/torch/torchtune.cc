// Torchtune recipe/config selection and validation (upstream plugins/torch/torchtune.go).
#include <algorithm>
#include <cctype>
#include <set>

#include "common/strings/ascii.h"
#include "runtime/framework/constants.h"
#include "runtime/framework/go_repr.h"
#include "runtime/plugins/torch/torch.h"

namespace trainer::plugins::torch {

namespace {

const std::set<std::string>& ImmutableConfigs() {
  static const std::set<std::string> kConfigs = {
      "output_dir", "tokenizer.path", "checkpointer.checkpoint_dir", "tokenizer.merges_file"};
  return kConfigs;
}

const std::set<std::string>& SupportedModels() {
  static const std::set<std::string> kModels = {"llama3_2/1B", "llama3_2/3B", "llama3_3/70B",
                                                "qwen2_5/1.5B"};
  return kModels;
}

std::string Trim(std::string_view s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) {
    ++b;
  }
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) {
    --e;
  }
  return std::string(s.substr(b, e - b));
}

// An arg "key=value" whose key contains `item` and whose value is "true" (any case).
bool IsBoolArgEnabled(const std::vector<std::string>& args, std::string_view item) {
  for (const std::string& arg : args) {
    size_t eq = arg.find('=');
    if (eq == std::string::npos) {
      continue;
    }
    if (arg.substr(0, eq).find(item) != std::string::npos &&
        strings::AsciiEqualFold(Trim(std::string_view(arg).substr(eq + 1)), "true")) {
      return true;
    }
  }
  return false;
}

const std::vector<std::string>& ArgsOf(const api::TrainJob& job) {
  static const std::vector<std::string> kNone;
  return job.spec.trainer && job.spec.trainer->args ? *job.spec.trainer->args : kNone;
}

}  // namespace

std::string GetModelFromRuntimeRef(std::string_view name) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t dash = name.find('-', start);
    parts.emplace_back(name.substr(start, dash == std::string_view::npos ? dash : dash - start));
    if (dash == std::string_view::npos) {
      break;
    }
    start = dash + 1;
  }
  if (parts.size() != 3) {
    return "";
  }
  std::string family = parts[1];
  std::replace(family.begin(), family.end(), '.', '_');
  std::string size = parts[2];
  for (char& c : size) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return family + "/" + size;
}

bool IsLoraConfigEnabled(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg.find("model.lora_attn_modules") != std::string::npos) {
      return true;
    }
  }
  return false;
}

bool IsUseQLoraFinetune(const std::vector<std::string>& args) {
  if (IsBoolArgEnabled(args, "model.use_dora")) {
    return false;
  }
  return IsBoolArgEnabled(args, "model.quantize_base");
}

RecipeAndConfig GetRecipeAndConfig(int32_t num_nodes, const ProcPerNode& proc, int64_t gpu,
                                   const api::TrainJob& job) {
  const std::vector<std::string>& args = ArgsOf(job);
  std::string recipe = "full_finetune_distributed";
  std::string suffix = "_full";
  if (num_nodes == 1 && ((proc.is_int && proc.value == 1) || gpu == 1)) {
    if (IsUseQLoraFinetune(args)) {
      recipe = "lora_finetune_single_device";
      suffix = "_qlora_single_device";
    } else if (IsLoraConfigEnabled(args)) {
      recipe = "lora_finetune_single_device";
      suffix = "_lora_single_device";
    } else {
      recipe = "full_finetune_single_device";
      suffix = "_full_single_device";
    }
  } else if (num_nodes == 1 && IsUseQLoraFinetune(args)) {
    recipe = "lora_finetune_distributed";
    suffix = "_qlora";
  } else if (num_nodes == 1 && IsLoraConfigEnabled(args)) {
    recipe = "lora_finetune_distributed";
    suffix = "_lora";
  } else if (num_nodes > 1) {
    suffix = "_full_multinode";
  }
  return {recipe, GetModelFromRuntimeRef(job.spec.runtime_ref.name) + suffix};
}

std::vector<std::string> ExtractOverridesFromRuntime(const framework::Info& info) {
  std::vector<std::string> overrides;
  const json::Value* rjobs = info.template_spec.jobset_spec.Find("replicatedJobs");
  if (rjobs == nullptr || !rjobs->IsArray()) {
    return overrides;
  }
  for (const json::Value& rjob : rjobs->elements()) {
    if (framework::AncestorOf(rjob) != framework::kAncestorTrainer) {
      continue;
    }
    const json::Value* containers = framework::ContainersOf(rjob);
    if (containers == nullptr) {
      continue;
    }
    for (const json::Value& c : containers->elements()) {
      if (framework::StringField(c, "name") != framework::kNode) {
        continue;
      }
      const json::Value* command = c.Find("command");
      if (command == nullptr || !command->IsArray()) {
        continue;
      }
      for (const json::Value& arg : command->elements()) {
        std::string s = arg.IsString() ? arg.AsString() : "";
        if (ImmutableConfigs().count(s.substr(0, s.find('='))) > 0) {
          overrides.push_back(s);
        }
      }
    }
  }
  return overrides;
}

field::ErrorList ValidateTorchTune(const framework::Info* info, const api::TrainJob& job) {
  field::ErrorList errs;
  const api::Trainer& trainer = *job.spec.trainer;
  field::Path spec = field::NewPath("spec");
  field::Path runtime_ref_name = spec.Child("runtimeRef", "name");
  std::string model = GetModelFromRuntimeRef(job.spec.runtime_ref.name);
  if (SupportedModels().count(model) == 0) {
    errs.push_back(field::Invalid(
        runtime_ref_name, field::String(job.spec.runtime_ref.name),
        "must have a supported pretrained model, invalid model configured: " + model));
  }
  field::Path num_nodes_path = spec.Child("trainer", "numNodes");
  int32_t num_nodes = trainer.num_nodes.value_or(1);
  if (num_nodes > 1 && model != "llama3_3/70B") {
    errs.push_back(
        field::Invalid(num_nodes_path, field::Int(num_nodes), "must be 1 for " + model + " model"));
  }
  ProcPerNode proc;
  if (trainer.num_proc_per_node) {
    proc = {true, *trainer.num_proc_per_node};
  }
  json::Value resources =
      !trainer.resources_per_node.IsNull()
          ? trainer.resources_per_node.Clone()
          : (info != nullptr ? framework::ExtractResourcePerNodeFromRuntime(*info) : json::Value());
  std::string config =
      GetRecipeAndConfig(num_nodes, proc, framework::GetNumGPUPerNode(resources), job).config;
  if (config.find("_qlora") != std::string::npos) {
    if (model == "qwen2_5/1.5B") {
      errs.push_back(field::Invalid(runtime_ref_name, field::String(job.spec.runtime_ref.name),
                                    "QLoRA is not supported for " + model + " model"));
    }
    if (config.find("_qlora_single_device") == std::string::npos &&
        (model == "llama3_2/1B" || model == "llama3_2/3B")) {
      errs.push_back(field::Invalid(spec.Child("trainer", "numProcPerNode"),
                                    framework::GoIntOrString(proc.is_int, proc.value, "auto"),
                                    "must be auto or 1 for " + model + " model when using QLoRA"));
      errs.push_back(field::Invalid(
          spec.Child("trainer", "resourcesPerNode"),
          field::BadValue::Json(trainer.resources_per_node.Clone()),
          "must have gpu resource with value 1 for " + model + " model when using QLoRA"));
    }
  }
  const std::vector<std::string>& args = ArgsOf(job);
  if (num_nodes > 1 && (IsLoraConfigEnabled(args) || IsUseQLoraFinetune(args))) {
    errs.push_back(field::Invalid(num_nodes_path, field::Int(num_nodes),
                                  "LoRA fine-tuning is not supported for multi-node training in "
                                  "TorchTune"));
  }
  field::Path args_path = spec.Child("trainer", "args");
  for (size_t i = 0; i < args.size(); ++i) {
    std::string key = args[i].substr(0, args[i].find('='));
    if (ImmutableConfigs().count(key) > 0) {
      errs.push_back(field::Invalid(args_path.Index(static_cast<int64_t>(i)),
                                    field::String(args[i]),
                                    "must not set immutable config " + field::GoQuote(key) +
                                        " in trainer args; it is managed by the runtime"));
    }
  }
  return errs;
}

}  // namespace trainer::plugins::torch
