// Unit tests for webhook/admission + webhook/mux: the AdmissionReview wire format (as
// controller-runtime writes it), the error policy, metrics, and the same over TLS.
#include "webhook/mux.h"

#include <httplib.h>

#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <string>

#include "common/encoding/base64.h"
#include "common/http/cert_watcher.h"
#include "common/http/server.h"
#include "common/http/testing/test_certs.h"
#include "common/json/json.h"
#include "common/metrics/metrics.h"
#include "webhook/admission.h"

namespace trainer::webhook {
namespace {

constexpr char kPath[] = "/validate-trainer-kubeflow-org-v1alpha1-trainjob";

class FuncHandler final : public AdmissionHandler {
 public:
  explicit FuncHandler(std::function<AdmissionResponse(const AdmissionRequest&)> f)
      : f_(std::move(f)) {}
  AdmissionResponse Handle(const AdmissionRequest& req) override { return f_(req); }

 private:
  std::function<AdmissionResponse(const AdmissionRequest&)> f_;
};

std::string Review(std::string_view uid = "705ab4f5-6393-11e8-b7cc-42010a800002",
                   std::string_view operation = "CREATE", bool dry_run = false) {
  return std::string(
             R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{)") +
         R"("uid":")" + std::string(uid) + R"(",)" +
         R"("kind":{"group":"trainer.kubeflow.org","version":"v1alpha1","kind":"TrainJob"},)" +
         R"("resource":{"group":"trainer.kubeflow.org","version":"v1alpha1","resource":"trainjobs"},)" +
         R"("name":"job","namespace":"ns","operation":")" + std::string(operation) + R"(",)" +
         R"("userInfo":{"username":"alice"},)" +
         R"("object":{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob",)" +
         R"("metadata":{"name":"job","namespace":"ns"},"spec":{"runtimeRef":{"name":"torch"}}},)" +
         R"("oldObject":null,"dryRun":)" + (dry_run ? "true" : "false") + "}}";
}

std::string Base64Decode(const std::string& in) {
  StatusOr<std::string> out = encoding::Base64Decode(in);
  REQUIRE(out.ok());
  return *out;
}

struct Fixture {
  metrics::Registry registry;
  AdmissionMux mux{&registry};
  std::function<AdmissionResponse(const AdmissionRequest&)> behaviour =
      [](const AdmissionRequest&) { return AdmissionResponse::Allowed(); };
  AdmissionRequest last;

