// Fuzz target: the API decoders (runtime/api/codec.h, manifests.h). The input is YAML (or JSON)
// text; every document is decoded as a TrainJob, a TrainingRuntime, a ClusterTrainingRuntime and
// a TrainJob status, and the whole text as kubectl-style manifests. Property: decoding is stable,
// decode -> encode -> decode succeeds and encodes to the same JSON (codec.h's contract), for the
// typed fields and for the unknown fields kept in `raw`.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/json/json.h"
#include "common/yaml/yaml.h"
#include "runtime/api/codec.h"
#include "runtime/api/manifests.h"
#include "tests/fuzz/fuzz_check.h"

namespace trainer::fuzz {
namespace {

// decode(doc) ok => decode(encode(decode(doc))) ok and encodes to the same JSON.
template <typename T, typename Decode, typename Encode>
void CheckStable(const char* what, const json::Value& doc, Decode decode, Encode encode) {
  StatusOr<T> first = decode(doc);
  if (!first.ok()) {
    return;
  }
  json::Value encoded = encode(*first);
  StatusOr<T> second = decode(encoded);
  FUZZ_CHECK(second.ok(), std::string(what) + ": re-decoding the encoded object failed: " +
                              second.status().ToString() + "\n  " + json::Write(encoded));
  json::Value again = encode(*second);
  FUZZ_CHECK(again == encoded, std::string(what) + ": decode -> encode is not stable:\n  first:  " +
                                   json::WriteCanonical(encoded) +
                                   "\n  second: " + json::WriteCanonical(again));
}

void CheckDocument(const json::Value& doc) {
  CheckStable<api::TrainJob>(
      "TrainJob", doc, [](const json::Value& d) { return api::DecodeTrainJob(d); },
      api::EncodeTrainJob);
  // Decoding from a moved document (the webhook's path) gives the same TrainJob.
  StatusOr<api::TrainJob> copied = api::DecodeTrainJob(doc);
  StatusOr<api::TrainJob> moved = api::DecodeTrainJob(doc.Clone());
  FUZZ_CHECK(copied.ok() == moved.ok(),
             "TrainJob: decoding a moved document: " + moved.status().ToString());
  if (copied.ok()) {
    FUZZ_CHECK(api::EncodeTrainJob(*copied) == api::EncodeTrainJob(*moved),
               "TrainJob: a moved document decodes differently");
  }
  CheckStable<api::TrainingRuntime>("TrainingRuntime", doc, api::DecodeTrainingRuntime,
                                    api::EncodeTrainingRuntime);
  for (std::string_view kind : {api::kTrainingRuntimeKind, api::kClusterTrainingRuntimeKind}) {
    CheckStable<api::TrainingRuntime>(
        "TrainingRuntime (typed list item)", doc,
        [kind](const json::Value& d) { return api::DecodeTrainingRuntimeAs(d, kind); },
        api::EncodeTrainingRuntime);
  }
  const json::Value* status = doc.Find("status");
  CheckStable<api::TrainJobStatus>("TrainJobStatus", status != nullptr ? *status : doc,
                                   api::DecodeTrainJobStatus, api::EncodeTrainJobStatus);
}

}  // namespace
}  // namespace trainer::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainer;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  StatusOr<std::vector<json::Value>> docs = yaml::ParseYamlDocuments(text);
  if (docs.ok()) {
    for (const json::Value& doc : *docs) {
      fuzz::CheckDocument(doc);
    }
  }
  StatusOr<api::Manifests> manifests = api::DecodeManifests(text);
  if (manifests.ok()) {
    for (const api::TrainJob& job : manifests->train_jobs) {
      fuzz::CheckDocument(api::EncodeTrainJob(job));
    }
    for (const api::TrainingRuntime& rt : manifests->runtimes) {
      fuzz::CheckDocument(api::EncodeTrainingRuntime(rt));
    }
  }
  return 0;
}
