// X.509 issuing and checking with OpenSSL 3 (see x509.h).
#include "certs/x509.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <memory>

#include "common/kube/meta.h"

namespace trainer::certs {
namespace {

constexpr int kRSABits = 2048;
constexpr std::chrono::hours kBackdate{1};

struct Free {
  void operator()(X509* p) const { X509_free(p); }
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
  void operator()(X509_STORE* p) const { X509_STORE_free(p); }
  void operator()(X509_STORE_CTX* p) const { X509_STORE_CTX_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
using X509Ptr = std::unique_ptr<X509, Free>;
using KeyPtr = std::unique_ptr<EVP_PKEY, Free>;
using BioPtr = std::unique_ptr<BIO, Free>;

// `what`, then the OpenSSL error queue (emptied).
std::string OpenSSLError(std::string_view what) {
  std::string out(what);
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    out += ": ";
    out += buf;
  }
  return out;
}

BioPtr ReadBio(std::string_view pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(len));
}

StatusOr<X509Ptr> ParseCert(std::string_view pem, std::string_view what) {
  ERR_clear_error();
  BioPtr bio = ReadBio(pem);
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (cert == nullptr) {
    return InvalidArgumentError(OpenSSLError(std::string("parsing ") + std::string(what)));
  }
  return cert;
}

StatusOr<KeyPtr> ParseKey(std::string_view pem, std::string_view what) {
  ERR_clear_error();
  BioPtr bio = ReadBio(pem);
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (key == nullptr) {
    return InvalidArgumentError(OpenSSLError(std::string("parsing ") + std::string(what)));
  }
  return key;
}

std::string CertPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  return BioText(bio.get());
}

StatusOr<std::string> KeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  // "Traditional" is PKCS#1 for RSA: what Go's x509.MarshalPKCS1PrivateKey writes.
  if (PEM_write_bio_PrivateKey_traditional(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) !=
      1) {
    return InternalError(OpenSSLError("encoding the private key"));
  }
  return BioText(bio.get());
}

Time FromAsn1(const ASN1_TIME* t) {
  struct tm tm = {};
  if (ASN1_TIME_to_tm(t, &tm) != 1) {
    return Time{};
  }
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

time_t ToTimeT(Time t) { return std::chrono::system_clock::to_time_t(t); }

// A positive random 128-bit serial number (RFC 5280 allows up to 20 octets).
Status SetRandomSerial(X509* cert) {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
    return InternalError(OpenSSLError("drawing a serial number"));
  }
  bytes[0] &= 0x7f;
  bytes[0] |= 0x01;  // never zero, never negative
  std::unique_ptr<BIGNUM, Free> bn(BN_bin2bn(bytes, sizeof(bytes), nullptr));
  if (bn == nullptr || BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert)) == nullptr) {
    return InternalError(OpenSSLError("setting the serial number"));
  }
  return OkStatus();
}

Status AddExtension(X509* cert, X509V3_CTX* ctx, int nid, const std::string& value) {
  std::unique_ptr<X509_EXTENSION, Free> ext(X509V3_EXT_nconf_nid(nullptr, ctx, nid, value.c_str()));
  if (ext == nullptr || X509_add_ext(cert, ext.get(), -1) != 1) {
    return InternalError(
        OpenSSLError("adding extension " + std::string(OBJ_nid2sn(nid)) + "=" + value));
  }
  return OkStatus();
}

// A certificate with a fresh key, subject, validity and serial; extensions and the signature
// are the caller's.
struct Draft {
  X509Ptr cert;
  KeyPtr key;
};
StatusOr<Draft> NewDraft(const std::vector<std::pair<std::string, std::string>>& subject,
                         Time not_before, Time not_after) {
  Draft d;
  d.key.reset(EVP_RSA_gen(kRSABits));
  d.cert.reset(X509_new());
  if (d.key == nullptr || d.cert == nullptr) {
    return InternalError(OpenSSLError("generating an RSA key"));
  }
  X509* c = d.cert.get();
  X509_set_version(c, X509_VERSION_3);
  RETURN_IF_ERROR(SetRandomSerial(c));
  if (ASN1_TIME_set(X509_getm_notBefore(c), ToTimeT(not_before - kBackdate)) == nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(c), ToTimeT(not_after)) == nullptr) {
    return InternalError(OpenSSLError("setting the validity"));
  }
  X509_NAME* name = X509_get_subject_name(c);
  for (const auto& [field, value] : subject) {
    if (X509_NAME_add_entry_by_txt(name, field.c_str(), MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1,
                                   0) != 1) {
      return InvalidArgumentError(OpenSSLError("subject " + field + "=" + value));
    }
  }
  X509_set_pubkey(c, d.key.get());
  return d;
}

