// JWS parsing and verification on OpenSSL 3 (jwt.h).
#include "common/jwt/jwt.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>

#include <algorithm>
#include <optional>

#include "common/encoding/base64.h"

namespace trainer::jwt {
namespace {

struct BnFree {
  void operator()(BIGNUM* b) const { BN_free(b); }
};
struct BldFree {
  void operator()(OSSL_PARAM_BLD* b) const { OSSL_PARAM_BLD_free(b); }
};
struct ParamFree {
  void operator()(OSSL_PARAM* p) const { OSSL_PARAM_free(p); }
};
struct CtxFree {
  void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
struct SigFree {
  void operator()(ECDSA_SIG* s) const { ECDSA_SIG_free(s); }
};
using BnPtr = std::unique_ptr<BIGNUM, BnFree>;

struct Curve {
  std::string_view jwk_name;
  const char* openssl_name;
  size_t bytes;          // coordinate size
  std::string_view alg;  // the one ES* algorithm of this curve
};
constexpr Curve kCurves[] = {
    {"P-256", "prime256v1", 32, "ES256"},
    {"P-384", "secp384r1", 48, "ES384"},
    {"P-521", "secp521r1", 66, "ES512"},
};

const Curve* CurveByName(std::string_view name) {
  for (const Curve& c : kCurves) {
    if (c.jwk_name == name) return &c;
  }
  return nullptr;
}

const Curve* CurveOfAlgorithm(std::string_view alg) {
  for (const Curve& c : kCurves) {
    if (c.alg == alg) return &c;
  }
  return nullptr;
}

// The digest of RS*/PS*/ES* (the last three characters), or null.
const EVP_MD* Digest(std::string_view alg) {
  if (alg.size() != 5) return nullptr;
  std::string_view bits = alg.substr(2);
  if (bits == "256") return EVP_sha256();
  if (bits == "384") return EVP_sha384();
  if (bits == "512") return EVP_sha512();
  return nullptr;
}

std::string Str(const json::Value& obj, std::string_view key) {
  const json::Value* v = obj.Find(key);
  return v != nullptr && v->IsString() ? v->AsString() : std::string();
}

StatusOr<std::string> Segment(const json::Value& jwk, std::string_view key) {
  const json::Value* v = jwk.Find(key);
  if (v == nullptr || !v->IsString() || v->AsString().empty()) {
    return InvalidArgumentError("jwk: missing \"" + std::string(key) + "\"");
  }
  StatusOr<std::string> raw = encoding::Base64RawURLDecode(v->AsString());
  if (!raw.ok()) {
    return InvalidArgumentError("jwk: \"" + std::string(key) + "\" is not base64url");
  }
  return raw;
}

StatusOr<EVP_PKEY*> FromParams(const char* type, OSSL_PARAM_BLD* bld) {
  std::unique_ptr<OSSL_PARAM, ParamFree> params(OSSL_PARAM_BLD_to_param(bld));
  std::unique_ptr<EVP_PKEY_CTX, CtxFree> ctx(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
  EVP_PKEY* pkey = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &pkey, EVP_PKEY_PUBLIC_KEY, params.get()) != 1) {
    ERR_clear_error();
    return InvalidArgumentError(std::string("jwk: not a valid ") + type + " public key");
  }
  return pkey;
}

StatusOr<EVP_PKEY*> RsaKey(const json::Value& jwk) {
  ASSIGN_OR_RETURN(std::string n, Segment(jwk, "n"));
  ASSIGN_OR_RETURN(std::string e, Segment(jwk, "e"));
  BnPtr bn_n(BN_bin2bn(reinterpret_cast<const unsigned char*>(n.data()), static_cast<int>(n.size()),
                       nullptr));
  BnPtr bn_e(BN_bin2bn(reinterpret_cast<const unsigned char*>(e.data()), static_cast<int>(e.size()),
                       nullptr));
  std::unique_ptr<OSSL_PARAM_BLD, BldFree> bld(OSSL_PARAM_BLD_new());
  if (!bn_n || !bn_e || !bld ||
      !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) ||
      !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get())) {
    return InternalError("jwk: out of memory");
  }
  return FromParams("RSA", bld.get());
}

StatusOr<EVP_PKEY*> EcKey(const json::Value& jwk, const Curve& curve) {
  ASSIGN_OR_RETURN(std::string x, Segment(jwk, "x"));
  ASSIGN_OR_RETURN(std::string y, Segment(jwk, "y"));
  if (x.size() != curve.bytes || y.size() != curve.bytes) {
    return InvalidArgumentError("jwk: EC coordinates of the wrong size for " +
                                std::string(curve.jwk_name));
  }
  std::string point = "\x04" + x + y;  // uncompressed
  std::unique_ptr<OSSL_PARAM_BLD, BldFree> bld(OSSL_PARAM_BLD_new());
  if (!bld ||
      !OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, curve.openssl_name,
                                       0) ||
      !OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                        point.size())) {
    return InternalError("jwk: out of memory");
  }
  // EVP_PKEY_fromdata decodes the point with EC_POINT_oct2point, which rejects points off the
  // curve.
  return FromParams("EC", bld.get());
}

