// JSON codecs of the trainer.kubeflow.org/v1alpha1 kinds: TrainJob, TrainingRuntime and
// ClusterTrainingRuntime (upstream pkg/apis/trainer/v1alpha1/*_types.go, read through Go's
// encoding/json with the CRD schema in front of it).
//
// Decoding is strict about types and tolerant of unknown fields:
//   - a wrong type is an InvalidArgument error naming the field path as the user wrote it:
//     "spec.trainer.numNodes: expected integer, got string";
//   - integers may arrive as integral doubles (the Python SDK sends 2.0); int32 fields are
//     range-checked ("spec.trainer.numNodes: 3000000000 overflows int32");
//   - quantities in spec.trainer.resourcesPerNode.{limits,requests} may be strings or numbers and
//     are stored in canonical form ({"cpu": 1.0} -> "1", 0.5 -> "500m"); a bad one is an error
//     naming e.g. "spec.trainer.resourcesPerNode.limits.cpu";
//   - the whole document is kept in `raw`, so unknown fields (and the deprecated
//     spec.podTemplateOverrides, see podtemplateoverrides.h) survive.
//
// Encoding writes the typed fields, with upstream's JSON names, over a copy of `raw`: typed fields
// are authoritative (an unset optional removes the key, as Go's omitempty would not write it) and
// everything else in `raw` is kept. So Decode -> Encode -> Decode is stable, and an object built
// in code (empty `raw`) encodes to exactly its typed fields.
//
//   ASSIGN_OR_RETURN(api::TrainJob job, api::DecodeTrainJob(doc));
//   job.spec.suspend = true;
//   json::Value out = api::EncodeTrainJob(job);
#pragma once

#include <string_view>

#include "common/json/json.h"
#include "common/status/status.h"
#include "runtime/api/types.h"

namespace trainer::api {

// A TrainJob document. apiVersion and kind, when present, must be trainer.kubeflow.org/v1alpha1
// and TrainJob (list items from some clients omit them).
StatusOr<TrainJob> DecodeTrainJob(const json::Value& doc);
// The same, keeping `doc` itself as TrainJob::raw instead of a copy of it, and moving env,
// resourcesPerNode and each runtimePatches entry's trainingRuntimeSpec into the typed fields
// instead of copying them: raw then holds null there (the keys keep their places;
// EncodeTrainJob writes the typed values back). For callers that own the document and read
// those parts through the typed fields (webhook, controller); the others (trainer-render, which
// encodes what it read; anything keeping `doc`) use the form above.
StatusOr<TrainJob> DecodeTrainJob(json::Value&& doc);

// A TrainingRuntime or ClusterTrainingRuntime document: apiVersion must be
// trainer.kubeflow.org/v1alpha1 and kind one of the two (both are required).
StatusOr<TrainingRuntime> DecodeTrainingRuntime(const json::Value& doc);
// The same for documents that may lack apiVersion/kind (items of a typed list): `kind`
// (kTrainingRuntimeKind or kClusterTrainingRuntimeKind) is assumed when the document has none,
// and must match when it has one.
StatusOr<TrainingRuntime> DecodeTrainingRuntimeAs(const json::Value& doc, std::string_view kind);

// The `status` object of a TrainJob (errors are named "status.conditions[0].type" ...). A null
// value decodes to an empty status.
StatusOr<TrainJobStatus> DecodeTrainJobStatus(const json::Value& status);

json::Value EncodeTrainJob(const TrainJob& job);
json::Value EncodeTrainingRuntime(const TrainingRuntime& runtime);

// The status object as the controller writes it and the SDK reads it: every jobsStatus entry
// with name and all five counters (zeros included), every condition with type, status,
// observedGeneration (when set), lastTransitionTime, reason and message (possibly ""), and
// trainerStatus verbatim when set. Empty lists are omitted; an empty status encodes to {}.
json::Value EncodeTrainJobStatus(const TrainJobStatus& status);

// One runtimePatches entry, as written under spec.runtimePatches[].
json::Value EncodeRuntimePatch(const RuntimePatch& patch);

}  // namespace trainer::api
