// certs/plan.h on a fixed clock: bootstrap, serving renewal within the lookahead, and each phase
// of a CA rotation with the conditions that hold it back.
#include "certs/plan.h"

#include <catch2/catch.hpp>

namespace trainer::certs {
namespace {

using namespace std::chrono_literals;

const Time kT0 = std::chrono::system_clock::from_time_t(1767225600);  // 2026-01-01T00:00:00Z
const std::vector<std::string> kNames = {"trainer-webhook.kubeflow-system.svc",
                                         "trainer-webhook.kubeflow-system.svc.cluster.local"};
constexpr std::chrono::hours kDay{24};

Policy TestPolicy() {
  Policy p;
  p.dns_names = kNames;
  p.propagation = 60s;
  p.report_interval = 20s;
  return p;
}

// Observed as a replica sees it after the rotator injected the bundle.
Observed Injected(std::string replica = "", std::string serving_ca = "") {
  return {
      .bundle_injected = true, .replica = std::move(replica), .serving_ca = std::move(serving_ca)};
}

Decision MustPlan(const State& s, const Observed& o, Time now, const Policy& p = TestPolicy()) {
  StatusOr<Decision> d = Plan(s, o, p, now);
  REQUIRE(d.ok());
  return std::move(d).value();
}

// Plans and applies the writes until nothing changes (as Step does), at a fixed time.
State Settle(State s, const Observed& o, Time now, const Policy& p = TestPolicy()) {
  for (int i = 0; i < 10; ++i) {
    Decision d = MustPlan(s, o, now, p);
    if (!d.write.has_value()) {
      return s;
    }
    s = std::move(*d.write);
  }
  FAIL("the plan did not settle");
  return s;
}

std::string Reasons(const Decision& d) {
  std::string out;
  for (const std::string& r : d.reasons) {
    out += r + "\n";
  }
  return out;
}

State Bootstrapped(Time now = kT0) { return Settle(State{}, Injected(), now); }

TEST_CASE("an empty Secret gets a CA, a serving certificate and a bundle of that CA", "[plan]") {
  Decision d = MustPlan(State{}, Observed{}, kT0);
  REQUIRE(d.write.has_value());
  CHECK(Reasons(d) == "no CA yet: issued a CA and a serving certificate\n");
  const State& s = *d.write;
  CHECK(VerifyCA(s.ca, kT0).ok());
  CHECK(VerifyServing(s.ca.cert_pem, s.serving, kNames, kT0).ok());
  CHECK(Inspect(s.ca.cert_pem)->not_after == kT0 + 3650 * kDay);
  CHECK(Inspect(s.serving.cert_pem)->not_after == kT0 + 365 * kDay);
  CHECK(s.bundle == std::vector<std::string>{s.ca.cert_pem});
  CHECK(s.next_ca.cert_pem.empty());
  CHECK(s.phase_since == kT0);
  CHECK_FALSE(s.injected_at.has_value());  // not in the configurations yet
  CHECK(PhaseOf(s) == Phase::kStable);
}

TEST_CASE("the injection is recorded once; a settled Secret is left alone", "[plan]") {
  State s = Settle(State{}, Observed{}, kT0);
  Decision d = MustPlan(s, Injected(), kT0 + 3s);
  REQUIRE(d.write.has_value());
  CHECK(d.write->injected_bundle == BundleFingerprint(s.bundle));
  CHECK(d.write->injected_at == kT0 + 3s);
  CHECK(d.reasons.empty());
  Decision again = MustPlan(*d.write, Injected(), kT0 + 10s);
  CHECK_FALSE(again.write.has_value());
  CHECK(again.wake == kT0 + 10s + 1h);  // nothing due sooner: the periodic check
  SECTION("a configuration that lost the bundle clears the record") {
    Decision lost = MustPlan(*d.write, Observed{}, kT0 + 20s);
    REQUIRE(lost.write.has_value());
    CHECK_FALSE(lost.write->injected_at.has_value());
  }
}

TEST_CASE("a Secret written by upstream keeps its certificates and gains a bundle", "[plan]") {
  State upstream = Bootstrapped();
  upstream.bundle.clear();
  upstream.phase_since.reset();
  Decision d = MustPlan(upstream, Observed{}, kT0 + 1s);
  REQUIRE(d.write.has_value());
  CHECK(Reasons(d) == "added the signing CA to the trusted bundle\n");
  CHECK(d.write->ca == upstream.ca);
  CHECK(d.write->serving == upstream.serving);
  CHECK(d.write->bundle == std::vector<std::string>{upstream.ca.cert_pem});
}

TEST_CASE("the serving certificate is renewed within the lookahead, by the same CA", "[plan]") {
  State s = Bootstrapped();
  Time due = kT0 + 365 * kDay - 90 * kDay;
  Decision before = MustPlan(s, Injected(), due - 30min);
  CHECK_FALSE(before.write.has_value());
  CHECK(before.wake == due);
  Decision d = MustPlan(s, Injected(), due);
  REQUIRE(d.write.has_value());
  CHECK(Reasons(d) == "renewed the serving certificate (it expires at 2027-01-01T00:00:00Z)\n");
  CHECK(d.write->ca == s.ca);
  CHECK(d.write->bundle == s.bundle);  // the caBundle does not change
  CHECK(d.write->injected_at == s.injected_at);
  CHECK(d.write->serving != s.serving);
  CHECK(VerifyServing(s.ca.cert_pem, d.write->serving, kNames, due + 200 * kDay).ok());
}

TEST_CASE("a serving certificate that does not fit is replaced", "[plan]") {
  State s = Bootstrapped();
  SECTION("other names") {
    Policy p = TestPolicy();
    p.dns_names = {"trainer-webhook.other.svc"};
    Decision d = MustPlan(s, Injected(), kT0 + 1s, p);
    REQUIRE(d.write.has_value());
    CHECK(Reasons(d) ==
          "renewed the serving certificate (the serving certificate is not for "
          "trainer-webhook.other.svc)\n");
    CHECK(VerifyServing(s.ca.cert_pem, d.write->serving, p.dns_names, kT0).ok());
  }
  SECTION("signed by another CA") {
    State other = Bootstrapped();
    s.serving = other.serving;
    Decision d = MustPlan(s, Injected(), kT0 + 1s);
    REQUIRE(d.write.has_value());
    CHECK(Reasons(d).find("does not verify against the CA") != std::string::npos);
    CHECK(d.write->ca == s.ca);
  }
  SECTION("requested with rotate=serving; the request is consumed") {
    s.rotate = "serving";
    Decision d = MustPlan(s, Injected(), kT0 + 1s);
    REQUIRE(d.write.has_value());
    CHECK(Reasons(d) == "renewed the serving certificate (renewal requested)\n");
    CHECK(d.write->rotate.empty());
    CHECK(d.write->bundle == s.bundle);
  }
}

TEST_CASE("an unusable CA is replaced outright", "[plan]") {
  State s = Bootstrapped();
  Decision d = MustPlan(s, Injected(), kT0 + 3651 * kDay);
  REQUIRE(d.write.has_value());
  CHECK(Reasons(d).rfind("the CA is unusable (the CA certificate has expired at", 0) == 0);
  CHECK(d.write->bundle == std::vector<std::string>{d.write->ca.cert_pem});
}

TEST_CASE("an unknown rotate request is dropped with a reason", "[plan]") {
  State s = Bootstrapped();
  s.rotate = "everything";
  Decision d = MustPlan(s, Injected(), kT0 + 1s);
  REQUIRE(d.write.has_value());
  CHECK(Reasons(d) == "ignored the rotate request \"everything\" (want \"serving\" or \"ca\")\n");
  CHECK(d.write->rotate.empty());
}

// Walks one CA rotation, checking what holds each phase back.
TEST_CASE("a CA rotation: TrustNext, SignNext once propagated, Stable once all replicas moved",
          "[plan]") {
  Time t = kT0 + 3650 * kDay - 90 * kDay;  // the CA enters the lookahead
  // Renewed a day before, the serving certificate ends with its CA.
  State s = Settle(Bootstrapped(), Injected(), t - kDay);
  CHECK(Inspect(s.serving.cert_pem)->not_after == kT0 + 3650 * kDay);
  const KeyPair old_ca = s.ca;
  const std::string old_fp = Fingerprint(old_ca.cert_pem);

  // Stable -> TrustNext: a next CA joins the bundle; nothing signs with it yet.
  CHECK_FALSE(MustPlan(s, Injected("a", old_fp), t - 1s).write.has_value());
  Decision d = MustPlan(s, Injected("a", old_fp), t);
  REQUIRE(d.write.has_value());
  CHECK(Reasons(d) ==
        "the CA expires at 2035-12-30T00:00:00Z: trusting a new CA next to it (TrustNext)\n");
  s = *d.write;
  CHECK(PhaseOf(s) == Phase::kTrustNext);
  CHECK(s.ca == old_ca);
  CHECK(VerifyCA(s.next_ca, t).ok());
  CHECK(s.bundle == std::vector<std::string>{old_ca.cert_pem, s.next_ca.cert_pem});
  CHECK(s.reports.at("a").ca == old_fp);
  CHECK_FALSE(s.injected_at.has_value());
  const KeyPair new_ca = s.next_ca;
  const std::string new_fp = Fingerprint(new_ca.cert_pem);

  // Not injected yet: nothing moves, however long it waits.
  s = Settle(s, Observed{.replica = "a", .serving_ca = old_fp}, t + 10 * 60s);
  CHECK(PhaseOf(s) == Phase::kTrustNext);
  // Injected at t+600: recorded, and `propagation` later the new CA signs.
  t += 600s;
  s = Settle(s, Injected("a", old_fp), t);
  CHECK(s.injected_at == t);
  Decision early = MustPlan(s, Injected(), t + 59s);
  CHECK_FALSE(early.write.has_value());
  CHECK(early.wake == t + 60s);
  d = MustPlan(s, Injected("a", old_fp), t + 60s);
  REQUIRE(d.write.has_value());
  CHECK(Reasons(d) ==
        "the webhook configurations trust the new CA since 2035-10-01T00:10:00Z: it signs the "
        "serving certificate now (SignNext)\n");
  s = *d.write;
  t += 60s;
  CHECK(PhaseOf(s) == Phase::kSignNext);
  CHECK(s.ca == new_ca);
  CHECK(s.next_ca.cert_pem.empty());
  CHECK(VerifyServing(new_ca.cert_pem, s.serving, kNames, t).ok());
  CHECK(s.bundle == std::vector<std::string>{old_ca.cert_pem, new_ca.cert_pem});
  CHECK(s.injected_at.has_value());  // the bundle did not change

  // SignNext -> Stable: replica a reports the new CA, b still the old one.
  s = Settle(s, Injected("a", new_fp), t + 1s);
  s = Settle(s, Injected("b", old_fp), t + 2s);
  Decision held = MustPlan(s, Injected(), t + 50s);
  CHECK_FALSE(held.write.has_value());
  // b moves: the old CA leaves the bundle once report_ttl (60 s) has passed since SignNext.
  s = Settle(s, Injected("b", new_fp), t + 55s);
  CHECK(s.reports.size() == 2);
  Decision drop = MustPlan(s, Injected("a", new_fp), t + 60s);
  REQUIRE(drop.write.has_value());
  CHECK(Reasons(drop) ==
        "all 2 replicas (a, b) serve a certificate of the new CA since SignNext began at "
        "2035-10-01T00:11:00Z: dropped the old CA from the bundle (Stable)\n");
  s = *drop.write;
  CHECK(PhaseOf(s) == Phase::kStable);
  CHECK(s.bundle == std::vector<std::string>{new_ca.cert_pem});
  CHECK(s.reports.empty());
  CHECK_FALSE(s.injected_at.has_value());
}

TEST_CASE("a replica that is gone does not hold the rotation; a live one does", "[plan]") {
  State s = Bootstrapped();
  s.rotate = "ca";
  const std::string old_fp = Fingerprint(s.ca.cert_pem);
  Time t = kT0 + 10s;
  Decision d = MustPlan(s, Injected("a", old_fp), t);
  REQUIRE(d.write.has_value());
  CHECK(Reasons(d) == "CA rotation requested: trusting a new CA next to it (TrustNext)\n");
  CHECK(d.write->rotate.empty());
  s = Settle(*d.write, Injected("a", old_fp), t);
  s = Settle(s, Injected("a", old_fp), t + 60s);  // SignNext
  REQUIRE(PhaseOf(s) == Phase::kSignNext);
  const std::string new_fp = Fingerprint(s.ca.cert_pem);
  t += 60s;
  // b serves the old CA and then stops reporting (it is gone).
  s = Settle(s, Injected("b", old_fp), t);
  s = Settle(s, Injected("a", new_fp), t + 1s);
  CHECK(PhaseOf(Settle(s, Injected("a", new_fp), t + 19s)) == Phase::kSignNext);
  // a keeps reporting every 20 s; b's report expires 60 s after it was written.
  s = Settle(s, Injected("a", new_fp), t + 21s);
  s = Settle(s, Injected("a", new_fp), t + 41s);
  Decision held = MustPlan(s, Injected("a", new_fp), t + 59s);
  CHECK_FALSE(held.write.has_value());
  CHECK(held.wake == t + 60s);  // when b's report expires
  s = Settle(s, Injected("a", new_fp), t + 61s);
  CHECK(PhaseOf(s) == Phase::kStable);
  CHECK(s.bundle.size() == 1);
}

TEST_CASE("reports are refreshed every report_interval while a rotation is under way", "[plan]") {
  State s = Bootstrapped();
  s.rotate = "ca";
  std::string fp = Fingerprint(s.ca.cert_pem);
  s = Settle(s, Observed{.replica = "a", .serving_ca = fp}, kT0 + 1s);
  REQUIRE(PhaseOf(s) == Phase::kTrustNext);
  CHECK(s.reports.at("a").at == kT0 + 1s);
  Decision quiet = MustPlan(s, Observed{.replica = "a", .serving_ca = fp}, kT0 + 20s);
  CHECK_FALSE(quiet.write.has_value());
  CHECK(quiet.wake == kT0 + 21s);
  Decision beat = MustPlan(s, Observed{.replica = "a", .serving_ca = fp}, kT0 + 21s);
  REQUIRE(beat.write.has_value());
  CHECK(beat.write->reports.at("a").at == kT0 + 21s);
  CHECK(beat.reasons.empty());
  SECTION("a replica that serves nothing yet does not report") {
    Decision none = MustPlan(s, Observed{.replica = "c"}, kT0 + 2s);
    CHECK_FALSE(none.write.has_value());
  }
}

TEST_CASE("rotate=ca during a rotation waits for it to finish", "[plan]") {
  State s = Bootstrapped();
  s.rotate = "ca";
  std::string fp = Fingerprint(s.ca.cert_pem);
  s = Settle(s, Injected("a", fp), kT0 + 1s);
  REQUIRE(PhaseOf(s) == Phase::kTrustNext);
  s.rotate = "ca";
  Decision d = MustPlan(s, Injected("a", fp), kT0 + 2s);
  CHECK_FALSE(d.write.has_value());  // kept, not acted upon
  CHECK(PhaseOf(s) == Phase::kTrustNext);
}

TEST_CASE("a next CA that went bad is dropped and the rotation starts over", "[plan]") {
  State s = Bootstrapped();
  s.rotate = "ca";
  s = Settle(s, Observed{}, kT0 + 1s);
  REQUIRE(PhaseOf(s) == Phase::kTrustNext);
  s.next_ca.key_pem = Bootstrapped().ca.key_pem;  // a key that is not its own
  Decision d = MustPlan(s, Observed{}, kT0 + 2s);
  REQUIRE(d.write.has_value());
  CHECK(d.reasons.at(0) == "dropped the next CA (the CA: the private key does not match)");
  CHECK(d.write->bundle == std::vector<std::string>{s.ca.cert_pem});
  CHECK(PhaseOf(*d.write) == Phase::kStable);
}

TEST_CASE("near the CA's end the serving certificate waits for the rotation", "[plan]") {
  // A serving certificate capped at its CA's notAfter cannot gain by renewal: planning must not
  // renew it on every pass.
  State s = Bootstrapped();
  Time late = kT0 + 3650 * kDay - 30 * kDay;
  s.serving =
      IssueServing(s.ca, {.dns_names = kNames, .not_before = late, .not_after = late + 365 * kDay})
          .value();
  State rotating = Settle(s, Injected(), late);
  CHECK(PhaseOf(rotating) == Phase::kTrustNext);
  CHECK(rotating.serving == s.serving);
}

}  // namespace
}  // namespace trainer::certs
