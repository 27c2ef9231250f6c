// StatusHandler (webhook/statusserver/handler.h): upstream's TestServerErrorResponses and
// TestRecoveryMiddleware cases, and every row of the request table, with real tokens, the real
// authorizer and a recording writer.
#include "webhook/statusserver/handler.h"

#include <catch2/catch.hpp>

#include "tests/unit/webhook/statusserver/fakes.h"

namespace trainer::statusserver {
namespace {

constexpr char kPath[] =
    "/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/trainjobs/test-job/status";
constexpr char kReport[] =
    R"({"trainerStatus":{"progressPercentage":42,"estimatedRemainingSeconds":600,)"
    R"("metrics":[{"name":"loss","value":"0.25"}],"lastUpdatedTime":"2026-01-02T03:04:05.678+01:00",)"
    R"("unknown":true}})";
constexpr char kEcho[] =
    R"({"trainerStatus":{"progressPercentage":42,"estimatedRemainingSeconds":600,)"
    R"("metrics":[{"name":"loss","value":"0.25"}],"lastUpdatedTime":"2026-01-02T02:04:05Z"}})"
    "\n";

struct Fixture {
  testing::TokenSource tokens;
  testing::FakeWriter writer;
  ServiceAccountAuthorizer auth{&tokens.issuer, nullptr};
  metrics::Registry registry;
  StatusHandler handler{{.authorizer = &auth, .writer = &writer, .registry = &registry}};
  std::string bearer;

