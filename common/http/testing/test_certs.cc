// Test CA, leaf certificates and Secret-volume-like directories (see test_certs.h).
#include "common/http/testing/test_certs.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>

namespace trainer::http::testing {
namespace {

EVP_PKEY* NewKey() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  if (key == nullptr) {
    throw std::runtime_error("EVP_EC_gen failed");
  }
  return key;
}

std::string ToPem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

std::string ToPem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

void AddExt(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// Builds a certificate for `key` named `cn`, signed by (issuer, issuer_key), or self-signed.
X509* MakeCert(const std::string& cn, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key, bool ca,
               int days) {
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof(serial));
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert));
  BN_free(bn);
  long secs = static_cast<long>(days) * 86400;
  if (days >= 0) {
    X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), secs);
  } else {
    X509_gmtime_adj(X509_getm_notBefore(cert), secs - 86400);
    X509_gmtime_adj(X509_getm_notAfter(cert), secs);
  }
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert;
  X509_set_issuer_name(cert, X509_get_subject_name(signer));
  if (ca) {
    AddExt(cert, signer, NID_basic_constraints, "critical,CA:TRUE");
    AddExt(cert, signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    AddExt(cert, signer, NID_basic_constraints, "critical,CA:FALSE");
    AddExt(cert, signer, NID_key_usage, "critical,digitalSignature");
    AddExt(cert, signer, NID_ext_key_usage, "serverAuth");
    AddExt(cert, signer, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1,IP:::1");
  }
  X509_sign(cert, issuer_key != nullptr ? issuer_key : key, EVP_sha256());
  return cert;
}

X509* ParseCert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return cert;
}

EVP_PKEY* ParseKey(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return key;
}

}  // namespace

TestCa TestCa::Create(const std::string& name) {
  EVP_PKEY* key = NewKey();
  X509* cert = MakeCert(name, key, nullptr, nullptr, /*ca=*/true, 30);
  TestCa ca;
  ca.pair_ = {ToPem(cert), ToPem(key), name};
  X509_free(cert);
  EVP_PKEY_free(key);
  return ca;
}

CertPair TestCa::Issue(const std::string& common_name, int days) const {
  X509* ca_cert = ParseCert(pair_.cert_pem);
  EVP_PKEY* ca_key = ParseKey(pair_.key_pem);
  EVP_PKEY* key = NewKey();
  X509* cert = MakeCert(common_name, key, ca_cert, ca_key, /*ca=*/false, days);
  CertPair out{ToPem(cert), ToPem(key), common_name};
  X509_free(cert);
  EVP_PKEY_free(key);
  X509_free(ca_cert);
  EVP_PKEY_free(ca_key);
  return out;
}

void SecretDir::Write(const CertPair& pair) { WriteRaw(pair.cert_pem, pair.key_pem); }

void SecretDir::WriteRaw(const std::string& cert, const std::string& key) {
  namespace fs = std::filesystem;
  const fs::path& root = dir_.path;
  const std::string version = "..v" + std::to_string(++version_);
  dir_.Write(version + "/tls.crt", cert);
  dir_.Write(version + "/tls.key", key);
  // The kubelet's AtomicWriter: point a temporary symlink at the new dir, rename it over
  // `..data`, and keep tls.crt -> ..data/tls.crt links stable.
  fs::create_directory_symlink(version, root / "..data_tmp");
  fs::rename(root / "..data_tmp", root / "..data");
  for (const char* name : {"tls.crt", "tls.key"}) {
    if (!fs::is_symlink(root / name)) {
      fs::create_symlink(fs::path("..data") / name, root / name);
    }
  }
}

std::string SecretDir::WriteCa(const std::string& ca_pem) { return dir_.Write("ca.crt", ca_pem); }

}  // namespace trainer::http::testing

#if defined(__SANITIZE_THREAD__)
// Http::Server::Stop() finds idle accepted sockets through /proc/self/fd and dup()s each
// candidate while worker threads may be closing it; it acts only through the verified duplicate
// (see ShutdownReads in common/http/server.cc), so ThreadSanitizer's descriptor race report on
// that scan is benign. Test binaries that run servers link this library.
extern "C" const char* __tsan_default_suppressions() { return "race:ShutdownReads\n"; }
#endif
