// X.509 with OpenSSL 3 for the webhook's certificates: issue a self-signed CA and a serving
// certificate it signs, check either against a point in time, and take PEM bundles apart.
//
// The shapes follow upstream's rotator (open-policy-agent/cert-controller pkg/rotator,
// CreateCACert / CreateCertPEM / ValidCert), so a Secret we write stays usable by upstream's
// manager and the other way round:
//  - keys are RSA 2048, written as PKCS#1 PEM ("RSA PRIVATE KEY"; upstream parses ca.key with
//    x509.ParsePKCS1PrivateKey);
//  - the CA has Subject O=<organization>, CN=<name> and the DNS name <name> (upstream's
//    ValidCert checks the CA against its own name), key usages digitalSignature,
//    keyEncipherment, keyCertSign, basicConstraints CA:TRUE;
//  - a serving certificate has CN = the first DNS name, all names as DNS SANs, key usages
//    digitalSignature, keyEncipherment, extended key usage serverAuth;
//  - both start one hour in the past (clock skew between replicas and the apiserver).
// Unlike upstream, serial numbers are random (upstream writes 0 and 1) and a serving
// certificate never outlives its CA.
//
//   ASSIGN_OR_RETURN(certs::KeyPair ca, certs::IssueCA({.name = "kubeflow-trainer-ca",
//       .organization = "kubeflow-trainer", .not_before = now, .not_after = now + 10y}));
//   ASSIGN_OR_RETURN(certs::KeyPair tls, certs::IssueServing(ca, {.dns_names = {...}, ...}));
//   Status s = certs::VerifyServing(ca.cert_pem, tls, {"trainer-webhook.ns.svc"}, now + 90d);
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "common/status/status.h"

namespace trainer::certs {

using Time = std::chrono::system_clock::time_point;

// A certificate and its private key, both PEM.
struct KeyPair {
  std::string cert_pem;
  std::string key_pem;
  bool operator==(const KeyPair&) const = default;
};

struct CASpec {
  std::string name;
  std::string organization;
  Time not_before;  // backdated by an hour when issued
  Time not_after;
};

struct ServingSpec {
  std::vector<std::string> dns_names;  // the first is also the CN; at least one
  Time not_before;                     // backdated by an hour when issued
  Time not_after;                      // capped at the CA's notAfter
};

// A fresh RSA 2048 key and a self-signed CA certificate.
StatusOr<KeyPair> IssueCA(const CASpec& spec);
// A fresh RSA 2048 key and a serving certificate signed by `ca`.
StatusOr<KeyPair> IssueServing(const KeyPair& ca, const ServingSpec& spec);

// What the rotator needs to know about one certificate.
struct CertInfo {
  std::string fingerprint;  // "sha256:" + hex of the DER encoding
  std::string subject;      // one-line form, "/O=kubeflow-trainer/CN=kubeflow-trainer-ca"
  Time not_before;
  Time not_after;
  bool is_ca = false;
};
// The first certificate of `pem`.
StatusOr<CertInfo> Inspect(std::string_view pem);
// Inspect(pem)->fingerprint, or "" when it does not parse.
std::string Fingerprint(std::string_view pem);

// OK when `ca` is a self-signed CA certificate whose key is `ca.key_pem` and that is valid at
// `at`; otherwise the reason.
Status VerifyCA(const KeyPair& ca, Time at);
// OK when `serving` chains to `ca_pem`, is valid at `at` for server authentication, carries
// every name of `dns_names`, and its key matches; otherwise the reason.
Status VerifyServing(std::string_view ca_pem, const KeyPair& serving,
                     const std::vector<std::string>& dns_names, Time at);

// The CERTIFICATE blocks of a PEM bundle, each normalised (as PEM_write_bio_X509 writes it);
// text around or between blocks is dropped. An unparsable block is an error.
StatusOr<std::vector<std::string>> SplitBundle(std::string_view pem);
// The blocks concatenated: the bytes a caBundle carries.
std::string JoinBundle(const std::vector<std::string>& certs);
// "sha256:" + hex of JoinBundle(certs): names one bundle in annotations and logs.
std::string BundleFingerprint(const std::vector<std::string>& certs);

}  // namespace trainer::certs
