// XGBoost plugin: the DMLC_* rabit tracker environment and port on the trainer `node`
// container, one worker per GPU (or per node on CPU), and the reserved-env admission check.
// Mirrors upstream plugins/xgboost/xgboost.go (v2.3.0). PlainML also runs for XGBoost runtimes
// (numNodes, trainer env); it is registered first, so the trainer env precedes DMLC_*.
#pragma once

#include <memory>
#include <string_view>

#include "runtime/framework/interface.h"

namespace trainer::plugins {

class XGBoost final : public framework::Plugin,
                      public framework::EnforceMLPolicyPlugin,
                      public framework::CustomValidationPlugin {
 public:
  static constexpr std::string_view kName = "XGBoost";
  static StatusOr<std::unique_ptr<framework::Plugin>> New(const framework::PluginContext& ctx);

  std::string_view Name() const override { return kName; }
  // framework::EnforceMLPolicyPlugin
  Status EnforceMLPolicy(framework::Info* info, api::TrainJob& job) override;
  // framework::CustomValidationPlugin: one Forbidden error per reserved trainer env entry.
  field::ValidationResult Validate(const framework::Info* info, const api::TrainJob* old_job,
                                   const api::TrainJob& new_job) override;
};

namespace xgboost {
inline constexpr char kEnvTrackerURI[] = "DMLC_TRACKER_URI";
inline constexpr char kEnvTrackerPort[] = "DMLC_TRACKER_PORT";
inline constexpr char kEnvTaskID[] = "DMLC_TASK_ID";
inline constexpr char kEnvNumWorker[] = "DMLC_NUM_WORKER";
}  // namespace xgboost

}  // namespace trainer::plugins
