// JSON Web Tokens as the Kubernetes apiserver issues them for service accounts: JWS compact
// serialization (RFC 7515) signed with RS256/384/512, PS256/384/512 or ES256/384/512 (RFC 7518),
// verified against the issuer's JSON Web Key Set (RFC 7517) with OpenSSL. The checks are those of
// github.com/coreos/go-oidc/v3's IDTokenVerifier, which upstream's status server uses:
//   - the signing algorithm is one the issuer advertises (and one we implement); "none" and the
//     HMAC algorithms never are, so a public key cannot be used as a shared secret;
//   - `iss` equals the issuer; `aud` (a string or a list) contains the audience;
//   - `exp` is present and not in the past; `nbf`, when present, is at most 5 minutes ahead;
//   - the signature verifies with a key of the set: the key with the token's `kid`, or any key
//     when the token has none.
// Parsing does no verification; Verify* do it in full. Nothing here does I/O.
//
//   ASSIGN_OR_RETURN(jwt::KeySet keys, jwt::KeySet::FromJwks(jwks_json));
//   ASSIGN_OR_RETURN(jwt::Token token, jwt::Parse(raw));
//   if (keys.Find(token.kid) == nullptr) { /* refresh the key set, then retry */ }
//   RETURN_IF_ERROR(jwt::Verify(token, keys, {.issuer = iss, .audience = aud, .now = now,
//                                             .algorithms = {"RS256"}}));
#pragma once

#include <openssl/evp.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/json/json.h"
#include "common/status/status.h"

namespace trainer::jwt {

// The algorithms this library verifies.
const std::vector<std::string>& SupportedAlgorithms();

// One public key of a JWKS. Immutable.
class PublicKey {
 public:
  // From a JWK object: kty RSA (n, e) or EC (crv P-256/P-384/P-521, x, y). Keys whose `use` is
  // not "sig" are an error, as are malformed ones.
  static StatusOr<std::shared_ptr<const PublicKey>> FromJwk(const json::Value& jwk);
  ~PublicKey();
  PublicKey(const PublicKey&) = delete;
  PublicKey& operator=(const PublicKey&) = delete;

  const std::string& kid() const { return kid_; }
  // Whether this key can verify `alg` (its type and curve fit, and its own `alg`, if any, is it).
  bool Accepts(std::string_view alg) const;
  EVP_PKEY* pkey() const { return pkey_; }

 private:
  PublicKey() = default;
  std::string kid_;
  std::string kty_;  // "RSA" | "EC"
  std::string crv_;  // EC only
  std::string alg_;  // the JWK's own alg, optional
  EVP_PKEY* pkey_ = nullptr;
};

class KeySet {
 public:
  KeySet() = default;
  // From a JWKS document ({"keys": [...]}). Keys this library cannot use (other types, curves,
  // encryption keys) are skipped; a document that is not a JWKS is an error.
  static StatusOr<KeySet> FromJwks(const json::Value& jwks);

  // Keys that may have signed a token with key id `kid`: those with that kid, or all when the
  // token names none.
  std::vector<const PublicKey*> Candidates(std::string_view kid) const;
  bool Has(std::string_view kid) const;
  size_t size() const { return keys_.size(); }

 private:
  std::vector<std::shared_ptr<const PublicKey>> keys_;
};

// A token split and decoded, not verified.
struct Token {
  json::Value header;
  json::Value claims;
  std::string alg;
  std::string kid;
  std::string signing_input;  // "<header>.<payload>" as received
  std::string signature;      // raw bytes
};

// Splits a compact JWS and decodes its header and claims (JSON objects). Errors say which part
// is malformed.
StatusOr<Token> Parse(std::string_view compact);

struct Expectations {
  std::string issuer;
  std::string audience;
  std::chrono::system_clock::time_point now;
  // The algorithms the issuer signs with (its discovery document's
  // id_token_signing_alg_values_supported; go-oidc assumes RS256 when it lists none).
  std::vector<std::string> algorithms = {"RS256"};
  // How far ahead `nbf` may be (clock skew; go-oidc's 5 minutes).
  std::chrono::seconds not_before_leeway{300};
};

// Everything above: algorithm, claims, then the signature with `keys`. kUnauthenticated-style
// errors are kForbidden with the reason ("token is expired", "no key for kid \"x\"", ...).
Status Verify(const Token& token, const KeySet& keys, const Expectations& want);

// The signature alone, with one key.
Status VerifySignature(const Token& token, const PublicKey& key);

}  // namespace trainer::jwt
