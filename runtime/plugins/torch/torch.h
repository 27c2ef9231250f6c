// Torch plugin: torchrun's PET_* environment, numProcPerNode derivation, envInjection targets,
// torchtune command rewriting, and the Torch admission checks. Mirrors upstream
// plugins/torch/{torch.go,torchtune.go} (v2.3.0).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/framework/interface.h"

namespace trainer::plugins {

class Torch final : public framework::Plugin,
                    public framework::EnforceMLPolicyPlugin,
                    public framework::CustomValidationPlugin {
 public:
  static constexpr std::string_view kName = "Torch";
  static StatusOr<std::unique_ptr<framework::Plugin>> New(const framework::PluginContext& ctx);

  std::string_view Name() const override { return kName; }
  // framework::EnforceMLPolicyPlugin
  Status EnforceMLPolicy(framework::Info* info, api::TrainJob& job) override;
  // framework::CustomValidationPlugin
  field::ValidationResult Validate(const framework::Info* info, const api::TrainJob* old_job,
                                   const api::TrainJob& new_job) override;
};

namespace torch {

inline constexpr char kEnvNumNodes[] = "PET_NNODES";
inline constexpr char kEnvNumProcPerNode[] = "PET_NPROC_PER_NODE";
inline constexpr char kEnvNodeRank[] = "PET_NODE_RANK";
inline constexpr char kEnvMasterAddr[] = "PET_MASTER_ADDR";
inline constexpr char kEnvMasterPort[] = "PET_MASTER_PORT";

// numProcPerNode: an integer or the string "auto" (intstr.IntOrString).
struct ProcPerNode {
  bool is_int = false;
  int64_t value = 0;
  std::string ToString() const { return is_int ? std::to_string(value) : "auto"; }
};

// ceil(requests.cpu) if non-zero, else ceil(limits.cpu), else 0.
int64_t GetNumCPUPerNode(const json::Value& resources);

// Torchtune helpers (torchtune.go).
bool IsTorchTuneCommand(const std::optional<std::vector<std::string>>& command);
// "torchtune-llama3.2-1b" -> "llama3_2/1B"; "" unless the name has exactly three '-' parts.
std::string GetModelFromRuntimeRef(std::string_view runtime_ref_name);
bool IsLoraConfigEnabled(const std::vector<std::string>& args);
bool IsUseQLoraFinetune(const std::vector<std::string>& args);
struct RecipeAndConfig {
  std::string recipe;
  std::string config;
};
RecipeAndConfig GetRecipeAndConfig(int32_t num_nodes, const ProcPerNode& proc, int64_t gpu,
                                   const api::TrainJob& job);
// Commands of the runtime trainer `node` container whose key is an immutable torchtune config.
std::vector<std::string> ExtractOverridesFromRuntime(const framework::Info& info);
field::ErrorList ValidateTorchTune(const framework::Info* info, const api::TrainJob& job);

}  // namespace torch
}  // namespace trainer::plugins