  Fixture() {
    mux.Register(kPath, std::make_shared<FuncHandler>([this](const AdmissionRequest& req) {
                   last.uid = req.uid;
                   last.operation = req.operation;
                   last.kind = req.kind;
                   last.group = req.group;
                   last.version = req.version;
                   last.resource = req.resource;
                   last.name = req.name;
                   last.namespace_ = req.namespace_;
                   last.username = req.username;
                   last.dry_run = req.dry_run;
                   last.object = req.object.Clone();
                   last.old_object = req.old_object.Clone();
                   return behaviour(req);
                 }));
  }
  bool MetricsContain(const std::string& needle) {
    return registry.Text().find(needle) != std::string::npos;
  }
};

TEST_CASE("allowed: controller-runtime's response shape, uid echoed, request decoded") {
  Fixture f;
  HttpReply r = f.mux.Serve(kPath, "application/json", Review("u-1", "CREATE", true));
  CHECK(r.status == 200);
  CHECK(r.body ==
        R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"u-1",)"
        R"("allowed":true,"status":{"metadata":{},"code":200}}})");
  CHECK(f.last.uid == "u-1");
  CHECK(f.last.operation == "CREATE");
  CHECK(f.last.kind == "TrainJob");
  CHECK(f.last.group == "trainer.kubeflow.org");
  CHECK(f.last.version == "v1alpha1");
  CHECK(f.last.resource == "trainjobs");
  CHECK(f.last.name == "job");
  CHECK(f.last.namespace_ == "ns");
  CHECK(f.last.username == "alice");
  CHECK(f.last.dry_run);
  REQUIRE(f.last.object.IsObject());
  CHECK(json::WriteCanonical(*f.last.object.Find("spec")) == R"({"runtimeRef":{"name":"torch"}})");
  CHECK(f.last.old_object.IsNull());
}

TEST_CASE("unread parts (managedFields, options, userInfo.groups) are not decoded; still checked") {
  const std::string object =
      R"({"metadata":{"name":"job","managedFields":[{"manager":"kubectl","fieldsV1":{"f:spec":{}}}],)"
      R"("uid":"o"},"spec":{"x":1}})";
  StatusOr<AdmissionRequest> req = DecodeAdmissionReview(
      R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u",)"
      R"("operation":"UPDATE","requestKind":{"group":"g"},"requestResource":{"resource":"r"},)"
      R"("userInfo":{"username":"alice","groups":["a"],"extra":{"k":["v"]}},)"
      R"("options":{"kind":"UpdateOptions"},"object":)" +
      object + R"(,"oldObject":)" + object + "}}");
  REQUIRE(req.ok());
  CHECK(req->username == "alice");
  CHECK(req->operation == "UPDATE");
  for (const json::Value* o : {&req->object, &req->old_object}) {
    CHECK(json::Write(*o) == R"({"metadata":{"name":"job","uid":"o"},"spec":{"x":1}})");
  }
  StatusOr<AdmissionRequest> bad = DecodeAdmissionReview(
      R"({"request":{"uid":"u","object":{"metadata":{"managedFields":[1,]}}}})");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().rfind("couldn't decode the AdmissionReview: invalid JSON", 0) == 0);
  StatusOr<AdmissionRequest> bad_options =
      DecodeAdmissionReview(R"({"request":{"uid":"u","options":{"dryRun":[}}})");
  REQUIRE_FALSE(bad_options.ok());
}

TEST_CASE("denied: 403 Forbidden with the message, warnings kept; counted and HTTP 200") {
  Fixture f;
  f.behaviour = [](const AdmissionRequest&) {
    return AdmissionResponse::Denied("unsupported runtime: Foo.bar").WithWarnings({"w1", "w2"});
  };
  HttpReply r = f.mux.Serve(kPath, "application/json", Review("u-2"));
  CHECK(r.status == 200);
  CHECK(r.body ==
        R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"u-2",)"
        R"("allowed":false,"status":{"metadata":{},"message":"unsupported runtime: Foo.bar",)"
        R"("reason":"Forbidden","code":403},"warnings":["w1","w2"]}})");
  CHECK(f.MetricsContain(
      std::string("trainer_webhook_denials_total{reason=\"Forbidden\",webhook=\"") + kPath +
      "\"} 1"));
  CHECK(f.MetricsContain(
      std::string("controller_runtime_webhook_requests_total{code=\"200\",webhook=\"") + kPath +
      "\"} 1"));
}

TEST_CASE("patched: base64 JSONPatch and patchType; an empty patch is no patch") {
  Fixture f;
  f.behaviour = [](const AdmissionRequest&) {
    json::Value ops = json::Value::Array();
    json::Value op = json::Value::Object();
    op.Set("op", json::Value("add"));
    op.Set("path", json::Value("/spec/runtimePatches/0/time"));
    op.Set("value", json::Value("2025-01-01T00:00:00Z"));
    ops.PushBack(std::move(op));
    return AdmissionResponse::Patched(std::move(ops));
  };
  HttpReply r = f.mux.Serve(kPath, "application/json", Review("u-3"));
  CHECK(r.status == 200);
  auto doc = json::Parse(r.body);
  REQUIRE(doc.ok());
  const json::Value& resp = *doc->Find("response");
  CHECK(resp.Find("allowed")->AsBool());
  CHECK(resp.Find("patchType")->AsString() == "JSONPatch");
  CHECK(Base64Decode(resp.Find("patch")->AsString()) ==
        R"([{"op":"add","path":"/spec/runtimePatches/0/time","value":"2025-01-01T00:00:00Z"}])");

  f.behaviour = [](const AdmissionRequest&) {
    return AdmissionResponse::Patched(json::Value::Array());
  };
  HttpReply empty = f.mux.Serve(kPath, "application/json", Review("u-4"));
  CHECK(empty.body.find("patch") == std::string::npos);
}

