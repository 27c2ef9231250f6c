// AdmissionReview in -> out goldens: every case under tests/unit/webhook/testdata/golden/<case>/
// posts `review.yaml` (as JSON) or the raw `body` to `path` through the full AdmissionMux with
// the four webhooks, runtimes from testdata/runtimes.yaml and a fixed clock, and compares
//   {"httpStatus": ..., "review": <the AdmissionReview answered>, "patch": <its decoded patch>}
// with want.json. UPDATE_GOLDENS=1 rewrites the want files; review the diff before committing.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/encoding/base64.h"
#include "common/files/files.h"
#include "common/json/json.h"
#include "runtime/api/codec.h"
#include "runtime/api/defaults.h"
#include "runtime/api/manifests.h"
#include "runtime/core/registry.h"
#include "runtime/framework/testing/testing.h"
#include "webhook/cluster_reader.h"
#include "webhook/mux.h"
#include "webhook/webhooks.h"

namespace trainer::webhook {
namespace {

namespace fs = std::filesystem;

constexpr char kTestdata[] = "tests/unit/webhook/testdata";
constexpr char kNow[] = "2026-01-02T03:04:05Z";

std::string ReadFile(const fs::path& p) {
  StatusOr<std::string> text = files::ReadFile(p.string());
  return text.ok() ? *text : std::string();
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) {
    s.pop_back();
  }
  return s;
}

std::string Base64Decode(const std::string& in) {
  StatusOr<std::string> out = encoding::Base64Decode(in);
  REQUIRE(out.ok());
  return *out;
}

std::unique_ptr<ClusterReader> Runtimes() {
  StatusOr<api::Manifests> m =
      api::DecodeManifests(ReadFile(fs::path(kTestdata) / "runtimes.yaml"));
  REQUIRE(m.ok());
  std::vector<json::Value> objects;
  for (api::TrainingRuntime& rt : m->runtimes) {
    api::ApplyRuntimeSchemaDefaults(rt);
    objects.push_back(api::EncodeTrainingRuntime(rt));
  }
  auto reader = NewStaticClusterReader(std::move(objects));
  REQUIRE(reader.ok());
  return std::move(reader).value();
}

// The four webhooks on one mux, over testdata/runtimes.yaml, with the fixed clock.
struct Webhooks {
  Webhooks() : reader(Runtimes()) {
    auto made = core::Runtimes::New(*reader, [] { return std::string(kNow); });
    REQUIRE(made.ok());
    runtimes = std::move(made).value();
    RegisterWebhooks(mux, {.runtimes = runtimes.get(), .reader = reader.get(), .now = [] {
                             return std::string(kNow);
                           }});
  }
  std::unique_ptr<ClusterReader> reader;
  std::unique_ptr<core::Runtimes> runtimes;
  AdmissionMux mux{nullptr};
};

std::vector<fs::path> GoldenCases() {
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(fs::path(kTestdata) / "golden")) {
    cases.push_back(e.path());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

HttpReply ServeCase(AdmissionMux& mux, const fs::path& dir) {
  std::string path = Trim(ReadFile(dir / "path"));
  std::string body = fs::exists(dir / "body")
                         ? ReadFile(dir / "body")
                         : json::Write(testing::Yaml(ReadFile(dir / "review.yaml")));
  return mux.Serve(path, "application/json", body);
}

TEST_CASE("AdmissionReview goldens") {
  Webhooks webhooks;
  const bool update = std::getenv("UPDATE_GOLDENS") != nullptr;

  std::vector<fs::path> cases = GoldenCases();
  REQUIRE(cases.size() >= 20);
  for (const fs::path& dir : cases) {
    DYNAMIC_SECTION(dir.filename().string()) {
      HttpReply reply = ServeCase(webhooks.mux, dir);

      json::Value got = json::Value::Object();
      got.Set("httpStatus", json::Value(reply.status));
      StatusOr<json::Value> review = json::Parse(reply.body);
      REQUIRE(review.ok());
      const json::Value* response = review->Find("response");
      if (response != nullptr && response->Has("patch")) {
        StatusOr<json::Value> ops = json::Parse(Base64Decode(response->Find("patch")->AsString()));
        REQUIRE(ops.ok());
        got.Set("patch", std::move(ops).value());
      }
      got.Set("review", std::move(review).value());
      std::string text = json::WritePretty(got, /*sort_keys=*/false) + "\n";

      fs::path want_file = dir / "want.json";
      if (update) {
        std::ofstream(want_file) << text;
      }
      INFO("case " << dir.filename().string() << " (UPDATE_GOLDENS=1 rewrites want.json)");
      REQUIRE(fs::exists(want_file));
      CHECK(text == ReadFile(want_file));
    }
  }
}

// EncodeAdmissionReview as it was written before it streamed its fields: a json::Value tree in
// Go's field order, written by json::Write. The streamed encoder must write the same bytes.
std::string TreeEncode(std::string_view uid, const AdmissionResponse& response,
                       std::string_view api_version) {
  json::Value status = json::Value::Object();
  status.Set("metadata", json::Value::Object());
  if (!response.message.empty()) {
    status.Set("message", json::Value(response.message));
  }
  if (!response.reason.empty()) {
    status.Set("reason", json::Value(response.reason));
  }
  status.Set("code", json::Value(response.code == 0 ? 200 : response.code));
  json::Value resp = json::Value::Object();
  resp.Set("uid", json::Value(uid));
  resp.Set("allowed", json::Value(response.allowed));
  resp.Set("status", std::move(status));
  if (response.patch.IsArray() && !response.patch.empty()) {
    resp.Set("patch", json::Value(encoding::Base64Encode(json::Write(response.patch))));
    resp.Set("patchType", json::Value("JSONPatch"));
  }
  if (!response.warnings.empty()) {
    resp.Set("warnings", json::Value::StringArray(response.warnings));
  }
  json::Value review = json::Value::Object();
  review.Set("kind", json::Value("AdmissionReview"));
  review.Set("apiVersion", json::Value(api_version));
  review.Set("response", std::move(resp));
  return json::Write(review);
}

// The AdmissionResponse a served review carries (the inverse of the encoders).
AdmissionResponse ResponseOf(const json::Value& review) {
  const json::Value& resp = *review.Find("response");
  AdmissionResponse r;
  r.allowed = resp.Find("allowed")->AsBool();
  const json::Value& status = *resp.Find("status");
  r.code = static_cast<int32_t>(status.Find("code")->AsInt());
  if (const json::Value* m = status.Find("message")) r.message = m->AsString();
  if (const json::Value* m = status.Find("reason")) r.reason = m->AsString();
  if (const json::Value* p = resp.Find("patch")) {
    StatusOr<json::Value> ops = json::Parse(Base64Decode(p->AsString()));
    REQUIRE(ops.ok());
    r.patch = std::move(ops).value();
  }
  if (const json::Value* w = resp.Find("warnings")) {
    for (const json::Value& e : w->elements()) r.warnings.push_back(e.AsString());
  }
  return r;
}

TEST_CASE("The streamed AdmissionReview encoder writes the tree encoder's bytes") {
  SECTION("every golden case") {
    Webhooks webhooks;
    for (const fs::path& dir : GoldenCases()) {
      HttpReply reply = ServeCase(webhooks.mux, dir);
      INFO("case " << dir.filename().string() << "\n" << reply.body);
      StatusOr<json::Value> review = json::Parse(reply.body);
      REQUIRE(review.ok());
      const std::string& api_version = review->Find("apiVersion")->AsString();
      const std::string& uid = review->Find("response")->Find("uid")->AsString();
      AdmissionResponse r = ResponseOf(*review);
      CHECK(TreeEncode(uid, r, api_version) == reply.body);
      CHECK(EncodeAdmissionReview(uid, r, api_version) == reply.body);
    }
  }

  SECTION("strings that need escaping or replacing, warnings, patches, codes") {
    std::vector<AdmissionResponse> responses;
    responses.push_back(AdmissionResponse::Allowed());
    responses.push_back(AdmissionResponse::Denied(
        "spec.x: Invalid value: \"a\\b\"\n\t\x01 </script> \xc3\xa9 \xe2\x80\xa8 bad \xff\xc3"));
    responses.push_back(AdmissionResponse::Errored(500, "").WithWarnings({"", "w\x80", "\"q\""}));
    AdmissionResponse zero = AdmissionResponse::Errored(0, "zero code");
    zero.reason = "Code\x7f\xed\xa0\x80";
    responses.push_back(std::move(zero));
    responses.push_back(AdmissionResponse::Errored(-7, "negative"));
    responses.push_back(AdmissionResponse::Patched(json::Value::Array()));
    json::Value ops = json::Value::Array();
    json::Value op = json::Value::Object();
    op.Set("op", json::Value("add"));
    op.Set("path", json::Value("/spec/x~1y"));
    op.Set("value", json::Value("\xf0\x9f\x98\x80 \xf0\x9f"));
    ops.PushBack(std::move(op));
    responses.push_back(AdmissionResponse::Patched(std::move(ops)).WithWarnings({"one", "two"}));
    for (const std::string_view uid : {std::string_view(""), std::string_view("0a1b-\xff\"\\")}) {
      for (const std::string_view version : {kAdmissionApiVersion, kAdmissionApiVersionBeta}) {
        for (const AdmissionResponse& r : responses) {
          std::string want = TreeEncode(uid, r, version);
          INFO(want);
          CHECK(EncodeAdmissionReview(uid, r, version) == want);
        }
      }
    }
  }
}

}  // namespace
}  // namespace trainer::webhook
