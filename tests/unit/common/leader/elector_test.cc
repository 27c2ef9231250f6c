// Tests of common/leader/elector.h on the FakeClient: acquire, renew, exclusion while the lease
// is live, take-over after expiry, release on stop, losing the lease after the renew deadline.
#include "common/leader/elector.h"

#include <catch2/catch.hpp>
#include <thread>

#include "common/kube/rest_mapper.h"
#include "common/kube/testing/fake_client.h"

namespace trainer::leader {
namespace {

using namespace std::chrono_literals;
using kube::testing::FakeClient;

LeaderElectionConfig Config(std::string identity) {
  return {.lease_namespace = "kube-system",
          .lease_name = "trainer",
          .identity = std::move(identity),
          .lease_duration = 1s,
          .renew_deadline = 700ms,
          .retry_period = 100ms};
}

std::string Holder(FakeClient& c) {
  auto lease = c.Get(kube::kLeases, "kube-system", "trainer");
  if (!lease.ok()) return "<none>";
  const json::Value* h = lease->Find("spec")->Find("holderIdentity");
  return h != nullptr ? h->AsString() : "";
}

int64_t Transitions(FakeClient& c) {
  auto lease = c.Get(kube::kLeases, "kube-system", "trainer");
  return lease->Find("spec")->Find("leaseTransitions")->AsInt();
}

TEST_CASE("the first candidate creates the lease; a second is kept out while it is renewed",
          "[leader]") {
  FakeClient client;
  LeaderElector a(client, Config("a"));
  LeaderElector b(client, Config("b"));
  CHECK(a.TryAcquireOrRenew());
  CHECK(Holder(client) == "a");
  CHECK_FALSE(b.TryAcquireOrRenew());
  CHECK(b.GetLeader() == "a");
  CHECK(a.TryAcquireOrRenew());  // renew
  CHECK(Transitions(client) == 0);
  // b first observed the record just now, so it waits a whole lease duration from there.
  std::this_thread::sleep_for(500ms);
  CHECK_FALSE(b.TryAcquireOrRenew());
}

TEST_CASE("an expired lease is taken over with a transition", "[leader]") {
  FakeClient client;
  LeaderElector a(client, Config("a"));
  LeaderElector b(client, Config("b"));
  REQUIRE(a.TryAcquireOrRenew());
  CHECK_FALSE(b.TryAcquireOrRenew());
  std::this_thread::sleep_for(1100ms);  // a stopped renewing
  CHECK(b.TryAcquireOrRenew());
  CHECK(Holder(client) == "b");
  CHECK(Transitions(client) == 1);
  CHECK_FALSE(a.TryAcquireOrRenew());  // a sees b's fresh renewal
}

TEST_CASE("a released lease is taken at once", "[leader]") {
  FakeClient client;
  LeaderElector a(client, Config("a"));
  LeaderElector b(client, Config("b"));
  REQUIRE(a.TryAcquireOrRenew());
  CHECK_FALSE(b.TryAcquireOrRenew());
  REQUIRE(a.Release());
  CHECK(Holder(client) == "");
  CHECK(b.TryAcquireOrRenew());
  CHECK(Holder(client) == "b");
}

TEST_CASE("Run leads until stopped, then releases and reports", "[leader]") {
  FakeClient client;
  std::atomic<int> started{0}, stopped{0};
  LeaderElector a(
      client, Config("a"),
      {.on_started_leading = [&] { ++started; }, .on_stopped_leading = [&] { ++stopped; }});
  std::stop_source stop;
  std::thread runner([&] { a.Run(stop.get_token()); });
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!a.IsLeader() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  REQUIRE(a.IsLeader());
  std::this_thread::sleep_for(300ms);  // a few renewals
  CHECK(Holder(client) == "a");
  stop.request_stop();
  runner.join();
  CHECK(started == 1);
  CHECK(stopped == 1);
  CHECK_FALSE(a.IsLeader());
  CHECK(Holder(client) == "");
}

TEST_CASE("a leader that cannot renew within the deadline stops leading", "[leader]") {
  FakeClient client;
  std::atomic<int> stopped{0};
  LeaderElector a(client, Config("a"), {.on_stopped_leading = [&] { ++stopped; }});
  std::stop_source stop;
  std::thread runner([&] { a.Run(stop.get_token()); });
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!a.IsLeader() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  REQUIRE(a.IsLeader());
  for (int i = 0; i < 20; ++i) client.FailNext("get", UnavailableError("apiserver down"));
  runner.join();  // Run returns by itself after the renew deadline
  CHECK(stopped == 1);
  CHECK_FALSE(a.IsLeader());
}

TEST_CASE("leader_election_master_status is 0 until leading, 1 while leading, 0 after",
          "[leader]") {
  FakeClient client;
  metrics::Registry registry;
  prometheus::Gauge& status = MasterStatusGauge(registry, "trainer");
  CHECK(status.Value() == 0);
  CHECK(registry.Text().find("leader_election_master_status{name=\"trainer\"} 0") !=
        std::string::npos);
  LeaderElectionConfig cfg = Config("a");
  cfg.master_status = &status;
  LeaderElector a(client, cfg);
  // b holds the lease first: a campaigns and stays at 0.
  LeaderElector b(client, Config("b"));
  REQUIRE(b.TryAcquireOrRenew());
  std::stop_source stop;
  std::thread runner([&] { a.Run(stop.get_token()); });
  std::this_thread::sleep_for(300ms);
  CHECK(status.Value() == 0);
  REQUIRE(b.Release());
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!a.IsLeader() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  REQUIRE(a.IsLeader());
  CHECK(status.Value() == 1);
  stop.request_stop();
  runner.join();
  CHECK(status.Value() == 0);
}

TEST_CASE("identities are unique per process", "[leader]") {
  CHECK(DefaultIdentity() != DefaultIdentity());
  CHECK(DefaultIdentity().find('_') != std::string::npos);
}

}  // namespace
}  // namespace trainer::leader
