// Test helpers for the runtime pipeline: objects from YAML text, and Info/PodSet builders in the
// spirit of upstream's pkg/util/testing wrappers. Test-only: failures throw std::runtime_error,
// which Catch2 reports with the message.
//
//   api::TrainJob job = testing::TrainJob(R"(
//     metadata: {name: test-job, namespace: default}
//     spec: {runtimeRef: {name: torch}, trainer: {numNodes: 2}})");
//   framework::Info info = testing::InfoBuilder().MLPolicy("{torch: {}}").PodSet(
//       testing::PodSet("node").Ancestor("trainer").Count(1).Containers({"node"})).Build();
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json/json.h"
#include "runtime/api/types.h"
#include "runtime/framework/info.h"

namespace trainer::testing {

json::Value Yaml(std::string_view text);
// A TrainJob from YAML (apiVersion/kind may be omitted), with the CRD schema defaults applied.
api::TrainJob TrainJob(std::string_view yaml);
// A TrainingRuntime/ClusterTrainingRuntime from YAML (kind required), with schema defaults.
api::TrainingRuntime Runtime(std::string_view yaml);
// An api::MLPolicy from YAML ({numNodes, torch: {...}}).
api::MLPolicy MLPolicy(std::string_view yaml);

class PodSet {
 public:
  explicit PodSet(std::string name) {
    ps_.name = std::move(name);
    ps_.count = 1;
  }
  PodSet& Ancestor(std::string a) {
    ps_.ancestor = std::move(a);
    return *this;
  }
  PodSet& Count(int32_t c) {
    ps_.count = c;
    return *this;
  }
  PodSet& NoCount() {
    ps_.count.reset();
    return *this;
  }
  PodSet& Containers(const std::vector<std::string>& names);
  PodSet& InitContainers(const std::vector<std::string>& names);
  // A container from YAML ({name, image, command, env, ports, volumeMounts}).
  PodSet& Container(std::string_view yaml);
  PodSet& InitContainer(std::string_view yaml);
  PodSet& Volumes(std::string_view yaml);
  framework::PodSet Build() { return std::move(ps_); }

 private:
  framework::PodSet ps_;
};

class InfoBuilder {
 public:
  InfoBuilder& MLPolicy(std::string_view yaml);
  InfoBuilder& PodSet(testing::PodSet& ps);  // takes the built PodSet
  InfoBuilder& PodSet(testing::PodSet&& ps) { return PodSet(ps); }
  InfoBuilder& JobSetSpec(std::string_view yaml);
  InfoBuilder& Label(std::string k, std::string v) {
    info_.labels[k] = v;
    return *this;
  }
  framework::Info Build() { return std::move(info_); }

 private:
  framework::Info info_;
};

// Names of a container's env in order, e.g. "A,B,PET_NNODES".
std::string EnvNames(const json::Value& env);
// The value of env `name` ("" when absent or valueFrom).
std::string EnvValue(const json::Value& env, std::string_view name);
// The canonical JSON of a value, for readable comparisons in CHECK messages.
std::string Canon(const json::Value& v);

}  // namespace trainer::testing
