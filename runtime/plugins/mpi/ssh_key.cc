// ECDSA P-521 SSH keys with OpenSSL 3: EVP_PKEY generation, SEC1 PEM ("traditional" format,
// which is what x509.MarshalECPrivateKey writes) and the SSH wire format of the public key
// (RFC 5656 §3.1: string "ecdsa-sha2-nistp521", string "nistp521", string Q).
#include "runtime/plugins/mpi/ssh_key.h"

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "common/encoding/base64.h"

namespace trainer::plugins::mpi {

namespace {

constexpr char kKeyType[] = "ecdsa-sha2-nistp521";
constexpr char kCurveIdentifier[] = "nistp521";
constexpr char kOpenSSLGroup[] = "secp521r1";

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using BioPtr = std::unique_ptr<BIO, BioFree>;

// The OpenSSL error queue as text, emptied.
std::string OpenSSLError(std::string_view what) {
  std::string out(what);
  unsigned long e;
  while ((e = ERR_get_error()) != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    out += ": ";
    out += buf;
  }
  return out;
}

// An SSH "string": uint32 big-endian length, then the bytes.
void PutString(std::string& out, std::string_view s) {
  uint32_t n = static_cast<uint32_t>(s.size());
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((n >> shift) & 0xff));
  }
  out.append(s);
}

StatusOr<SSHKeyPair> PairOf(EVP_PKEY* pkey) {
  char group[64] = {0};
  size_t group_len = 0;
  if (EVP_PKEY_get_base_id(pkey) != EVP_PKEY_EC ||
      EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group),
                                     &group_len) != 1 ||
      std::string_view(group, group_len) != kOpenSSLGroup) {
    ERR_clear_error();
    return InvalidArgumentError("ssh key: want an ECDSA P-521 private key");
  }
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PrivateKey_traditional(bio.get(), pkey, nullptr, nullptr, 0, nullptr,
                                                   nullptr) != 1) {
    return InternalError(OpenSSLError("ssh key: encoding the private key"));
  }
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  SSHKeyPair out;
  out.private_key_pem.assign(data, static_cast<size_t>(len));

  std::vector<unsigned char> point(256);
  size_t point_len = 0;
  if (EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, point.data(),
                                      point.size(), &point_len) != 1) {
    return InternalError(OpenSSLError("ssh key: reading the public point"));
  }
  std::string blob;
  PutString(blob, kKeyType);
  PutString(blob, kCurveIdentifier);
  PutString(blob, std::string_view(reinterpret_cast<const char*>(point.data()), point_len));
  out.authorized_key = std::string(kKeyType) + " " + encoding::Base64Encode(blob) + "\n";
  return out;
}

}  // namespace

StatusOr<SSHKeyPair> GenerateSSHKeyPair() {
  PkeyPtr pkey(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-521"));
  if (!pkey) {
    return InternalError(OpenSSLError("ssh key: generating an ECDSA P-521 key"));
  }
  return PairOf(pkey.get());
}

StatusOr<SSHKeyPair> SSHKeyPairFromPrivateKeyPEM(std::string_view pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  PkeyPtr pkey(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!pkey) {
    ERR_clear_error();
    return InvalidArgumentError("ssh key: not a PEM private key");
  }
  return PairOf(pkey.get());
}

StatusOr<SSHKeyGenerator> FixedSSHKeyGenerator(std::string_view pem) {
  ASSIGN_OR_RETURN(SSHKeyPair pair, SSHKeyPairFromPrivateKeyPEM(pem));
  return SSHKeyGenerator([pair]() -> StatusOr<SSHKeyPair> { return pair; });
}

}  // namespace trainer::plugins::mpi
