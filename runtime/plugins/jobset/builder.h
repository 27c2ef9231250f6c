// Builder: the TrainJob-specific edits of a JobSet document (upstream
// plugins/jobset/builder.go). Each step edits the JobSet in place and returns the builder.
//
//   json::Value js = Builder(std::move(jobset)).Initializer(job).Trainer(info, job)
//                        .PodLabels(info.scheduler.pod_labels).Suspend(job.spec.suspend).Build();
#pragma once

#include <map>
#include <optional>
#include <string>

#include "common/json/json.h"
#include "runtime/api/types.h"
#include "runtime/framework/info.h"

namespace trainer::plugins::jobset {

class Builder {
 public:
  // `jobset` is a JobSet document ({apiVersion, kind, metadata, spec}).
  explicit Builder(json::Value jobset) : jobset_(std::move(jobset)) {}

  // dataset-/model-initializer ancestor jobs: replicas 1; STORAGE_URI, initializer env and the
  // secretRef envFrom on the initializer container.
  Builder& Initializer(const api::TrainJob& job);
  // trainer ancestor jobs: replicas 1; image/command/args of the `node` container; trainer env
  // into `node` (also of the MPI `node` job when runLauncherAsNode).
  Builder& Trainer(const framework::Info& info, const api::TrainJob& job);
  // Merged into every replicatedJob's pod template metadata.
  Builder& PodLabels(const std::map<std::string, std::string>& labels);
  Builder& PodAnnotations(const std::map<std::string, std::string>& annotations);
  // spec.suspend = suspend; unset removes the field (upstream assigns the pointer).
  Builder& Suspend(std::optional<bool> suspend);
  json::Value Build() { return std::move(jobset_); }

 private:
  json::Value* ReplicatedJobs();
  json::Value jobset_;
};

}  // namespace trainer::plugins::jobset
