// The rotator's decisions (see plan.h).
#include "certs/plan.h"

#include <algorithm>

#include "common/kube/meta.h"

namespace trainer::certs {
namespace {

using std::chrono::seconds;

// Planning again at least this often catches what no event announces (a clock jump).
constexpr std::chrono::hours kMaxSleep{1};
// A renewal that would not extend the serving certificate by at least this much (its CA
// expires first) waits for the CA rotation instead.
constexpr std::chrono::hours kWorthRenewing{1};

class Planner {
 public:
  Planner(const State& current, const Observed& observed, const Policy& policy, Time now)
      : current_(current), s_(current), obs_(observed), p_(policy), now_(now) {
    d_.wake = now_ + kMaxSleep;
  }

  StatusOr<Decision> Run() {
    RETURN_IF_ERROR(EnsureCA());
    NormalizeBundle();
    RETURN_IF_ERROR(StartRotation());
    RETURN_IF_ERROR(SignWithNext());
    DropOldCAs();
    RETURN_IF_ERROR(EnsureServing());
    ClearUnknownRequest();
    UpdateReports();
    RecordInjection();
    if (!s_.SameContent(current_)) {
      d_.write = std::move(s_);
    }
    return std::move(d_);
  }

 private:
  void Reason(std::string r) { d_.reasons.push_back(std::move(r)); }
  void WakeAt(Time t) { d_.wake = std::min(d_.wake, std::max(t, now_ + seconds(1))); }
  bool InBundle(const std::string& pem) const {
    std::string fp = Fingerprint(pem);
    return std::any_of(s_.bundle.begin(), s_.bundle.end(),
                       [&](const std::string& b) { return Fingerprint(b) == fp; });
  }
  void EnterPhase() {
    s_.phase_since = now_;
    s_.reports.clear();
  }

  StatusOr<KeyPair> NewCA() const {
    return IssueCA({.name = p_.ca_name,
                    .organization = p_.ca_organization,
                    .not_before = now_,
                    .not_after = now_ + p_.ca_validity});
  }
  StatusOr<KeyPair> NewServing() const {
    return IssueServing(
        s_.ca,
        {.dns_names = p_.dns_names, .not_before = now_, .not_after = now_ + p_.serving_validity});
  }

  // Rule 1.
  Status EnsureCA() {
    Status ca = VerifyCA(s_.ca, now_);
    if (ca.ok()) {
      return OkStatus();
    }
    ASSIGN_OR_RETURN(s_.ca, NewCA());
    ASSIGN_OR_RETURN(s_.serving, NewServing());
    s_.next_ca = {};
    s_.bundle = {s_.ca.cert_pem};
    if (s_.rotate == kRotateCA || s_.rotate == kRotateServing) {
      s_.rotate.clear();
    }
    EnterPhase();
    Reason(current_.ca.cert_pem.empty() ? "no CA yet: issued a CA and a serving certificate"
                                        : "the CA is unusable (" + ca.message() +
                                              "): issued a new CA and serving certificate");
    return OkStatus();
  }

  // Rule 2 (and a next CA that went bad is dropped).
  void NormalizeBundle() {
    if (!s_.next_ca.cert_pem.empty()) {
      if (Status next = VerifyCA(s_.next_ca, now_); !next.ok()) {
        std::string fp = Fingerprint(s_.next_ca.cert_pem);
        std::erase_if(s_.bundle, [&](const std::string& b) { return Fingerprint(b) == fp; });
        s_.next_ca = {};
        Reason("dropped the next CA (" + next.message() + ")");
      }
    }
    if (!InBundle(s_.ca.cert_pem)) {
      s_.bundle.push_back(s_.ca.cert_pem);
      Reason("added the signing CA to the trusted bundle");
    }
    if (!s_.next_ca.cert_pem.empty() && !InBundle(s_.next_ca.cert_pem)) {
      s_.bundle.push_back(s_.next_ca.cert_pem);
      Reason("added the next CA to the trusted bundle");
    }
    if (!s_.phase_since.has_value()) {
      s_.phase_since = now_;
    }
  }

  // Rule 3.
  Status StartRotation() {
    if (PhaseOf(s_) != Phase::kStable) {
      return OkStatus();
    }
    ASSIGN_OR_RETURN(CertInfo ca, Inspect(s_.ca.cert_pem));
    Time due = ca.not_after - p_.lookahead;
    bool requested = s_.rotate == kRotateCA;
    if (!requested && now_ < due) {
      WakeAt(due);
      return OkStatus();
    }
    ASSIGN_OR_RETURN(s_.next_ca, NewCA());
    s_.bundle.push_back(s_.next_ca.cert_pem);
    if (requested) {
      s_.rotate.clear();
    }
    EnterPhase();
    Reason(std::string(requested ? "CA rotation requested"
                                 : "the CA expires at " + kube::FormatTime(ca.not_after)) +
           ": trusting a new CA next to it (TrustNext)");
    return OkStatus();
  }

