// certs/state.h: the Secret codec. A state written as a merge patch and read back is the same
// state; upstream's Secret reads as a Stable state with no bundle; values that do not decode
// read as absent.
#include "certs/state.h"

#include <catch2/catch.hpp>

#include "common/encoding/base64.h"
#include "common/kube/testing/fake_client.h"

namespace trainer::certs {
namespace {

using namespace std::chrono_literals;

const Time kNow = std::chrono::system_clock::from_time_t(1767225600);  // 2026-01-01T00:00:00Z

KeyPair CA() {
  return IssueCA({.name = "kubeflow-trainer-ca",
                  .organization = "kubeflow-trainer",
                  .not_before = kNow,
                  .not_after = kNow + 24h * 3650})
      .value();
}

json::Value EmptySecret() {
  return json::Parse(R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"cert",
      "namespace":"ns","resourceVersion":"7","annotations":{"keep":"me"}},
      "data":{"other":"eA=="}})")
      .value();
}

TEST_CASE("a state survives EncodeSecretPatch and DecodeSecret", "[state]") {
  KeyPair ca = CA();
  KeyPair next = CA();
  State s;
  s.resource_version = "7";
  s.ca = ca;
  s.serving =
      IssueServing(ca, {.dns_names = {"svc.ns.svc"}, .not_before = kNow, .not_after = kNow + 24h})
          .value();
  s.next_ca = next;
  s.bundle = {ca.cert_pem, next.cert_pem};
  s.phase_since = kNow;
  s.injected_bundle = BundleFingerprint(s.bundle);
  s.injected_at = kNow + 5s;
  s.reports["pod-a"] = {.ca = Fingerprint(ca.cert_pem), .at = kNow + 1s};
  s.reports["pod-b"] = {.ca = Fingerprint(next.cert_pem), .at = kNow + 2s};
  s.rotate = "ca";

  json::Value secret = EmptySecret();
  kube::testing::ApplyMergePatch(secret, EncodeSecretPatch(s));
  State back = DecodeSecret(secret);
  CHECK(back.SameContent(s));
  CHECK(back.resource_version == "7");
  CHECK(PhaseOf(back) == Phase::kTrustNext);
  // Data and annotations that are not ours are kept.
  CHECK(secret["data"]["other"].AsString() == "eA==");
  CHECK(secret["metadata"]["annotations"]["keep"].AsString() == "me");
  CHECK(secret["metadata"]["annotations"][kReplicasAnnotation].AsString() ==
        R"({"pod-a":{"ca":")" + Fingerprint(ca.cert_pem) +
            R"(","at":"2026-01-01T00:00:01Z"},"pod-b":{"ca":")" + Fingerprint(next.cert_pem) +
            R"(","at":"2026-01-01T00:00:02Z"}})");

  SECTION("what the state no longer holds is removed") {
    State stable = back;
    stable.next_ca = {};
    stable.bundle = {ca.cert_pem};
    stable.reports.clear();
    stable.rotate.clear();
    stable.injected_at.reset();
    stable.injected_bundle.clear();
    kube::testing::ApplyMergePatch(secret, EncodeSecretPatch(stable));
    CHECK_FALSE(secret["data"].Has(kNextCACertKey));
    CHECK_FALSE(secret["data"].Has(kNextCAKeyKey));
    CHECK_FALSE(secret["metadata"]["annotations"].Has(kReplicasAnnotation));
    CHECK_FALSE(secret["metadata"]["annotations"].Has(kRotateAnnotation));
    CHECK_FALSE(secret["metadata"]["annotations"].Has(kBundleInjectedAnnotation));
    CHECK(DecodeSecret(secret).SameContent(stable));
    CHECK(PhaseOf(DecodeSecret(secret)) == Phase::kStable);
  }
}

TEST_CASE("the patch carries the resourceVersion read as its precondition", "[state]") {
  State s;
  s.resource_version = "42";
  json::Value patch = EncodeSecretPatch(s);
  CHECK(patch["metadata"]["resourceVersion"].AsString() == "42");
}

TEST_CASE("upstream's Secret reads as Stable with an empty bundle", "[state]") {
  KeyPair ca = CA();
  json::Value secret = EmptySecret();
  secret["data"].Set("ca.crt", json::Value(encoding::Base64Encode(ca.cert_pem)));
  secret["data"].Set("ca.key", json::Value(encoding::Base64Encode(ca.key_pem)));
  State s = DecodeSecret(secret);
  CHECK(s.ca == ca);
  CHECK(s.bundle.empty());
  CHECK(s.reports.empty());
  CHECK_FALSE(s.phase_since.has_value());
  CHECK(PhaseOf(s) == Phase::kStable);
}

TEST_CASE("values that do not decode read as absent", "[state]") {
  json::Value secret = EmptySecret();
  secret["data"].Set("ca.crt", json::Value("*not base64*"));
  secret["data"].Set("ca-bundle.crt", json::Value(encoding::Base64Encode("-----BEGIN "
                                                                         "CERTIFICATE-----\nAAAA\n"
                                                                         "-----END "
                                                                         "CERTIFICATE-----\n")));
  json::Value& a = secret["metadata"]["annotations"];
  a.Set(kPhaseSinceAnnotation, json::Value("yesterday"));
  a.Set(kBundleInjectedAnnotation, json::Value("sha256:abc"));
  a.Set(kReplicasAnnotation, json::Value(R"({"a":{"ca":1},"b":"x","c":{"ca":"f","at":"now"}})"));
  State s = DecodeSecret(secret);
  CHECK(s.ca.cert_pem.empty());
  CHECK(s.bundle.empty());
  CHECK_FALSE(s.phase_since.has_value());
  CHECK_FALSE(s.injected_at.has_value());
  CHECK(s.injected_bundle.empty());
  CHECK(s.reports.empty());
}

}  // namespace
}  // namespace trainer::certs
