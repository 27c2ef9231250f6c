// Fuzz target: the JWT parser and verifier the status server checks bearer tokens with
// (common/jwt). The input is read as a compact token and, when it is JSON, as claims and as a
// JWKS. Properties:
//   - Parse never crashes; a parsed token has object header and claims, its signing input is the
//     input up to the second dot, and alg/kid are the header's strings;
//   - no input verifies against keys made in this process (P-256, P-384, RSA 2048) with every
//     supported algorithm allowed: a token nobody signed with those keys is always refused,
//     whatever its header (alg none, HS256, a made-up kid) or signature bytes;
//   - JSON claims signed with those keys parse back to the same claims, their signature
//     verifies, and the same token with one signature byte changed does not;
//   - KeySet::FromJwks never crashes on any JSON.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/json/json.h"
#include "common/jwt/jwt.h"
#include "common/jwt/testing/signer.h"
#include "tests/fuzz/fuzz_check.h"

namespace trainer::fuzz {
namespace {

struct Keys {
  jwt::testing::Signer signer;
  std::string p256, p384, rsa;
  jwt::KeySet set;
  Keys() {
    p256 = signer.AddKey(jwt::testing::KeyType::kP256);
    p384 = signer.AddKey(jwt::testing::KeyType::kP384);
    rsa = signer.AddKey(jwt::testing::KeyType::kRsa2048);
    StatusOr<jwt::KeySet> s = jwt::KeySet::FromJwks(signer.Jwks());
    FUZZ_CHECK(s.ok() && s->size() == 3, "the test keys do not form a key set");
    set = std::move(s).value();
  }
};

const Keys& TestKeys() {
  static const Keys* keys = new Keys();
  return *keys;
}

jwt::Expectations AnyAlgorithm(const json::Value& claims) {
  jwt::Expectations want;
  // Whatever the token claims, so that only the signature can refuse it.
  const json::Value* iss = claims.Find("iss");
  want.issuer = iss != nullptr && iss->IsString() ? iss->AsString() : "issuer";
  want.audience = "aud";
  want.now = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
  want.algorithms = jwt::SupportedAlgorithms();
  want.algorithms.push_back("none");
  want.algorithms.push_back("HS256");
  return want;
}

void CheckParsed(std::string_view input) {
  StatusOr<jwt::Token> t = jwt::Parse(input);
  if (!t.ok()) return;
  FUZZ_CHECK(t->header.IsObject() && t->claims.IsObject(), "parsed a non-object header/claims");
  const size_t dot2 = input.find('.', input.find('.') + 1);
  FUZZ_CHECK(t->signing_input == input.substr(0, dot2), "signing input is not the first parts");
  const json::Value* alg = t->header.Find("alg");
  FUZZ_CHECK(t->alg == (alg != nullptr && alg->IsString() ? alg->AsString() : ""),
             "alg differs from the header's");
  Status v = jwt::Verify(*t, TestKeys().set, AnyAlgorithm(t->claims));
  FUZZ_CHECK(!v.ok(), "a token no test key signed verified: " + std::string(input));
}

void CheckSigned(const json::Value& claims) {
  const Keys& k = TestKeys();
  for (const auto& [kid, alg] : {std::pair{k.p256, "ES256"}, std::pair{k.rsa, "RS256"}}) {
    const std::string token = k.signer.Sign(kid, alg, claims);
    StatusOr<jwt::Token> t = jwt::Parse(token);
    FUZZ_CHECK(t.ok(), "a signed token does not parse: " + t.status().ToString());
    FUZZ_CHECK(t->claims == claims, "claims changed: " + json::Write(t->claims));
    FUZZ_CHECK(t->kid == kid && t->alg == alg, "header changed");
    const jwt::PublicKey* key = k.set.Candidates(kid).at(0);
    Status ok = jwt::VerifySignature(*t, *key);
    FUZZ_CHECK(ok.ok(), "a good signature was refused: " + ok.ToString());
    t->signature[t->signature.size() / 2] ^= 0x01;
    FUZZ_CHECK(!jwt::VerifySignature(*t, *key).ok(), "a changed signature verified");
  }
}

}  // namespace
}  // namespace trainer::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainer;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  fuzz::CheckParsed(input);
  StatusOr<json::Value> v = json::Parse(input);
  if (v.ok()) {
    jwt::KeySet::FromJwks(*v).status().IgnoreError();
    if (v->IsObject()) fuzz::CheckSigned(*v);
  }
  return 0;
}
