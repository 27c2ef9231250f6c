// Plan: the rotator's decisions as a pure function of what it read. Given the Secret's state,
// what this replica observed (does every webhook configuration carry the state's bundle, which
// CA signed the certificate this replica serves) and the time, it returns the state to write
// (if anything changes), why, and when to plan again. It never reads the cluster or the clock,
// so every phase is unit-tested with a fixed time.
//
// Rules, in order (docs/design/certificates.md has the reasoning):
//  1. No usable CA (missing, not a CA, key mismatch, expired): issue a CA and a serving
//     certificate, the bundle is that CA alone. (A first start, or a Secret beyond repair.)
//  2. The bundle holds the signing CA and, in TrustNext, the next CA.
//  3. Stable, and the CA expires within the lookahead or an administrator asked
//     (rotate=ca): issue the next CA and add it to the bundle -> TrustNext.
//  4. TrustNext, and both configurations have carried the bundle for `propagation`: the next
//     CA becomes the signing CA and signs a new serving certificate -> SignNext.
//  5. SignNext, `report_ttl` after it began, and every fresh replica report names the signing
//     CA: the bundle drops the old CAs -> Stable; reports are cleared. (Reports made in
//     TrustNext carry over into SignNext: a replica alive then must report the new CA first.)
//  6. The serving certificate does not verify now (chain, names, key) or rotate=serving, or it
//     expires within the lookahead and a new one would last longer: issue one.
//  7. Outside Stable, this replica's report is refreshed every `report_interval`; reports older
//     than `report_ttl` (3 intervals: a replica that is gone) are removed.
//  8. bundle-injected records when the configurations were first seen carrying the bundle.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "certs/state.h"
#include "certs/x509.h"

namespace trainer::certs {

struct Policy {
  std::string ca_name = "kubeflow-trainer-ca";
  std::string ca_organization = "kubeflow-trainer";
  std::vector<std::string> dns_names;  // the Service's names; the first is the CN
  std::chrono::seconds ca_validity = std::chrono::hours(24 * 365 * 10);
  std::chrono::seconds serving_validity = std::chrono::hours(24 * 365);
  // Renew (or start rotating the CA) this long before expiry: upstream's lookahead.
  std::chrono::seconds lookahead = std::chrono::hours(24 * 90);
  // How long both configurations carry a new bundle before a certificate of its new CA is
  // served: the apiserver's informer must have the new caBundle first.
  std::chrono::seconds propagation = std::chrono::seconds(60);
  // Replicas refresh their report this often while a rotation is under way; a report older
  // than three intervals is from a replica that is gone.
  std::chrono::seconds report_interval = std::chrono::seconds(20);
  std::chrono::seconds report_ttl() const { return 3 * report_interval; }
};

struct Observed {
  // Every webhook of both configurations carries the state's bundle as its caBundle (true when
  // the configurations do not exist: nothing to inject into).
  bool bundle_injected = false;
  std::string replica;     // this replica's id
  std::string serving_ca;  // fingerprint of the CA that signed what it serves; "" = nothing yet
};

struct Decision {
  std::optional<State> write;        // the state to write, when anything changes
  std::vector<std::string> reasons;  // one per change, for the log
  Time wake;                         // plan again at the latest then
};

// Fails only when issuing a certificate fails (OpenSSL).
StatusOr<Decision> Plan(const State& current, const Observed& observed, const Policy& policy,
                        Time now);

}  // namespace trainer::certs
