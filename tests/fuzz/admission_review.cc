// Fuzz target: the AdmissionReview handler end to end. The input is a request body; it is posted
// to each of the four trainer webhook paths through the full AdmissionMux (decoding, the handler,
// encoding), with the runtimes of tests/unit/webhook/testdata/runtimes.yaml in an in-memory
// cluster reader and a fixed clock, as tests/unit/webhook/golden_test.cc does. Properties:
//   - every reply body is a well-formed AdmissionReview: JSON, kind AdmissionReview, a response
//     with a string uid, a bool allowed and status.code;
//   - an answered request (HTTP 200) echoes request.uid;
//   - a patch is a base64 JSON Patch (patchType JSONPatch) that applies to request.object.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/encoding/base64.h"
#include "common/files/files.h"
#include "common/json/json.h"
#include "common/json/patch.h"
#include "runtime/api/codec.h"
#include "runtime/api/defaults.h"
#include "runtime/api/manifests.h"
#include "runtime/core/registry.h"
#include "tests/fuzz/fuzz_check.h"
#include "webhook/cluster_reader.h"
#include "webhook/mux.h"
#include "webhook/webhooks.h"

namespace trainer::fuzz {
namespace {

constexpr char kNow[] = "2026-01-02T03:04:05Z";

std::string ReadFile(const std::string& path) {
  StatusOr<std::string> text = files::ReadFile(path);
  return text.ok() ? *text : std::string();
}

// The mux with the four webhooks, built once: the reader and registry must outlive it.
struct Server {
  std::unique_ptr<webhook::ClusterReader> reader;
  std::unique_ptr<core::Runtimes> runtimes;
  std::unique_ptr<webhook::AdmissionMux> mux;

  Server() {
    std::string path =
        std::string(TRAINER_SOURCE_DIR) + "/tests/unit/webhook/testdata/runtimes.yaml";
    StatusOr<api::Manifests> m = api::DecodeManifests(ReadFile(path));
    FUZZ_CHECK(m.ok(), "decoding " + path + ": " + m.status().ToString());
    std::vector<json::Value> objects;
    for (api::TrainingRuntime& rt : m->runtimes) {
      api::ApplyRuntimeSchemaDefaults(rt);
      objects.push_back(api::EncodeTrainingRuntime(rt));
    }
    auto r = webhook::NewStaticClusterReader(std::move(objects));
    FUZZ_CHECK(r.ok(), r.status().ToString());
    reader = std::move(r).value();
    auto rts = core::Runtimes::New(*reader, [] { return std::string(kNow); });
    FUZZ_CHECK(rts.ok(), rts.status().ToString());
    runtimes = std::move(rts).value();
    mux = std::make_unique<webhook::AdmissionMux>(nullptr);
    webhook::RegisterWebhooks(*mux, {.runtimes = runtimes.get(), .reader = reader.get(), .now = [] {
                                       return std::string(kNow);
                                     }});
  }
};

std::string Base64Decode(const std::string& in) {
  StatusOr<std::string> out = encoding::Base64Decode(in);
  FUZZ_CHECK(out.ok(), "patch is not padded base64: " + in);
  return *out;
}

// request.uid and request.object of the body, when it has them.
std::string RequestUid(const StatusOr<json::Value>& body) {
  if (!body.ok()) {
    return "";
  }
  const json::Value* req = body->Find("request");
  const json::Value* uid = req != nullptr ? req->Find("uid") : nullptr;
  return uid != nullptr && uid->IsString() ? uid->AsString() : "";
}

void CheckReply(std::string_view path, const StatusOr<json::Value>& body,
                const webhook::HttpReply& reply) {
  const std::string where = std::string(path) + " (HTTP " + std::to_string(reply.status) + ")";
  StatusOr<json::Value> review = json::Parse(reply.body);
  FUZZ_CHECK(review.ok(), where + ": reply is not JSON: " + reply.body);
  const json::Value* kind = review->Find("kind");
  FUZZ_CHECK(kind != nullptr && kind->IsString() && kind->AsString() == "AdmissionReview",
             where + ": reply is not an AdmissionReview: " + reply.body);
  const json::Value* resp = review->Find("response");
  FUZZ_CHECK(resp != nullptr && resp->IsObject(), where + ": no response: " + reply.body);
  const json::Value* uid = resp->Find("uid");
  FUZZ_CHECK(uid != nullptr && uid->IsString(), where + ": no response.uid: " + reply.body);
  const json::Value* allowed = resp->Find("allowed");
  FUZZ_CHECK(allowed != nullptr && allowed->IsBool(), where + ": no allowed: " + reply.body);
  const json::Value* status = resp->Find("status");
  const json::Value* code = status != nullptr ? status->Find("code") : nullptr;
  FUZZ_CHECK(code != nullptr && code->IsInt(), where + ": no status.code: " + reply.body);
  if (reply.status == 200) {
    FUZZ_CHECK(uid->AsString() == RequestUid(body), where + ": uid not echoed: got \"" +
                                                        uid->AsString() + "\" want \"" +
                                                        RequestUid(body) + "\"");
  }
  const json::Value* patch = resp->Find("patch");
  if (patch == nullptr) {
    return;
  }
  const json::Value* type = resp->Find("patchType");
  FUZZ_CHECK(type != nullptr && type->IsString() && type->AsString() == "JSONPatch",
             where + ": patch without patchType JSONPatch: " + reply.body);
  FUZZ_CHECK(patch->IsString(), where + ": patch is not a string");
  StatusOr<json::Value> ops = json::Parse(Base64Decode(patch->AsString()));
  FUZZ_CHECK(ops.ok() && ops->IsArray(), where + ": patch is not a JSON array");
  const json::Value* object = body->Find("request")->Find("object");
  FUZZ_CHECK(object != nullptr, where + ": a patch for a request without an object");
  json::Value doc = object->Clone();
  Status applied = json::ApplyJsonPatch(doc, *ops);
  FUZZ_CHECK(applied.ok(), where + ": the patch does not apply to request.object: " +
                               applied.ToString() + "\n  patch: " + json::Write(*ops));
}

}  // namespace
}  // namespace trainer::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainer;
  static fuzz::Server* server = new fuzz::Server();  // leaked: lives for the whole run
  std::string_view body(reinterpret_cast<const char*>(data), size);
  StatusOr<json::Value> parsed = json::Parse(body);
  for (const char* path :
       {webhook::kMutateTrainJobPath, webhook::kValidateTrainJobPath,
        webhook::kValidateTrainingRuntimePath, webhook::kValidateClusterTrainingRuntimePath}) {
    webhook::HttpReply reply = server->mux->Serve(path, "application/json", body);
    fuzz::CheckReply(path, parsed, reply);
  }
  return 0;
}
