// Status report authorization (webhook/statusserver/auth.h): upstream's TestExtractRawToken
// cases, the token rules, and pod binding.
#include "webhook/statusserver/auth.h"

#include <catch2/catch.hpp>

#include "tests/unit/webhook/statusserver/fakes.h"

namespace trainer::statusserver {
namespace {

TEST_CASE("TestExtractRawToken", "[statusserver][auth]") {
  const std::pair<const char*, const char*> cases[] = {
      {"Bearer token", "token"},         // bearer token is extracted
      {"bearer token", "token"},         // scheme is matched case-insensitively
      {"Bearer \t token", "token"},      // repeated whitespace is tolerated
      {"  Bearer token  ", "token"},     // surrounding whitespace is tolerated
      {"", ""},                          // empty header yields no token
      {"   ", ""},                       // whitespace-only header yields no token
      {"Bearer", ""},                    // missing credentials yield no token
      {"token", ""},                     // missing scheme yields no token
      {"Basic dXNlcjpwYXNz", ""},        // other authorization schemes yield no token
      {"Bearerx token", ""},             // scheme substring is not accepted
      {"Bearer token another", ""},      // multiple credentials yield no token
      {"BEARER\xC2\xA0token", "token"},  // Go's strings.Fields splits on Unicode spaces too
      {"Bearer\x0btoken\x0c", "token"},
  };
  for (const auto& [header, want] : cases) {
    INFO(header);
    CHECK(BearerToken(header) == want);
  }
}

TEST_CASE("the token must be for this TrainJob and its namespace", "[statusserver][auth]") {
  testing::TokenSource tokens;
  REQUIRE(tokens.issuer.Load().ok());
  ServiceAccountAuthorizer auth(&tokens.issuer, nullptr);
  auto kind = [&](const std::string& header) {
    return auth.Authorize(header, "team-a", "job").kind;
  };
  CHECK(kind("Bearer " + tokens.Token("team-a", "team-a", "job")) == AuthResult::kAllowed);
  // Any service account of the namespace (upstream's contract).
  CHECK(kind("Bearer " + tokens.Token("team-a", "team-a", "job", "other-sa")) ==
        AuthResult::kAllowed);
  CHECK(kind("Bearer " + tokens.Token("team-a", "team-a", "other-job")) == AuthResult::kForbidden);
  CHECK(kind("Bearer " + tokens.Token("team-b", "team-a", "job")) == AuthResult::kForbidden);
  CHECK(kind("Bearer " + tokens.Token("team-a", "team-b", "job")) == AuthResult::kForbidden);
  CHECK(kind("") == AuthResult::kForbidden);
  CHECK(kind("Bearer garbage") == AuthResult::kForbidden);
  json::Value no_ns = tokens.Claims("team-a", "team-a", "job");
  no_ns["kubernetes.io"].Erase("namespace");
  CHECK(kind("Bearer " + tokens.Sign(no_ns)) == AuthResult::kForbidden);
}

TEST_CASE("tokens cannot be checked yet: unavailable, not forbidden", "[statusserver][auth]") {
  testing::TokenSource tokens;
  ServiceAccountAuthorizer auth(&tokens.issuer, nullptr);
  AuthResult r = auth.Authorize("Bearer " + tokens.Token("ns", "ns", "job"), "ns", "job");
  CHECK(r.kind == AuthResult::kUnavailable);
}

TEST_CASE("pod binding: a live pod of this TrainJob", "[statusserver][auth]") {
  testing::TokenSource tokens;
  REQUIRE(tokens.issuer.Load().ok());
  testing::FakePods pods;
  pods.pods["ns/job-node-0-0-abc"] = {"uid-1", "job"};
  pods.pods["ns/other-node-0-0-xyz"] = {"uid-2", "other"};
  ServiceAccountAuthorizer auth(&tokens.issuer, &pods);
  auto bound = [&](std::string_view pod, std::string_view uid) {
    json::Value c = tokens.Claims("ns", "ns", "job");
    json::Value p = json::Value::Object();
    p.Set("name", json::Value(pod));
    p.Set("uid", json::Value(uid));
    c["kubernetes.io"].Set("pod", std::move(p));
    return auth.Authorize("Bearer " + tokens.Sign(c), "ns", "job");
  };
  CHECK(bound("job-node-0-0-abc", "uid-1").kind == AuthResult::kAllowed);
  CHECK(bound("job-node-0-0-abc", "uid-old").kind == AuthResult::kForbidden);  // replaced pod
  CHECK(bound("gone", "uid-9").kind == AuthResult::kForbidden);
  CHECK(bound("other-node-0-0-xyz", "uid-2").reason ==
        "pod other-node-0-0-xyz does not belong to TrainJob job");
  // A token without a pod claim (kubectl create token without --bound-object-kind Pod).
  CHECK(auth.Authorize("Bearer " + tokens.Token("ns", "ns", "job"), "ns", "job").reason ==
        "token is not bound to a pod");
  pods.synced = false;
  CHECK(bound("job-node-0-0-abc", "uid-1").kind == AuthResult::kUnavailable);
}

}  // namespace
}  // namespace trainer::statusserver
