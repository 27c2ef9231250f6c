// The webhook certificate Secret as the rotator reads and writes it.
//
// Data keys: upstream's four (ca.crt, ca.key, tls.crt, tls.key: the signing CA and the serving
// pair it signed; what cert-manager and upstream's rotator write too) plus two of ours:
//   ca-bundle.crt        the CAs the webhook configurations trust (their caBundle), oldest first
//   ca-next.crt/.key     a CA that is trusted but does not sign yet (rotation phase TrustNext)
// Annotations (prefix cert.trainer.kubeflow.org/):
//   phase-since          when the current phase began (RFC 3339)
//   bundle-injected      "<bundle fingerprint> <time>": since when both webhook configurations
//                        carry that bundle
//   replicas             {"<replica>": {"ca": "<fingerprint>", "at": "<time>"}}: which CA signed
//                        the certificate each replica serves, refreshed during a rotation
//   rotate               "serving" or "ca": an administrator's request for a renewal now
// docs/design/certificates.md describes the phases. A Secret written by upstream or by an older
// trainer-cpp has no ca-bundle.crt; the rotator then writes its ca.crt as the bundle.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "certs/x509.h"
#include "common/json/json.h"
#include "common/status/status.h"

namespace trainer::certs {

inline constexpr std::string_view kCACertKey = "ca.crt";
inline constexpr std::string_view kCAKeyKey = "ca.key";
inline constexpr std::string_view kTLSCertKey = "tls.crt";
inline constexpr std::string_view kTLSKeyKey = "tls.key";
inline constexpr std::string_view kCABundleKey = "ca-bundle.crt";
inline constexpr std::string_view kNextCACertKey = "ca-next.crt";
inline constexpr std::string_view kNextCAKeyKey = "ca-next.key";

inline constexpr std::string_view kPhaseSinceAnnotation = "cert.trainer.kubeflow.org/phase-since";
inline constexpr std::string_view kBundleInjectedAnnotation =
    "cert.trainer.kubeflow.org/bundle-injected";
inline constexpr std::string_view kReplicasAnnotation = "cert.trainer.kubeflow.org/replicas";
inline constexpr std::string_view kRotateAnnotation = "cert.trainer.kubeflow.org/rotate";
// Values of kRotateAnnotation.
inline constexpr std::string_view kRotateServing = "serving";
inline constexpr std::string_view kRotateCA = "ca";

// One replica's statement: the certificate it serves is signed by CA `ca` (a fingerprint), as
// of `at`.
struct Report {
  std::string ca;
  Time at;
  bool operator==(const Report&) const = default;
};

struct State {
  std::string resource_version;  // of the Secret read; the precondition of the next write
  KeyPair ca;
  KeyPair serving;
  KeyPair next_ca;                  // empty outside TrustNext
  std::vector<std::string> bundle;  // PEM blocks
  std::optional<Time> phase_since;
  std::string injected_bundle;  // fingerprint recorded in bundle-injected
  std::optional<Time> injected_at;
  std::map<std::string, Report> reports;
  std::string rotate;

  // Content equality (resource_version aside): "nothing to write".
  bool SameContent(const State& other) const;
};

// Phases of a CA rotation (docs/design/certificates.md).
enum class Phase {
  kStable,     // bundle = {ca}
  kTrustNext,  // a next CA is in the bundle and waits for the apiserver to trust it
  kSignNext,   // the new CA signs; the old one stays in the bundle until every replica moved
};
Phase PhaseOf(const State& state);
std::string_view PhaseName(Phase phase);

// Reads a Secret object. Values that do not decode (bad base64, a bundle that does not parse,
// malformed annotations) read as absent: the rotator then replaces them, as upstream replaces
// an invalid certificate.
State DecodeSecret(const json::Value& secret);
// A merge patch that makes the Secret hold `state`, with `state.resource_version` as the
// precondition (the apiserver answers 409 Conflict when the Secret changed since it was read).
// Keys and annotations `state` does not hold are removed; other data and annotations are kept.
json::Value EncodeSecretPatch(const State& state);

}  // namespace trainer::certs
