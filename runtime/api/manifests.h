// Decoding of kubectl-style YAML files (one or more "---" separated documents, possibly `List`s)
// into the API kinds, for trainer-render and tests: TrainJobs and (Cluster)TrainingRuntimes are
// decoded with codec.h, any other document is handed back as JSON.
//
//   ASSIGN_OR_RETURN(api::Manifests m, api::DecodeManifests(file_text));
//   for (api::TrainJob& job : m.train_jobs) ...
#pragma once

#include <string_view>
#include <vector>

#include "common/json/json.h"
#include "common/status/status.h"
#include "runtime/api/types.h"

namespace trainer::api {

struct Manifests {
  std::vector<TrainJob> train_jobs;
  std::vector<TrainingRuntime> runtimes;  // TrainingRuntime and ClusterTrainingRuntime
  std::vector<json::Value> others;        // every other document, in order
};

// Decodes every document (and every item of a `List` / `<Kind>List` document). Errors name the
// document (1-based) and object: "document 2 (TrainJob ns/x): spec.trainer.numNodes: expected
// integer, got string"; YAML errors keep their line and column.
StatusOr<Manifests> DecodeManifests(std::string_view yaml_text);
// The same, appending to `out` (to gather several files).
Status DecodeManifestsInto(std::string_view yaml_text, Manifests* out);

}  // namespace trainer::api