TEST_CASE("v1beta1 reviews are answered in v1beta1") {
  Fixture f;
  std::string body = Review("u-5");
  body.replace(body.find("admission.k8s.io/v1"), 19, "admission.k8s.io/v1beta1");
  HttpReply r = f.mux.Serve(kPath, "application/json", body);
  CHECK(r.status == 200);
  CHECK(r.body.find(R"("apiVersion":"admission.k8s.io/v1beta1")") != std::string::npos);
}

TEST_CASE("error policy: 400, 404, 413, 415 with AdmissionReview bodies") {
  Fixture f;
  struct Case {
    std::string name;
    std::string path;
    std::string content_type;
    std::string body;
    int status;
    std::string message_part;
  };
  std::vector<Case> cases = {
      {"empty body", kPath, "application/json", "", 400, "request body is empty"},
      {"not json", kPath, "application/json", "{not json", 400,
       "couldn't decode the AdmissionReview"},
      {"array", kPath, "application/json", "[1,2]", 400, "expected an object, got array"},
      {"wrong kind", kPath, "application/json", R"({"kind":"Pod","apiVersion":"v1"})", 400,
       "expected kind AdmissionReview, got \\\"Pod\\\""},
      {"wrong apiVersion", kPath, "application/json",
       R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v2","request":{}})", 400,
       "unsupported AdmissionReview apiVersion"},
      {"no request", kPath, "application/json", R"({"kind":"AdmissionReview"})", 400,
       "AdmissionReview has no request"},
      {"uid not a string", kPath, "application/json", R"({"request":{"uid":5}})", 400,
       "request.uid"},
      {"object not an object", kPath, "application/json", R"({"request":{"uid":"x","object":"s"}})",
       400, "request.object: expected object, got string"},
      {"wrong content type", kPath, "text/plain", Review(), 415,
       "contentType=text/plain, expected application/json"},
      {"no content type", kPath, "", Review(), 415, "contentType=, expected application/json"},
      {"unknown path", "/validate-nothing", "application/json", Review(), 404,
       "no webhook is registered for path \\\"/validate-nothing\\\""},
      {"too large", kPath, "application/json", std::string(kMaxRequestBytes + 1, ' '), 413,
       "request entity is too large; limit is 7340032 bytes"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      HttpReply r = f.mux.Serve(c.path, c.content_type, c.body);
      CHECK(r.status == c.status);
      INFO(r.body);
      CHECK(r.body.find(c.message_part) != std::string::npos);
      auto doc = json::Parse(r.body);
      REQUIRE(doc.ok());
      CHECK(doc->Find("kind")->AsString() == "AdmissionReview");
      CHECK(doc->Find("apiVersion")->AsString() == "admission.k8s.io/v1");
      const json::Value* resp = doc->Find("response");
      REQUIRE(resp != nullptr);
      CHECK_FALSE(resp->Find("allowed")->AsBool());
      CHECK(resp->Find("status")->Find("code")->AsInt() == c.status);
    }
  }
}

TEST_CASE("content type parameters and case are accepted") {
  Fixture f;
  CHECK(f.mux.Serve(kPath, "application/json; charset=utf-8", Review()).status == 200);
  CHECK(f.mux.Serve(kPath, "Application/JSON", Review()).status == 200);
}

