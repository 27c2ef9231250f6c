// common/jwt: service-account tokens verified as go-oidc's IDTokenVerifier does (jwt.h), with
// tokens from a test signer: the good token for each algorithm the apiserver uses, and each way
// a token can be wrong.
#include "common/jwt/jwt.h"

#include <openssl/hmac.h>

#include <catch2/catch.hpp>

#include "common/jwt/testing/signer.h"

namespace trainer::jwt {
namespace {

using testing::KeyType;
using testing::ServiceAccountClaims;
using testing::Signer;

constexpr char kIssuer[] = "https://kubernetes.default.svc";
constexpr char kAudience[] = "trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status";
constexpr int64_t kNow = 1767225600;  // 2026-01-01T00:00:00Z

Expectations Want(std::vector<std::string> algs = {"ES256", "RS256"}) {
  return {.issuer = kIssuer,
          .audience = kAudience,
          .now = std::chrono::system_clock::time_point(std::chrono::seconds(kNow)),
          .algorithms = std::move(algs)};
}

json::Value Claims() { return ServiceAccountClaims(kIssuer, kAudience, "ns", "sa", kNow); }

Status Check(const std::string& raw, const KeySet& keys, const Expectations& want = Want()) {
  StatusOr<Token> t = Parse(raw);
  if (!t.ok()) return t.status();
  return Verify(*t, keys, want);
}

KeySet Keys(const Signer& s) {
  StatusOr<KeySet> k = KeySet::FromJwks(s.Jwks());
  REQUIRE(k.ok());
  return std::move(k).value();
}

TEST_CASE("a good token verifies, for each algorithm", "[jwt]") {
  Signer s;
  std::string ec = s.AddKey(KeyType::kP256);
  std::string ec384 = s.AddKey(KeyType::kP384);
  std::string rsa = s.AddKey(KeyType::kRsa2048);
  KeySet keys = Keys(s);
  CHECK(keys.size() == 3);
  CHECK(Check(s.Sign(ec, "ES256", Claims()), keys).ok());
  CHECK(Check(s.Sign(rsa, "RS256", Claims()), keys).ok());
  CHECK(Check(s.Sign(ec384, "ES384", Claims()), keys, Want({"ES384"})).ok());
  // The JWKS pins RS256 for the RSA key (as the apiserver's does): PS256 needs a key without alg.
  json::Value jwks = s.Jwks();
  for (json::Value& k : jwks["keys"].elements()) k.Erase("alg");
  KeySet loose = std::move(KeySet::FromJwks(jwks)).value();
  CHECK(Check(s.Sign(rsa, "PS256", Claims()), loose, Want({"PS256"})).ok());
  CHECK(Check(s.Sign(rsa, "RS512", Claims()), loose, Want({"RS512"})).ok());
  CHECK_FALSE(Check(s.Sign(rsa, "PS256", Claims()), keys, Want({"PS256"})).ok());
}

TEST_CASE("wrong signature", "[jwt]") {
  Signer s;
  std::string a = s.AddKey(KeyType::kP256);
  std::string b = s.AddKey(KeyType::kP256);
  KeySet keys = Keys(s);
  // Signed by b, claiming a's kid.
  CHECK(Check(s.Sign(b, "ES256", Claims(), a), keys).message() == "signature does not verify");
  // A changed payload.
  std::string good = s.Sign(a, "ES256", Claims());
  json::Value other = Claims();
  other["kubernetes.io"].Set("namespace", "other");
  std::string forged = s.Sign(a, "ES256", other);
  std::string spliced = good.substr(0, good.find('.') + 1) +
                        forged.substr(forged.find('.') + 1, forged.rfind('.') - forged.find('.')) +
                        good.substr(good.rfind('.') + 1);
  CHECK(Check(spliced, keys).message() == "signature does not verify");
  // A truncated signature.
  CHECK(Check(good.substr(0, good.size() - 4), keys).code() == StatusCode::kForbidden);
}

TEST_CASE("issuer, audience, expiry and not-before", "[jwt]") {
  Signer s;
  std::string k = s.AddKey(KeyType::kP256);
  KeySet keys = Keys(s);
  auto with = [&](auto edit) {
    json::Value c = Claims();
    edit(c);
    return Check(s.Sign(k, "ES256", c), keys);
  };
  CHECK(with([](json::Value& c) { c.Set("iss", "https://evil"); }).message() ==
        "issuer \"https://evil\" is not \"https://kubernetes.default.svc\"");
  CHECK(with([](json::Value& c) { c.Erase("iss"); }).code() == StatusCode::kForbidden);
  CHECK(with([](json::Value& c) { c.Set("aud", json::Value::StringArray({"other"})); }).message() ==
        std::string("audience is not \"") + kAudience + "\"");
  CHECK(with([](json::Value& c) { c.Set("aud", kAudience); }).ok());  // a single string
  CHECK(with([](json::Value& c) {
          c.Set("aud", json::Value::StringArray({"x", kAudience}));
        }).ok());
  CHECK_FALSE(with([](json::Value& c) { c.Erase("aud"); }).ok());
  CHECK(with([](json::Value& c) { c.Set("exp", json::Value(kNow - 1)); }).message() ==
        "token is expired");
  CHECK(with([](json::Value& c) { c.Set("exp", json::Value(kNow)); }).ok());
  CHECK(with([](json::Value& c) { c.Erase("exp"); }).message() == "token is expired");
  CHECK_FALSE(with([](json::Value& c) { c.Set("exp", "tomorrow"); }).ok());
  CHECK(with([](json::Value& c) { c.Set("exp", json::Value(kNow + 0.5)); }).ok());
  CHECK(with([](json::Value& c) { c.Set("nbf", json::Value(kNow + 300)); }).ok());  // skew
  CHECK(with([](json::Value& c) { c.Set("nbf", json::Value(kNow + 301)); }).message() ==
        "token is not valid yet");
}

std::string HmacToken(const std::string& secret) {
  json::Value header = json::Value::Object();
  header.Set("alg", "HS256");
  std::string input = Signer::B64(json::Write(header)) + "." + Signer::B64(json::Write(Claims()));
  unsigned char mac[32];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &len);
  return input + "." + Signer::B64(std::string(reinterpret_cast<char*>(mac), len));
}

TEST_CASE("algorithms: none, HMAC, not advertised, not fitting the key", "[jwt]") {
  Signer s;
  std::string ec = s.AddKey(KeyType::kP256);
  std::string rsa = s.AddKey(KeyType::kRsa2048);
  KeySet keys = Keys(s);
  CHECK(Check(s.Sign(ec, "none", Claims()), keys).message() ==
        "unexpected signing algorithm \"none\"");
  CHECK(Check(s.Sign(ec, "none", Claims()), keys, Want({"none"})).message() ==
        "unexpected signing algorithm \"none\"");
  // The public key as an HMAC secret (the classic algorithm confusion).
  std::string secret = json::Write(s.Jwks());
  CHECK(Check(HmacToken(secret), keys, Want({"HS256", "ES256"})).message() ==
        "unexpected signing algorithm \"HS256\"");
  // The issuer signs with ES256 only.
  CHECK(Check(s.Sign(rsa, "RS256", Claims()), keys, Want({"ES256"})).message() ==
        "unexpected signing algorithm \"RS256\"");
  // ES256 named on an RSA key's kid.
  CHECK(Check(s.Sign(ec, "ES256", Claims(), rsa), keys).message() == "signature does not verify");
}

TEST_CASE("key ids: unknown, absent", "[jwt]") {
  Signer s;
  std::string a = s.AddKey(KeyType::kP256);
  KeySet keys = Keys(s);
  std::string b = s.AddKey(KeyType::kP256);  // rotated in after the set was fetched
  std::string token = s.Sign(b, "ES256", Claims());
  REQUIRE(Parse(token).ok());
  CHECK_FALSE(keys.Has(Parse(token)->kid));
  CHECK(Check(token, keys).message() == "no key for kid \"key-2\"");
  CHECK(Check(token, Keys(s)).ok());  // after a refresh
  // No kid: every key is tried.
  CHECK(Check(s.Sign(a, "ES256", Claims(), ""), keys).ok());
  CHECK(Check(s.Sign(b, "ES256", Claims(), ""), Keys(s)).ok());
}

TEST_CASE("malformed tokens", "[jwt]") {
  for (const char* bad : {"", "a", "a.b", "a.b.c.d", "....", "e30.e30.", "!!.e30.", "e30.!!.",
                          "e30.e30.!!", "W10.e30.", "e30.W10.", "bnVsbA.e30."}) {
    INFO(bad);
    StatusOr<Token> t = Parse(bad);
    if (t.ok()) {
      CHECK_FALSE(Verify(*t, KeySet(), Want()).ok());
    } else {
      CHECK(t.status().code() == StatusCode::kForbidden);
    }
  }
  CHECK(Parse("e30.e30.").ok());  // {} / {} / an empty signature: parses, never verifies
}

TEST_CASE("JWKS: keys that cannot verify are skipped", "[jwt]") {
  Signer s;
  s.AddKey(KeyType::kP256);
  json::Value jwks = s.Jwks();
  json::Value& good = jwks["keys"].at(0);
  json::Value enc = good.Clone();
  enc.Set("use", "enc");
  enc.Set("kid", "enc");
  json::Value off_curve = good.Clone();
  off_curve.Set("kid", "off");
  off_curve.Set("x", Signer::B64(std::string(32, '\x01')));
  json::Value short_x = good.Clone();
  short_x.Set("kid", "short");
  short_x.Set("x", Signer::B64(std::string(31, '\x01')));
  json::Value okp = json::Value::Object();
  okp.Set("kty", "OKP");
  okp.Set("kid", "okp");
  jwks["keys"].PushBack(std::move(enc));
  jwks["keys"].PushBack(std::move(off_curve));
  jwks["keys"].PushBack(std::move(short_x));
  jwks["keys"].PushBack(std::move(okp));
  jwks["keys"].PushBack(json::Value("not an object"));
  StatusOr<KeySet> keys = KeySet::FromJwks(jwks);
  REQUIRE(keys.ok());
  CHECK(keys->size() == 1);
  CHECK(keys->Has("key-1"));
  CHECK_FALSE(keys->Has("off"));
  CHECK_FALSE(KeySet::FromJwks(json::Value::Object()).ok());
  CHECK_FALSE(KeySet::FromJwks(json::Value("x")).ok());
}

}  // namespace
}  // namespace trainer::jwt
