// PlainML plugin: numNodes and trainer env for runtimes without a torch/mpi/jax policy (also
// xgboost and flux, which rely on it). Mirrors upstream plugins/plainml/plainml.go.
#pragma once

#include <memory>
#include <string_view>

#include "runtime/framework/interface.h"

namespace trainer::plugins {

class PlainML final : public framework::Plugin, public framework::EnforceMLPolicyPlugin {
 public:
  static constexpr std::string_view kName = "PlainML";
  static StatusOr<std::unique_ptr<framework::Plugin>> New(const framework::PluginContext& ctx);

  std::string_view Name() const override { return kName; }
  // framework::EnforceMLPolicyPlugin
  Status EnforceMLPolicy(framework::Info* info, api::TrainJob& job) override;
};

}  // namespace trainer::plugins
