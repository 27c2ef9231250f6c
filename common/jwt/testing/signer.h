// Test-only: a token issuer in the shape of the kube-apiserver's service-account signer. It
// holds key pairs, publishes them as a JWKS and signs JWTs with any header and claims, so tests
// can produce good tokens and every kind of bad one. Failures throw std::runtime_error.
//
//   jwt::testing::Signer signer;
//   std::string kid = signer.AddKey(jwt::testing::KeyType::kP256);
//   json::Value jwks = signer.Jwks();
//   std::string token = signer.Sign(kid, "ES256", claims);
#pragma once

#include <openssl/evp.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/json/json.h"

namespace trainer::jwt::testing {

enum class KeyType { kP256, kP384, kRsa2048 };

class Signer {
 public:
  Signer() = default;
  ~Signer();
  Signer(const Signer&) = delete;
  Signer& operator=(const Signer&) = delete;

  // A fresh key pair; returns its kid ("key-1", "key-2", ...).
  std::string AddKey(KeyType type);
  void RemoveKey(const std::string& kid);
  // {"keys": [...]}: the public halves, as /openid/v1/jwks serves them.
  json::Value Jwks() const;

  // A compact JWS of `claims` with header {alg, kid (omitted when empty), typ: JWT}, signed by
  // key `key` with `alg` (RS*/PS*/ES*, or "none" for an empty signature).
  std::string Sign(const std::string& key, std::string_view alg, const json::Value& claims,
                   std::string_view kid_in_header = "\x01") const;
  // Base64url without padding.
  static std::string B64(std::string_view raw);

 private:
  struct Key {
    KeyType type;
    EVP_PKEY* pkey;
  };
  std::map<std::string, Key> keys_;
  int next_ = 1;
};

// The claims the apiserver puts in a TokenRequest token of ServiceAccount ns/sa:
// iss, sub, aud: [audience], exp/iat/nbf around `now`, kubernetes.io {namespace, serviceaccount}.
json::Value ServiceAccountClaims(std::string_view issuer, std::string_view audience,
                                 std::string_view ns, std::string_view sa, int64_t now_unix,
                                 int64_t lifetime_seconds = 3600);

}  // namespace trainer::jwt::testing
