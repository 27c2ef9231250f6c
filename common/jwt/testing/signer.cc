// Test token signer (signer.h).
#include "common/jwt/testing/signer.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/rsa.h>

#include <stdexcept>

#include "common/encoding/base64.h"

namespace trainer::jwt::testing {
namespace {

std::string BnBytes(EVP_PKEY* pkey, const char* name, int pad_to = 0) {
  BIGNUM* bn = nullptr;
  if (EVP_PKEY_get_bn_param(pkey, name, &bn) != 1) throw std::runtime_error("key param");
  int len = pad_to > 0 ? pad_to : BN_num_bytes(bn);
  std::string out(static_cast<size_t>(len), '\0');
  BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), len);
  BN_free(bn);
  return out;
}

const EVP_MD* DigestOf(std::string_view alg) {
  std::string_view bits = alg.substr(2);
  return bits == "256" ? EVP_sha256() : bits == "384" ? EVP_sha384() : EVP_sha512();
}

}  // namespace

Signer::~Signer() {
  for (auto& [kid, k] : keys_) EVP_PKEY_free(k.pkey);
}

std::string Signer::AddKey(KeyType type) {
  EVP_PKEY* pkey =
      type == KeyType::kRsa2048
          ? EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(2048))
          : EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", type == KeyType::kP256 ? "P-256" : "P-384");
  if (pkey == nullptr) throw std::runtime_error("keygen");
  std::string kid = "key-" + std::to_string(next_++);
  keys_[kid] = Key{type, pkey};
  return kid;
}

void Signer::RemoveKey(const std::string& kid) {
  auto it = keys_.find(kid);
  if (it == keys_.end()) return;
  EVP_PKEY_free(it->second.pkey);
  keys_.erase(it);
}

std::string Signer::B64(std::string_view raw) {
  std::string s = encoding::Base64Encode(raw);
  while (!s.empty() && s.back() == '=') s.pop_back();
  for (char& c : s) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return s;
}

json::Value Signer::Jwks() const {
  json::Value keys = json::Value::Array();
  for (const auto& [kid, k] : keys_) {
    json::Value jwk = json::Value::Object();
    jwk.Set("use", "sig");
    jwk.Set("kid", kid);
    if (k.type == KeyType::kRsa2048) {
      jwk.Set("kty", "RSA");
      jwk.Set("alg", "RS256");
      jwk.Set("n", B64(BnBytes(k.pkey, OSSL_PKEY_PARAM_RSA_N)));
      jwk.Set("e", B64(BnBytes(k.pkey, OSSL_PKEY_PARAM_RSA_E)));
    } else {
      const bool p256 = k.type == KeyType::kP256;
      const int size = p256 ? 32 : 48;
      jwk.Set("kty", "EC");
      jwk.Set("crv", p256 ? "P-256" : "P-384");
      jwk.Set("alg", p256 ? "ES256" : "ES384");
      jwk.Set("x", B64(BnBytes(k.pkey, OSSL_PKEY_PARAM_EC_PUB_X, size)));
      jwk.Set("y", B64(BnBytes(k.pkey, OSSL_PKEY_PARAM_EC_PUB_Y, size)));
    }
    keys.PushBack(std::move(jwk));
  }
  json::Value out = json::Value::Object();
  out.Set("keys", std::move(keys));
  return out;
}

std::string Signer::Sign(const std::string& key, std::string_view alg, const json::Value& claims,
                         std::string_view kid_in_header) const {
  json::Value header = json::Value::Object();
  header.Set("alg", json::Value(alg));
  std::string_view kid = kid_in_header == "\x01" ? std::string_view(key) : kid_in_header;
  if (!kid.empty()) header.Set("kid", json::Value(kid));
  header.Set("typ", "JWT");
  std::string input = B64(json::Write(header)) + "." + B64(json::Write(claims));
  if (alg == "none") return input + ".";
  auto it = keys_.find(key);
  if (it == keys_.end()) throw std::runtime_error("no key " + key);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_PKEY_CTX* pctx = nullptr;
  const EVP_MD* md = DigestOf(alg);
  if (EVP_DigestSignInit(ctx, &pctx, md, nullptr, it->second.pkey) != 1) {
    throw std::runtime_error("sign init");
  }
  if (alg[0] == 'P') {
    EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING);
    EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST);
  }
  size_t len = 0;
  EVP_DigestSign(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()),
                 input.size());
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1) {
    throw std::runtime_error("sign");
  }
  EVP_MD_CTX_free(ctx);
  sig.resize(len);
  if (alg[0] == 'E') {  // DER -> r || s
    const size_t size = it->second.type == KeyType::kP256 ? 32 : 48;
    const unsigned char* p = reinterpret_cast<const unsigned char*>(sig.data());
    ECDSA_SIG* es = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(sig.size()));
    std::string raw(2 * size, '\0');
    BN_bn2binpad(ECDSA_SIG_get0_r(es), reinterpret_cast<unsigned char*>(raw.data()),
                 static_cast<int>(size));
    BN_bn2binpad(ECDSA_SIG_get0_s(es), reinterpret_cast<unsigned char*>(raw.data() + size),
                 static_cast<int>(size));
    ECDSA_SIG_free(es);
    sig = raw;
  }
  return input + "." + B64(sig);
}

json::Value ServiceAccountClaims(std::string_view issuer, std::string_view audience,
                                 std::string_view ns, std::string_view sa, int64_t now_unix,
                                 int64_t lifetime_seconds) {
  json::Value c = json::Value::Object();
  json::Value aud = json::Value::Array();
  aud.PushBack(json::Value(audience));
  c.Set("aud", std::move(aud));
  c.Set("exp", json::Value(now_unix + lifetime_seconds));
  c.Set("iat", json::Value(now_unix));
  c.Set("iss", json::Value(issuer));
  c.Set("jti", "0b7c6f2a-test");
  json::Value k8s = json::Value::Object();
  k8s.Set("namespace", json::Value(ns));
  json::Value sa_obj = json::Value::Object();
  sa_obj.Set("name", json::Value(sa));
  sa_obj.Set("uid", "5f0c4c9e-test");
  k8s.Set("serviceaccount", std::move(sa_obj));
  c.Set("kubernetes.io", std::move(k8s));
  c.Set("nbf", json::Value(now_unix));
  c.Set("sub", "system:serviceaccount:" + std::string(ns) + ":" + std::string(sa));
  return c;
}

}  // namespace trainer::jwt::testing