  Fixture() {
    REQUIRE(tokens.issuer.Load().ok());
    bearer = "Bearer " + tokens.Token("default", "default", "test-job");
  }
  StatusReply Post(std::string_view body, std::string_view path = kPath) {
    return handler.Serve({.method = "POST", .path = path, .authorization = bearer, .body = body});
  }
};

std::string Want(std::string_view message, std::string_view reason, int code) {
  return StatusBody(message, reason, code);
}

TEST_CASE("TestServerErrorResponses", "[statusserver][handler]") {
  Fixture f;
  SECTION("unauthorized fails with 403 unauthorized") {
    f.bearer = "Bearer " + f.tokens.Token("default", "default", "another-job");
    StatusReply r = f.Post(kReport);
    CHECK(r.status == 403);
    CHECK(
        r.body ==
        R"({"metadata":{},"status":"Failure","message":"Forbidden","reason":"Forbidden","code":403})"
        "\n");
  }
  SECTION("invalid payload fails with 422 unprocessable entity") {
    StatusReply r = f.Post("invalid payload");
    CHECK(r.status == 422);
    CHECK(r.body == Want("Invalid payload", "Invalid", 422));
  }
  SECTION("oversized payload fails with 413 payload too large error") {
    std::string body = R"({"trainerStatus": {"metrics": [)";
    for (int i = 0; i < 40000; ++i) body += R"({"name":"m","value":"0.5"},)";
    body += "]}}";
    StatusReply r = f.Post(body);
    CHECK(r.status == 413);
    CHECK(r.body == Want("Payload too large", "RequestEntityTooLarge", 413));
  }
  CHECK(f.writer.count() == 0);
}

TEST_CASE("the request table", "[statusserver][handler]") {
  Fixture f;
  SECTION("a report is applied and echoed as decoded") {
    StatusReply r = f.Post(kReport);
    CHECK(r.status == 200);
    CHECK(r.body == kEcho);
    REQUIRE(f.writer.calls.size() == 1);
    CHECK(f.writer.calls[0].key == "default/test-job");
    CHECK(*f.writer.calls[0].status.progress_percentage == 42);
  }
  SECTION("no trainerStatus: 200 echo, nothing written") {
    CHECK(f.Post("{}").body == "{}\n");
    CHECK(f.Post(R"({"trainerStatus":null,"x":1})").status == 200);
    CHECK(f.writer.count() == 0);
  }
  SECTION("exactly 64 KiB is accepted; one byte more is not") {
    std::string body = R"({"trainerStatus":null,"pad":")";
    body += std::string(kMaxBodyBytes - body.size() - 2, 'x') + "\"}";
    REQUIRE(body.size() == kMaxBodyBytes);
    CHECK(f.Post(body).status == 200);
    CHECK(f.Post(body + " ").status == 413);
  }
  SECTION("the apiserver refuses the value: 422 with its message") {
    f.writer.next = InvalidError(
        R"(TrainJob.trainer.kubeflow.org "test-job" is invalid: status.trainerStatus.progressPercentage: Invalid value: 150: status.trainerStatus.progressPercentage in body should be less than or equal to 100)");
    StatusReply r = f.Post(
        R"({"trainerStatus":{"progressPercentage":150,"lastUpdatedTime":"2026-01-01T00:00:00Z"}})");
    CHECK(r.status == 422);
    CHECK(r.body == Want(f.writer.next.message(), "Invalid", 422));
  }
  SECTION("a BadRequest from the apiserver is a 422 as well") {
    f.writer.next = InvalidArgumentError("bad request");
    f.writer.next.set_http_code(400);
    CHECK(f.Post(kReport).status == 422);
  }
  SECTION("unknown TrainJob: 404 Train job not found") {
    f.writer.next = NotFoundError(R"(trainjobs.trainer.kubeflow.org "test-job" not found)");
    StatusReply r = f.Post(kReport);
    CHECK(r.status == 404);
    CHECK(r.body == Want("Train job not found", "NotFound", 404));
  }
  SECTION("any other write error: 500 Internal error") {
    f.writer.next = UnavailableError("connection refused");
    StatusReply r = f.Post(kReport);
    CHECK(r.status == 500);
    CHECK(r.body == Want("Internal error", "InternalError", 500));
  }
  SECTION("other paths and methods: 404 Not found") {
    for (const char* path :
         {"/", "/healthz",
          "/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/trainjobs/test-job",
          "/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/trainjobs/test-job/status/",
          "/apis/trainer.kubeflow.org/v1alpha1/namespaces//trainjobs/test-job/status",
          "/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/trainjobs//status",
          "/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/jobs/test-job/status",
          "/apis/trainer.kubeflow.org/v1/namespaces/default/trainjobs/test-job/status"}) {
      INFO(path);
      StatusReply r = f.Post(kReport, path);
      CHECK(r.status == 404);
      CHECK(r.body == Want("Not found", "NotFound", 404));
    }
    for (const char* method : {"GET", "PUT", "PATCH", "DELETE"}) {
      INFO(method);
      CHECK(f.handler.Serve({.method = method, .path = kPath, .authorization = f.bearer}).status ==
            404);
    }
    CHECK(f.writer.count() == 0);
  }
  SECTION("the token is checked before the body is read") {
    f.bearer = "";
    CHECK(f.Post("invalid payload").status == 403);
  }
  SECTION("issuer not loaded: 500, not 403") {
    testing::TokenSource fresh;
    ServiceAccountAuthorizer auth(&fresh.issuer, nullptr);
    StatusHandler h({.authorizer = &auth, .writer = &f.writer});
    StatusReply r =
        h.Serve({.method = "POST", .path = kPath, .authorization = f.bearer, .body = kReport});
    CHECK(r.status == 500);
    CHECK(r.body == Want("Internal error", "InternalError", 500));
  }
  SECTION("requests are counted by code") {
    f.Post(kReport);
    f.Post("nope");
    std::string text = f.registry.Text();
    CHECK(text.find(R"(trainer_status_server_requests_total{code="200"} 1)") != std::string::npos);
    CHECK(text.find(R"(trainer_status_server_requests_total{code="422"} 1)") != std::string::npos);
    CHECK(text.find("trainer_status_server_request_duration_seconds_count 2") != std::string::npos);
  }
}

class ThrowingAuthorizer final : public Authorizer {
 public:
  AuthResult Authorize(std::string_view, std::string_view, std::string_view) override {
    throw std::runtime_error("test panic");
  }
};

TEST_CASE("TestRecoveryMiddleware", "[statusserver][handler]") {
  ThrowingAuthorizer auth;
  testing::FakeWriter writer;
  StatusHandler h({.authorizer = &auth, .writer = &writer});
  StatusReply r = h.Serve({.method = "POST", .path = kPath, .body = "{}"});
  CHECK(r.status == 500);
  CHECK(r.body == StatusBody("Internal Server Error", "InternalError", 500));
}

TEST_CASE("with coalescing: a valid report may be held, an invalid one never",
          "[statusserver][handler]") {
  Fixture f;
  Coalescer c(&f.writer, {.interval = std::chrono::hours(1)});
  StatusHandler h({.authorizer = &f.auth, .writer = &f.writer, .coalescer = &c});
  auto post = [&](std::string_view body) {
    return h.Serve({.method = "POST", .path = kPath, .authorization = f.bearer, .body = body});
  };
  CHECK(post(kReport).status == 200);  // the first report of the interval is written
  CHECK(f.writer.count() == 1);
  CHECK(post(kReport).body == kEcho);  // held
  CHECK(f.writer.count() == 1);
  CHECK(c.held() == 1);
  // Out of the CRD's range: written now, so the reporter gets the apiserver's 422.
  f.writer.next = InvalidError("progress out of range");
  StatusReply r = post(
      R"({"trainerStatus":{"progressPercentage":150,"lastUpdatedTime":"2026-01-01T00:00:00Z"}})");
  CHECK(r.status == 422);
  CHECK(f.writer.count() == 2);
  f.writer.next = OkStatus();
  c.Stop();  // the held report is written
  CHECK(f.writer.count() == 3);
}

}  // namespace
}  // namespace trainer::statusserver
