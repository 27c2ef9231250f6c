// certs/x509.h: what IssueCA and IssueServing produce (upstream's shapes), and what VerifyCA and
// VerifyServing refuse, each with its reason.
#include "certs/x509.h"

#include <openssl/pem.h>

#include <catch2/catch.hpp>

namespace trainer::certs {
namespace {

using namespace std::chrono_literals;

const Time kNow = std::chrono::system_clock::from_time_t(1767225600);  // 2026-01-01T00:00:00Z
const std::vector<std::string> kNames = {"trainer-webhook.kubeflow-system.svc",
                                         "trainer-webhook.kubeflow-system.svc.cluster.local"};

KeyPair CA(Time now = kNow, std::chrono::hours validity = 24h * 3650) {
  return IssueCA({.name = "kubeflow-trainer-ca",
                  .organization = "kubeflow-trainer",
                  .not_before = now,
                  .not_after = now + validity})
      .value();
}

KeyPair Serving(const KeyPair& ca, std::chrono::hours validity = 24h * 365) {
  return IssueServing(ca, {.dns_names = kNames, .not_before = kNow, .not_after = kNow + validity})
      .value();
}

TEST_CASE("IssueCA: a self-signed RSA CA named as upstream's, backdated one hour", "[x509]") {
  KeyPair ca = CA();
  CHECK(ca.key_pem.rfind("-----BEGIN RSA PRIVATE KEY-----", 0) == 0);  // PKCS#1, as upstream
  CertInfo info = Inspect(ca.cert_pem).value();
  CHECK(info.is_ca);
  CHECK(info.subject == "/O=kubeflow-trainer/CN=kubeflow-trainer-ca");
  CHECK(info.not_before == kNow - 1h);
  CHECK(info.not_after == kNow + 24h * 3650);
  CHECK(info.fingerprint.rfind("sha256:", 0) == 0);
  CHECK(info.fingerprint.size() == 7 + 64);
  CHECK(VerifyCA(ca, kNow).ok());
}

TEST_CASE("VerifyCA says why a CA is unusable", "[x509]") {
  KeyPair ca = CA();
  KeyPair other = CA();
  CHECK(VerifyCA(ca, kNow + 24h * 3651).message().find("has expired at 2035-12-") !=
        std::string::npos);
  CHECK(VerifyCA(ca, kNow - 2h).message().find("is not valid yet") != std::string::npos);
  CHECK(VerifyCA({ca.cert_pem, other.key_pem}, kNow).message() ==
        "the CA: the private key does not match");
  CHECK(VerifyCA({Serving(ca).cert_pem, Serving(ca).key_pem}, kNow).code() ==
        StatusCode::kInvalidArgument);
  CHECK(VerifyCA({"", ""}, kNow).message().rfind("parsing the CA certificate", 0) == 0);
}

TEST_CASE("IssueServing: the Service's names, serverAuth, signed by the CA", "[x509]") {
  KeyPair ca = CA();
  KeyPair tls = Serving(ca);
  CertInfo info = Inspect(tls.cert_pem).value();
  CHECK_FALSE(info.is_ca);
  CHECK(info.subject == "/CN=trainer-webhook.kubeflow-system.svc");
  CHECK(info.not_after == kNow + 24h * 365);
  CHECK(VerifyServing(ca.cert_pem, tls, kNames, kNow).ok());
  CHECK(VerifyServing(ca.cert_pem, tls, {"trainer-webhook.kubeflow-system.svc"}, kNow).ok());
}

TEST_CASE("IssueServing never outlives its CA", "[x509]") {
  KeyPair ca = CA(kNow, 24h * 30);
  CertInfo info = Inspect(Serving(ca).cert_pem).value();
  CHECK(info.not_after == kNow + 24h * 30);
}

TEST_CASE("VerifyServing says why a serving certificate is unusable", "[x509]") {
  KeyPair ca = CA();
  KeyPair other_ca = CA();
  KeyPair tls = Serving(ca);
  CHECK(VerifyServing(other_ca.cert_pem, tls, kNames, kNow).message().find("does not verify") !=
        std::string::npos);
  CHECK(VerifyServing(ca.cert_pem, tls, kNames, kNow + 24h * 366).message().find("expired") !=
        std::string::npos);
  CHECK(VerifyServing(ca.cert_pem, tls, {"trainer-webhook.other.svc"}, kNow).message() ==
        "the serving certificate is not for trainer-webhook.other.svc");
  CHECK(VerifyServing(ca.cert_pem, {tls.cert_pem, Serving(ca).key_pem}, kNames, kNow).message() ==
        "the serving certificate: the private key does not match");
  // The CA itself is no serving certificate (no serverAuth, no names).
  CHECK_FALSE(VerifyServing(ca.cert_pem, ca, kNames, kNow).ok());
}

// PEM_write_bio_PrivateKey writes PKCS#8 ("PRIVATE KEY"), as `openssl req -newkey` does.
std::string ToPKCS8(const std::string& pem) {
  BIO* in = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(in, nullptr, nullptr, nullptr);
  BIO* out = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(out, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long len = BIO_get_mem_data(out, &data);
  std::string text(data, static_cast<size_t>(len));
  BIO_free(out);
  EVP_PKEY_free(key);
  BIO_free(in);
  return text;
}

TEST_CASE("PKCS#8 keys (what the openssl CLI writes) are read too", "[x509]") {
  // Secrets of trainer-cpp's former cert-init.sh hold PKCS#8 keys: reading one must not force a
  // new CA.
  KeyPair ca = CA();
  KeyPair tls = Serving(ca);
  KeyPair ca8{ca.cert_pem, ToPKCS8(ca.key_pem)};
  REQUIRE(ca8.key_pem.rfind("-----BEGIN PRIVATE KEY-----", 0) == 0);
  CHECK(VerifyCA(ca8, kNow).ok());
  CHECK(VerifyServing(ca.cert_pem, {tls.cert_pem, ToPKCS8(tls.key_pem)}, kNames, kNow).ok());
  CHECK(VerifyServing(ca.cert_pem, Serving(ca8), kNames, kNow).ok());
  CHECK(IssueServing({ca.cert_pem, "not a key"}, {.dns_names = kNames})
            .status()
            .message()
            .rfind("parsing the CA key", 0) == 0);
}

TEST_CASE("SplitBundle takes a bundle apart; JoinBundle puts it back", "[x509]") {
  KeyPair a = CA();
  KeyPair b = CA();
  std::vector<std::string> split =
      SplitBundle("# comment\n" + a.cert_pem + "\n\n" + b.cert_pem + "trailing").value();
  REQUIRE(split.size() == 2);
  CHECK(split[0] == a.cert_pem);
  CHECK(split[1] == b.cert_pem);
  CHECK(JoinBundle(split) == a.cert_pem + b.cert_pem);
  CHECK(SplitBundle("").value().empty());
  CHECK(BundleFingerprint({a.cert_pem, b.cert_pem}) != BundleFingerprint({b.cert_pem, a.cert_pem}));
  std::string broken = a.cert_pem;
  broken.replace(broken.find('\n') + 5, 10, "**********");
  CHECK(SplitBundle(broken).status().message().rfind("parsing certificate 1 of the bundle", 0) ==
        0);
}

TEST_CASE("Fingerprint is empty for what does not parse", "[x509]") {
  CHECK(Fingerprint("junk").empty());
  KeyPair a = CA();
  CHECK(Fingerprint(a.cert_pem) == Inspect(a.cert_pem)->fingerprint);
}

}  // namespace
}  // namespace trainer::certs