TEST_CASE("a throwing handler answers 500 in an AdmissionReview and counts a panic") {
  Fixture f;
  f.behaviour = [](const AdmissionRequest&) -> AdmissionResponse {
    throw std::runtime_error("nil map");
  };
  HttpReply r = f.mux.Serve(kPath, "application/json", Review("u-6"));
  CHECK(r.status == 200);
  CHECK(r.body ==
        R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"u-6",)"
        R"("allowed":false,"status":{"metadata":{},"message":"panic: nil map [recovered]",)"
        R"("code":500}}})");
  CHECK(f.MetricsContain("controller_runtime_webhook_panics_total 1"));
  CHECK(f.MetricsContain(
      std::string("trainer_webhook_denials_total{reason=\"InternalError\",webhook=\"") + kPath +
      "\"} 1"));
  // Still serving.
  f.behaviour = [](const AdmissionRequest&) { return AdmissionResponse::Allowed(); };
  CHECK(f.mux.Serve(kPath, "application/json", Review()).body.find("\"allowed\":true") !=
        std::string::npos);
}

TEST_CASE("metrics: latency observed, in-flight back to zero, initialized codes") {
  Fixture f;
  for (int i = 0; i < 3; ++i) {
    REQUIRE(f.mux.Serve(kPath, "application/json", Review()).status == 200);
  }
  REQUIRE(f.mux.Serve(kPath, "text/plain", Review()).status == 415);
  const std::string w = std::string("webhook=\"") + kPath + "\"";
  CHECK(f.MetricsContain("controller_runtime_webhook_latency_seconds_count{" + w + "} 4"));
  CHECK(f.MetricsContain("controller_runtime_webhook_requests_in_flight{" + w + "} 0"));
  CHECK(f.MetricsContain("controller_runtime_webhook_requests_total{code=\"200\"," + w + "} 3"));
  CHECK(f.MetricsContain("controller_runtime_webhook_requests_total{code=\"415\"," + w + "} 1"));
  CHECK(f.MetricsContain("controller_runtime_webhook_requests_total{code=\"500\"," + w + "} 0"));
  CHECK(f.MetricsContain("controller_runtime_webhook_panics_total 0"));
}

TEST_CASE("over TLS: admission, 413 before reading the body, 404, keep-alive") {
  http::testing::TestCa ca = http::testing::TestCa::Create();
  http::testing::SecretDir dir;
  dir.Write(ca.Issue("webhook"));
  std::string ca_path = dir.WriteCa(ca.cert_pem());
  http::CertWatcher certs({.cert_dir = dir.path()});
  REQUIRE(certs.Load().ok());
  Fixture f;
  http::Server server(f.mux.ServerOptions("127.0.0.1:0", &certs));
  f.mux.Mount(server);
  REQUIRE(server.Start().ok());

  httplib::SSLClient cli("127.0.0.1", server.port());
  cli.set_ca_cert_path(ca_path.c_str());
  cli.enable_server_certificate_verification(true);
  cli.set_keep_alive(true);
  for (int i = 0; i < 20; ++i) {
    auto r = cli.Post(kPath, Review("tls-" + std::to_string(i)), "application/json");
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->body.find("\"uid\":\"tls-" + std::to_string(i) + "\"") != std::string::npos);
  }
  auto big = cli.Post(kPath, std::string(8 * 1024 * 1024, ' '), "application/json");
  REQUIRE(big);
  CHECK(big->status == 413);
  CHECK(big->get_header_value("Content-Type") == "application/json");
  CHECK(big->body.find("request entity is too large; limit is 7340032 bytes") != std::string::npos);
  CHECK(f.MetricsContain(
      std::string("controller_runtime_webhook_requests_total{code=\"413\",webhook=\"") + kPath +
      "\"} 1"));

  httplib::SSLClient cli2("127.0.0.1", server.port());
  cli2.set_ca_cert_path(ca_path.c_str());
  cli2.enable_server_certificate_verification(true);
  auto missing = cli2.Post("/mutate-nothing", Review(), "application/json");
  REQUIRE(missing);
  CHECK(missing->status == 404);
  CHECK(missing->body.find("\"kind\":\"AdmissionReview\"") != std::string::npos);
  auto wrong = cli2.Post(kPath, Review(), "application/yaml");
  REQUIRE(wrong);
  CHECK(wrong->status == 415);
  server.Stop();
}

}  // namespace
}  // namespace trainer::webhook