// ES* signatures are r || s, each padded to the curve size (RFC 7518 3.4); OpenSSL wants DER.
StatusOr<std::string> EcdsaDer(std::string_view raw, size_t bytes) {
  if (raw.size() != 2 * bytes) {
    return ForbiddenError("signature has the wrong length");
  }
  std::unique_ptr<ECDSA_SIG, SigFree> sig(ECDSA_SIG_new());
  BIGNUM* r = BN_bin2bn(reinterpret_cast<const unsigned char*>(raw.data()), static_cast<int>(bytes),
                        nullptr);
  BIGNUM* s = BN_bin2bn(reinterpret_cast<const unsigned char*>(raw.data() + bytes),
                        static_cast<int>(bytes), nullptr);
  if (!sig || r == nullptr || s == nullptr || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
    BN_free(r);
    BN_free(s);
    return InternalError("out of memory");
  }
  int len = i2d_ECDSA_SIG(sig.get(), nullptr);
  if (len <= 0) return InternalError("encoding an ECDSA signature");
  std::string der(static_cast<size_t>(len), '\0');
  unsigned char* p = reinterpret_cast<unsigned char*>(der.data());
  i2d_ECDSA_SIG(sig.get(), &p);
  return der;
}

// A NumericDate (RFC 7519: seconds, integer or not), as go-oidc's jsonTime reads it.
StatusOr<std::optional<double>> NumericDate(const json::Value& claims, std::string_view key) {
  const json::Value* v = claims.Find(key);
  if (v == nullptr || v->IsNull()) return std::optional<double>();
  if (!v->IsNumber()) return ForbiddenError("claim \"" + std::string(key) + "\" is not a number");
  return std::optional<double>(v->AsDouble());
}

double Seconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

}  // namespace

const std::vector<std::string>& SupportedAlgorithms() {
  static const std::vector<std::string> algs = {"RS256", "RS384", "RS512", "PS256", "PS384",
                                                "PS512", "ES256", "ES384", "ES512"};
  return algs;
}

PublicKey::~PublicKey() { EVP_PKEY_free(pkey_); }

StatusOr<std::shared_ptr<const PublicKey>> PublicKey::FromJwk(const json::Value& jwk) {
  if (!jwk.IsObject()) return InvalidArgumentError("jwk: not an object");
  std::shared_ptr<PublicKey> key(new PublicKey());
  key->kid_ = Str(jwk, "kid");
  key->kty_ = Str(jwk, "kty");
  key->alg_ = Str(jwk, "alg");
  if (std::string use = Str(jwk, "use"); !use.empty() && use != "sig") {
    return InvalidArgumentError("jwk: use \"" + use + "\" is not \"sig\"");
  }
  StatusOr<EVP_PKEY*> pkey = InvalidArgumentError("jwk: unsupported kty \"" + key->kty_ + "\"");
  if (key->kty_ == "RSA") {
    pkey = RsaKey(jwk);
  } else if (key->kty_ == "EC") {
    key->crv_ = Str(jwk, "crv");
    const Curve* curve = CurveByName(key->crv_);
    if (curve == nullptr)
      return InvalidArgumentError("jwk: unsupported curve \"" + key->crv_ + "\"");
    pkey = EcKey(jwk, *curve);
  }
  if (!pkey.ok()) return pkey.status();
  key->pkey_ = *pkey;
  return std::shared_ptr<const PublicKey>(std::move(key));
}

bool PublicKey::Accepts(std::string_view alg) const {
  if (!alg_.empty() && alg_ != alg) return false;
  if (kty_ == "RSA") return (alg.substr(0, 2) == "RS" || alg.substr(0, 2) == "PS") && Digest(alg);
  const Curve* curve = CurveByName(crv_);
  return kty_ == "EC" && curve != nullptr && curve->alg == alg;
}

StatusOr<KeySet> KeySet::FromJwks(const json::Value& jwks) {
  const json::Value* keys = jwks.Find("keys");
  if (keys == nullptr || !keys->IsArray()) {
    return InvalidArgumentError("jwks: no \"keys\" list");
  }
  KeySet set;
  for (const json::Value& jwk : keys->elements()) {
    StatusOr<std::shared_ptr<const PublicKey>> key = PublicKey::FromJwk(jwk);
    if (key.ok()) set.keys_.push_back(std::move(key).value());
  }
  return set;
}

std::vector<const PublicKey*> KeySet::Candidates(std::string_view kid) const {
  std::vector<const PublicKey*> out;
  for (const auto& k : keys_) {
    if (kid.empty() || k->kid() == kid) out.push_back(k.get());
  }
  return out;
}

bool KeySet::Has(std::string_view kid) const { return !Candidates(kid).empty(); }

