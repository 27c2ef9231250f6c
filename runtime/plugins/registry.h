// The plugin registry: the one ordered list of every runtime plugin (upstream
// pkg/runtime/framework/plugins/registry.go, which is a Go map; ours is a vector so phase order,
// env order and golden files are deterministic).
//
//   ASSIGN_OR_RETURN(auto plugins, plugins::NewPlugins(ctx));
//   ASSIGN_OR_RETURN(auto fw, framework::Framework::New(std::move(plugins)));
#pragma once

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "runtime/framework/interface.h"

namespace trainer::plugins {

struct PluginFactory {
  std::string_view name;
  std::function<StatusOr<std::unique_ptr<framework::Plugin>>(const framework::PluginContext&)> make;
  // Whether the plugin runs with this configuration (its feature gate); null: always.
  std::function<bool(const framework::Config&)> enabled = nullptr;
};

// The registry, in phase order (see registry.cc for why this order).
const std::vector<PluginFactory>& Registry();

// One instance of every plugin of `factories` enabled by ctx.config, in their order.
StatusOr<std::vector<std::unique_ptr<framework::Plugin>>> NewPlugins(
    const framework::PluginContext& ctx, const std::vector<PluginFactory>& factories = Registry());

}  // namespace trainer::plugins