StatusOr<KeyPair> Finish(Draft& d, EVP_PKEY* signer) {
  if (X509_sign(d.cert.get(), signer, EVP_sha256()) == 0) {
    return InternalError(OpenSSLError("signing the certificate"));
  }
  KeyPair out;
  out.cert_pem = CertPem(d.cert.get());
  ASSIGN_OR_RETURN(out.key_pem, KeyPem(d.key.get()));
  return out;
}

std::string Hex(const unsigned char* bytes, unsigned int n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (unsigned int i = 0; i < n; ++i) {
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 0xf]);
  }
  return out;
}

std::string SubjectLine(X509* cert) {
  char buf[512];
  X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof(buf));
  return buf;
}

Status MatchKey(X509* cert, EVP_PKEY* key, std::string_view what) {
  ERR_clear_error();
  if (X509_check_private_key(cert, key) != 1) {
    ERR_clear_error();
    return InvalidArgumentError(std::string(what) + ": the private key does not match");
  }
  return OkStatus();
}

Status CheckTime(X509* cert, Time at, std::string_view what) {
  time_t t = ToTimeT(at);
  if (X509_cmp_time(X509_get0_notBefore(cert), &t) > 0) {
    return FailedPreconditionError(std::string(what) + " is not valid yet at " +
                                   kube::FormatTime(at));
  }
  if (X509_cmp_time(X509_get0_notAfter(cert), &t) < 0) {
    return FailedPreconditionError(std::string(what) + " has expired at " + kube::FormatTime(at) +
                                   " (notAfter " +
                                   kube::FormatTime(FromAsn1(X509_get0_notAfter(cert))) + ")");
  }
  return OkStatus();
}

}  // namespace

StatusOr<KeyPair> IssueCA(const CASpec& spec) {
  ASSIGN_OR_RETURN(Draft d, NewDraft({{"O", spec.organization}, {"CN", spec.name}}, spec.not_before,
                                     spec.not_after));
  X509* c = d.cert.get();
  X509_set_issuer_name(c, X509_get_subject_name(c));
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, c, c, nullptr, nullptr, 0);
  RETURN_IF_ERROR(AddExtension(c, &ctx, NID_basic_constraints, "critical,CA:TRUE"));
  RETURN_IF_ERROR(AddExtension(c, &ctx, NID_key_usage,
                               "critical,digitalSignature,keyEncipherment,keyCertSign"));
  RETURN_IF_ERROR(AddExtension(c, &ctx, NID_subject_key_identifier, "hash"));
  RETURN_IF_ERROR(AddExtension(c, &ctx, NID_subject_alt_name, "DNS:" + spec.name));
  return Finish(d, d.key.get());
}

StatusOr<KeyPair> IssueServing(const KeyPair& ca, const ServingSpec& spec) {
  if (spec.dns_names.empty()) {
    return InvalidArgumentError("a serving certificate needs at least one DNS name");
  }
  ASSIGN_OR_RETURN(X509Ptr ca_cert, ParseCert(ca.cert_pem, "the CA certificate"));
  ASSIGN_OR_RETURN(KeyPtr ca_key, ParseKey(ca.key_pem, "the CA key"));
  Time not_after = std::min(spec.not_after, FromAsn1(X509_get0_notAfter(ca_cert.get())));
  ASSIGN_OR_RETURN(Draft d, NewDraft({{"CN", spec.dns_names.front()}}, spec.not_before, not_after));
  X509* c = d.cert.get();
  X509_set_issuer_name(c, X509_get_subject_name(ca_cert.get()));
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, ca_cert.get(), c, nullptr, nullptr, 0);
  std::string sans;
  for (const std::string& name : spec.dns_names) {
    sans += (sans.empty() ? "DNS:" : ",DNS:") + name;
  }
  RETURN_IF_ERROR(AddExtension(c, &ctx, NID_basic_constraints, "critical,CA:FALSE"));
  RETURN_IF_ERROR(
      AddExtension(c, &ctx, NID_key_usage, "critical,digitalSignature,keyEncipherment"));
  RETURN_IF_ERROR(AddExtension(c, &ctx, NID_ext_key_usage, "serverAuth"));
  RETURN_IF_ERROR(AddExtension(c, &ctx, NID_subject_key_identifier, "hash"));
  RETURN_IF_ERROR(AddExtension(c, &ctx, NID_authority_key_identifier, "keyid:always"));
  RETURN_IF_ERROR(AddExtension(c, &ctx, NID_subject_alt_name, sans));
  return Finish(d, ca_key.get());
}