  // Rule 4.
  Status SignWithNext() {
    if (PhaseOf(s_) != Phase::kTrustNext) {
      return OkStatus();
    }
    if (s_.injected_bundle != BundleFingerprint(s_.bundle) || !s_.injected_at.has_value()) {
      return OkStatus();  // the injection's record wakes us
    }
    Time ready = *s_.injected_at + p_.propagation;
    if (now_ < ready) {
      WakeAt(ready);
      return OkStatus();
    }
    s_.ca = std::move(s_.next_ca);
    s_.next_ca = {};
    ASSIGN_OR_RETURN(s_.serving, NewServing());
    // The reports stay: every replica alive during TrustNext has one (naming the old CA) and
    // must report the new CA before the old one goes; only a replica that stops reporting (gone)
    // drops out, when its report expires.
    s_.phase_since = now_;
    Reason("the webhook configurations trust the new CA since " +
           kube::FormatTime(*s_.injected_at) + ": it signs the serving certificate now (SignNext)");
    return OkStatus();
  }

  // Rule 5.
  void DropOldCAs() {
    if (PhaseOf(s_) != Phase::kSignNext) {
      return;
    }
    Time settled = *s_.phase_since + p_.report_ttl();
    std::string ca = Fingerprint(s_.ca.cert_pem);
    std::vector<std::string> behind;
    size_t fresh = 0;
    std::string names;
    for (const auto& [replica, r] : s_.reports) {
      if (r.at + p_.report_ttl() <= now_) {
        continue;
      }
      ++fresh;
      names += (names.empty() ? "" : ", ") + replica;
      if (r.ca != ca) {
        behind.push_back(replica);
      }
      WakeAt(r.at + p_.report_ttl());
    }
    if (now_ < settled || fresh == 0 || !behind.empty()) {
      WakeAt(settled);
      return;
    }
    Reason("all " + std::to_string(fresh) + " replicas (" + names +
           ") serve a certificate of the new CA since SignNext began at " +
           kube::FormatTime(*s_.phase_since) + ": dropped the old CA from the bundle (Stable)");
    s_.bundle = {s_.ca.cert_pem};
    EnterPhase();
  }

  // Rule 6.
  Status EnsureServing() {
    std::string why;
    if (Status v = VerifyServing(s_.ca.cert_pem, s_.serving, p_.dns_names, now_); !v.ok()) {
      why = s_.serving.cert_pem.empty() ? "no serving certificate" : v.message();
    } else if (s_.rotate == kRotateServing) {
      why = "renewal requested";
    } else {
      ASSIGN_OR_RETURN(CertInfo serving, Inspect(s_.serving.cert_pem));
      ASSIGN_OR_RETURN(CertInfo ca, Inspect(s_.ca.cert_pem));
      Time due = serving.not_after - p_.lookahead;
      if (now_ < due) {
        WakeAt(due);
        return OkStatus();
      }
      if (ca.not_after < serving.not_after + kWorthRenewing) {
        return OkStatus();  // the CA rotation (rule 3) comes first
      }
      why = "it expires at " + kube::FormatTime(serving.not_after);
    }
    ASSIGN_OR_RETURN(s_.serving, NewServing());
    if (s_.rotate == kRotateServing) {
      s_.rotate.clear();
    }
    Reason("renewed the serving certificate (" + why + ")");
    return OkStatus();
  }

  void ClearUnknownRequest() {
    if (!s_.rotate.empty() && s_.rotate != kRotateCA && s_.rotate != kRotateServing) {
      Reason("ignored the rotate request \"" + s_.rotate + "\" (want \"serving\" or \"ca\")");
      s_.rotate.clear();
    }
  }

  // Rule 7.
  void UpdateReports() {
    if (PhaseOf(s_) == Phase::kStable) {
      s_.reports.clear();
      return;
    }
    std::erase_if(s_.reports,
                  [&](const auto& kv) { return kv.second.at + p_.report_ttl() <= now_; });
    if (obs_.serving_ca.empty() || obs_.replica.empty()) {
      return;
    }
    auto it = s_.reports.find(obs_.replica);
    if (it == s_.reports.end() || it->second.ca != obs_.serving_ca ||
        it->second.at + p_.report_interval <= now_) {
      s_.reports[obs_.replica] = Report{.ca = obs_.serving_ca, .at = now_};
      WakeAt(now_ + p_.report_interval);
    } else {
      WakeAt(it->second.at + p_.report_interval);
    }
  }

  // Rule 8.
  void RecordInjection() {
    std::string fp = BundleFingerprint(s_.bundle);
    bool recorded = s_.injected_at.has_value() && s_.injected_bundle == fp;
    if (s_.bundle != current_.bundle || !obs_.bundle_injected) {
      // Not (or no longer) in the configurations: the injection that follows records it.
      s_.injected_bundle.clear();
      s_.injected_at.reset();
      return;
    }
    if (!recorded) {
      s_.injected_bundle = fp;
      s_.injected_at = now_;
      if (PhaseOf(s_) == Phase::kTrustNext) {
        WakeAt(now_ + p_.propagation);
      }
    }
  }

  const State& current_;
  State s_;
  const Observed& obs_;
  const Policy& p_;
  const Time now_;
  Decision d_;
};

}  // namespace

StatusOr<Decision> Plan(const State& current, const Observed& observed, const Policy& policy,
                        Time now) {
  return Planner(current, observed, policy, std::chrono::floor<seconds>(now)).Run();
}

}  // namespace trainer::certs