StatusOr<Token> Parse(std::string_view compact) {
  const size_t dot1 = compact.find('.');
  const size_t dot2 = dot1 == std::string_view::npos ? dot1 : compact.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || compact.find('.', dot2 + 1) != std::string_view::npos) {
    return ForbiddenError("malformed jwt: expected 3 parts");
  }
  Token t;
  StatusOr<std::string> header = encoding::Base64RawURLDecode(compact.substr(0, dot1));
  StatusOr<std::string> payload =
      encoding::Base64RawURLDecode(compact.substr(dot1 + 1, dot2 - dot1 - 1));
  StatusOr<std::string> signature = encoding::Base64RawURLDecode(compact.substr(dot2 + 1));
  if (!header.ok() || !payload.ok() || !signature.ok()) {
    return ForbiddenError("malformed jwt: a part is not base64url");
  }
  StatusOr<json::Value> h = json::Parse(*header);
  StatusOr<json::Value> c = json::Parse(*payload);
  if (!h.ok() || !h->IsObject())
    return ForbiddenError("malformed jwt: header is not a JSON object");
  if (!c.ok() || !c->IsObject())
    return ForbiddenError("malformed jwt: claims are not a JSON object");
  t.header = std::move(h).value();
  t.claims = std::move(c).value();
  t.alg = Str(t.header, "alg");
  t.kid = Str(t.header, "kid");
  t.signing_input = std::string(compact.substr(0, dot2));
  t.signature = std::move(signature).value();
  return t;
}

Status VerifySignature(const Token& token, const PublicKey& key) {
  if (!key.Accepts(token.alg)) return ForbiddenError("key does not fit algorithm " + token.alg);
  const EVP_MD* md = Digest(token.alg);
  std::string sig = token.signature;
  if (const Curve* curve = CurveOfAlgorithm(token.alg)) {
    ASSIGN_OR_RETURN(sig, EcdsaDer(token.signature, curve->bytes));
  }
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  EVP_PKEY_CTX* pctx = nullptr;
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), &pctx, md, nullptr, key.pkey()) != 1) {
    ERR_clear_error();
    return InternalError("initializing signature verification");
  }
  if (token.alg[0] == 'P' && (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) != 1 ||
                              EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) != 1 ||
                              EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, md) != 1)) {
    ERR_clear_error();
    return InternalError("setting up RSA-PSS");
  }
  int ok =
      EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                       reinterpret_cast<const unsigned char*>(token.signing_input.data()),
                       token.signing_input.size());
  ERR_clear_error();
  return ok == 1 ? OkStatus() : ForbiddenError("signature does not verify");
}

Status Verify(const Token& token, const KeySet& keys, const Expectations& want) {
  const auto& supported = SupportedAlgorithms();
  if (std::find(supported.begin(), supported.end(), token.alg) == supported.end() ||
      std::find(want.algorithms.begin(), want.algorithms.end(), token.alg) ==
          want.algorithms.end()) {
    return ForbiddenError("unexpected signing algorithm \"" + token.alg + "\"");
  }
  if (const json::Value* crit = token.header.Find("crit"); crit != nullptr) {
    return ForbiddenError("unsupported critical header");
  }
  if (Str(token.claims, "iss") != want.issuer) {
    return ForbiddenError("issuer \"" + Str(token.claims, "iss") + "\" is not \"" + want.issuer +
                          "\"");
  }
  const json::Value* aud = token.claims.Find("aud");
  bool audience_ok = false;
  if (aud != nullptr && aud->IsString()) {
    audience_ok = aud->AsString() == want.audience;
  } else if (aud != nullptr && aud->IsArray()) {
    for (const json::Value& a : aud->elements()) {
      if (!a.IsString()) return ForbiddenError("claim \"aud\" is not a list of strings");
      audience_ok = audience_ok || a.AsString() == want.audience;
    }
  }
  if (!audience_ok) return ForbiddenError("audience is not \"" + want.audience + "\"");
  ASSIGN_OR_RETURN(std::optional<double> exp, NumericDate(token.claims, "exp"));
  ASSIGN_OR_RETURN(std::optional<double> nbf, NumericDate(token.claims, "nbf"));
  const double now = Seconds(want.now);
  // go-oidc: a missing exp is the zero time, so always expired; exp == now is still valid.
  if (!exp || *exp < now) return ForbiddenError("token is expired");
  if (nbf && now + static_cast<double>(want.not_before_leeway.count()) < *nbf) {
    return ForbiddenError("token is not valid yet");
  }
  std::vector<const PublicKey*> candidates = keys.Candidates(token.kid);
  if (candidates.empty()) return ForbiddenError("no key for kid \"" + token.kid + "\"");
  for (const PublicKey* key : candidates) {
    if (VerifySignature(token, *key).ok()) return OkStatus();
  }
  return ForbiddenError("signature does not verify");
}

}  // namespace trainer::jwt