StatusOr<CertInfo> Inspect(std::string_view pem) {
  ASSIGN_OR_RETURN(X509Ptr cert, ParseCert(pem, "certificate"));
  CertInfo info;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  X509_digest(cert.get(), EVP_sha256(), md, &n);
  info.fingerprint = "sha256:" + Hex(md, n);
  info.subject = SubjectLine(cert.get());
  info.not_before = FromAsn1(X509_get0_notBefore(cert.get()));
  info.not_after = FromAsn1(X509_get0_notAfter(cert.get()));
  info.is_ca = X509_check_ca(cert.get()) == 1;
  return info;
}

std::string Fingerprint(std::string_view pem) {
  StatusOr<CertInfo> info = Inspect(pem);
  return info.ok() ? info->fingerprint : std::string();
}

Status VerifyCA(const KeyPair& ca, Time at) {
  ASSIGN_OR_RETURN(X509Ptr cert, ParseCert(ca.cert_pem, "the CA certificate"));
  ASSIGN_OR_RETURN(KeyPtr key, ParseKey(ca.key_pem, "the CA key"));
  RETURN_IF_ERROR(MatchKey(cert.get(), key.get(), "the CA"));
  if (X509_check_ca(cert.get()) != 1) {
    return InvalidArgumentError("the CA certificate is not a CA (basicConstraints CA:TRUE)");
  }
  if (X509_NAME_cmp(X509_get_subject_name(cert.get()), X509_get_issuer_name(cert.get())) != 0 ||
      X509_verify(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return InvalidArgumentError("the CA certificate is not self-signed");
  }
  return CheckTime(cert.get(), at, "the CA certificate");
}

Status VerifyServing(std::string_view ca_pem, const KeyPair& serving,
                     const std::vector<std::string>& dns_names, Time at) {
  ASSIGN_OR_RETURN(X509Ptr ca, ParseCert(ca_pem, "the CA certificate"));
  ASSIGN_OR_RETURN(X509Ptr leaf, ParseCert(serving.cert_pem, "the serving certificate"));
  ASSIGN_OR_RETURN(KeyPtr key, ParseKey(serving.key_pem, "the serving key"));
  RETURN_IF_ERROR(MatchKey(leaf.get(), key.get(), "the serving certificate"));
  std::unique_ptr<X509_STORE, Free> store(X509_STORE_new());
  std::unique_ptr<X509_STORE_CTX, Free> ctx(X509_STORE_CTX_new());
  if (store == nullptr || ctx == nullptr || X509_STORE_add_cert(store.get(), ca.get()) != 1 ||
      X509_STORE_CTX_init(ctx.get(), store.get(), leaf.get(), nullptr) != 1) {
    return InternalError(OpenSSLError("setting up verification"));
  }
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
  X509_VERIFY_PARAM_set_time(param, ToTimeT(at));
  X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_SERVER);
  if (X509_verify_cert(ctx.get()) != 1) {
    int err = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    return FailedPreconditionError("the serving certificate does not verify against the CA at " +
                                   kube::FormatTime(at) + ": " +
                                   X509_verify_cert_error_string(err));
  }
  for (const std::string& name : dns_names) {
    if (X509_check_host(leaf.get(), name.data(), name.size(), X509_CHECK_FLAG_NEVER_CHECK_SUBJECT,
                        nullptr) != 1) {
      return FailedPreconditionError("the serving certificate is not for " + name);
    }
  }
  return OkStatus();
}

StatusOr<std::vector<std::string>> SplitBundle(std::string_view pem) {
  std::vector<std::string> out;
  ERR_clear_error();
  BioPtr bio = ReadBio(pem);
  while (true) {
    X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (cert == nullptr) {
      unsigned long e = ERR_peek_last_error();
      if (ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE) {
        ERR_clear_error();
        return out;
      }
      return InvalidArgumentError(
          OpenSSLError("parsing certificate " + std::to_string(out.size() + 1) + " of the bundle"));
    }
    out.push_back(CertPem(cert.get()));
  }
}

std::string JoinBundle(const std::vector<std::string>& certs) {
  std::string out;
  for (const std::string& c : certs) {
    out += c;
  }
  return out;
}

std::string BundleFingerprint(const std::vector<std::string>& certs) {
  std::string joined = JoinBundle(certs);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(joined.data(), joined.size(), md, &n, EVP_sha256(), nullptr);
  return "sha256:" + Hex(md, n);
}

}  // namespace trainer::certs
