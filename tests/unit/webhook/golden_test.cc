// AdmissionReview in -> out goldens: every case under tests/unit/webhook/testdata/golden/<case>/
// posts `review.yaml` (as JSON) or the raw `body` to `path` through the full AdmissionMux with
// the four webhooks, runtimes from testdata/runtimes.yaml and a fixed clock, and compares
//   {"httpStatus": ..., "review": <the AdmissionReview answered>, "patch": <its decoded patch>}
// with want.json. UPDATE_GOLDENS=1 rewrites the want files; review the diff before committing.

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

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

TEST_CASE("AdmissionReview goldens") {
  std::unique_ptr<ClusterReader> reader = Runtimes();
  auto runtimes = core::Runtimes::New(*reader, [] { return std::string(kNow); });
  REQUIRE(runtimes.ok());
  AdmissionMux mux(nullptr);
  RegisterWebhooks(mux, {.runtimes = runtimes->get(), .reader = reader.get(), .now = [] {
                           return std::string(kNow);
                         }});
  const bool update = std::getenv("UPDATE_GOLDENS") != nullptr;

  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(fs::path(kTestdata) / "golden")) {
    cases.push_back(e.path());
  }
  std::sort(cases.begin(), cases.end());
  REQUIRE(cases.size() >= 20);
  for (const fs::path& dir : cases) {
    DYNAMIC_SECTION(dir.filename().string()) {
      std::string path = Trim(ReadFile(dir / "path"));
      std::string body = fs::exists(dir / "body")
                             ? ReadFile(dir / "body")
                             : json::Write(testing::Yaml(ReadFile(dir / "review.yaml")));
      HttpReply reply = mux.Serve(path, "application/json", body);

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

}  // namespace
}  // namespace trainer::webhook
