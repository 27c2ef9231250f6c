// JAX plugin: the JAX distributed environment (JAX_NUM_PROCESSES, JAX_PROCESS_ID,
// JAX_COORDINATOR_ADDRESS) and the coordinator port on the trainer `node` container. Mirrors
// upstream plugins/jax/jax.go (v2.3.0), whose Validate accepts everything: JAX reserves no env
// names, and the TrainJob's env is applied after these by the JobSet builder, so users may
// override them.
#pragma once

#include <memory>
#include <string_view>

#include "runtime/framework/interface.h"

namespace trainer::plugins {

class JAX final : public framework::Plugin,
                  public framework::EnforceMLPolicyPlugin,
                  public framework::CustomValidationPlugin {
 public:
  static constexpr std::string_view kName = "JAX";
  static StatusOr<std::unique_ptr<framework::Plugin>> New(const framework::PluginContext& ctx);

  std::string_view Name() const override { return kName; }
  // framework::EnforceMLPolicyPlugin
  Status EnforceMLPolicy(framework::Info* info, api::TrainJob& job) override;
  // framework::CustomValidationPlugin: no checks (as upstream).
  field::ValidationResult Validate(const framework::Info* info, const api::TrainJob* old_job,
                                   const api::TrainJob& new_job) override;
};

namespace jax {
inline constexpr char kEnvNumProcesses[] = "JAX_NUM_PROCESSES";
inline constexpr char kEnvProcessID[] = "JAX_PROCESS_ID";
inline constexpr char kEnvCoordinatorAddress[] = "JAX_COORDINATOR_ADDRESS";
}  // namespace jax

}  // namespace trainer::plugins
