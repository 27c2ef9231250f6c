// Tests of common/kube/api_error.h: Status bodies -> typed trainer::Status.
#include "common/kube/api_error.h"

#include <catch2/catch.hpp>

namespace trainer::kube {
namespace {

TEST_CASE("status bodies map to typed errors with the message verbatim", "[kube][api_error]") {
  struct Case {
    const char* name;
    int http;
    const char* body;
    StatusCode want;
  };
  const Case cases[] = {
      {"not found", 404,
       R"j({"kind":"Status","apiVersion":"v1","status":"Failure","message":"configmaps \"x\" not found","reason":"NotFound","details":{"name":"x","kind":"configmaps"},"code":404})j",
       StatusCode::kNotFound},
      {"already exists", 409,
       R"j({"kind":"Status","status":"Failure","message":"configmaps \"x\" already exists","reason":"AlreadyExists","code":409})j",
       StatusCode::kAlreadyExists},
      {"conflict", 409,
       R"j({"kind":"Status","status":"Failure","message":"Operation cannot be fulfilled on configmaps \"x\": the object has been modified","reason":"Conflict","code":409})j",
       StatusCode::kConflict},
      {"gone", 410,
       R"j({"kind":"Status","status":"Failure","message":"too old resource version: 1 (2)","reason":"Expired","code":410})j",
       StatusCode::kGone},
      {"forbidden", 403,
       R"j({"kind":"Status","status":"Failure","message":"configmaps is forbidden: User \"u\" cannot list","reason":"Forbidden","code":403})j",
       StatusCode::kForbidden},
      {"no reason uses http code", 503, R"j({"kind":"Status","message":"unavailable"})j",
       StatusCode::kUnavailable},
      {"bad request", 400,
       R"j({"kind":"Status","message":"bad","reason":"BadRequest","code":400})j",
       StatusCode::kInvalidArgument},
      {"unauthorized", 401,
       R"j({"kind":"Status","message":"Unauthorized","reason":"Unauthorized"})j",
       StatusCode::kUnauthorized},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      Status s = StatusFromResponse(c.http, c.body);
      CHECK(s.code() == c.want);
      CHECK(s.http_code() == c.http);
    }
  }
}

TEST_CASE("invalid keeps the apiserver message with its causes", "[kube][api_error]") {
  const char* body = R"j({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
    "message":"TrainJob.trainer.kubeflow.org \"x\" is invalid: spec.trainer.numNodes: Invalid value: -1: spec.trainer.numNodes in body should be greater than or equal to 1",
    "reason":"Invalid","details":{"name":"x","group":"trainer.kubeflow.org","kind":"TrainJob",
    "causes":[{"reason":"FieldValueInvalid","message":"Invalid value: -1: should be greater than or equal to 1","field":"spec.trainer.numNodes"}]},"code":422})j";
  ApiError e = ParseApiError(422, body);
  REQUIRE(e.causes.size() == 1);
  CHECK(e.causes[0].type == "FieldValueInvalid");
  CHECK(e.causes[0].field == "spec.trainer.numNodes");
  CHECK(e.kind == "TrainJob");
  Status s = e.ToStatus();
  CHECK(s.code() == StatusCode::kInvalid);
  CHECK(s.message() ==
        "TrainJob.trainer.kubeflow.org \"x\" is invalid: spec.trainer.numNodes: Invalid value: -1: "
        "spec.trainer.numNodes in body should be greater than or equal to 1");
}

TEST_CASE("too many requests carries retry-after from the header or the details",
          "[kube][api_error]") {
  const char* body =
      R"j({"kind":"Status","message":"rate limited","reason":"TooManyRequests","details":{"retryAfterSeconds":3},"code":429})j";
  Status from_details = StatusFromResponse(429, body);
  CHECK(from_details.code() == StatusCode::kTooManyRequests);
  REQUIRE(from_details.retry_after_seconds().has_value());
  CHECK(*from_details.retry_after_seconds() == 3.0);
  Status from_header = StatusFromResponse(429, body, 7.0);
  CHECK(*from_header.retry_after_seconds() == 7.0);
  CHECK(ParseRetryAfter(" 12\r\n") == 12.0);
  CHECK(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT") == 1.0);
  CHECK_FALSE(ParseRetryAfter("").has_value());
}

TEST_CASE("a non-Status body still yields an error naming the code", "[kube][api_error]") {
  Status s = StatusFromResponse(502, "<html>bad gateway</html>");
  CHECK(s.code() == StatusCode::kUnavailable);
  CHECK(s.message() == "the server responded with HTTP 502: <html>bad gateway</html>");
}

TEST_CASE("watch error events become a Status", "[kube][api_error]") {
  auto obj = json::Parse(
      R"j({"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 5 (10)","reason":"Expired","code":410})j");
  REQUIRE(obj.ok());
  Status s = StatusFromStatusObject(*obj);
  CHECK(s.code() == StatusCode::kGone);
  CHECK(s.http_code() == 410);
  CHECK(s.message() == "too old resource version: 5 (10)");
}

}  // namespace
}  // namespace trainer::kube
