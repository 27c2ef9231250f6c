// jwt::Issuer: discovery and keys fetched once, refreshed on an unknown kid (rate-limited),
// resynced, loaded in the background with backoff, and a prompt Stop (issuer.h).
#include "common/jwt/issuer.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "common/jwt/testing/signer.h"

namespace trainer::jwt {
namespace {

using namespace std::chrono_literals;
using testing::KeyType;
using testing::ServiceAccountClaims;
using testing::Signer;

constexpr char kIssuer[] = "https://kubernetes.default.svc";
constexpr char kAudience[] = "trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status";

int64_t NowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The apiserver's two documents, served from a Signer, with injectable failures.
struct FakeApiserver {
  Signer signer;
  std::atomic<int> fetches{0};
  std::atomic<bool> down{false};
  std::string algs = "ES256";
  std::mutex mu;

  StatusOr<json::Value> Fetch(std::string_view path) {
    ++fetches;
    if (down) return UnavailableError("connection refused");
    std::lock_guard<std::mutex> lock(mu);
    if (path == "/.well-known/openid-configuration") {
      json::Value d = json::Value::Object();
      d.Set("issuer", kIssuer);
      d.Set("jwks_uri", "https://10.0.0.1:443/openid/v1/jwks");
      if (!algs.empty())
        d.Set("id_token_signing_alg_values_supported", json::Value::StringArray({algs}));
      return d;
    }
    if (path == "/openid/v1/jwks") return signer.Jwks();
    return NotFoundError("404 page not found");
  }
  std::string Token(const std::string& kid, std::string_view alg = "ES256") {
    std::lock_guard<std::mutex> lock(mu);
    return signer.Sign(kid, alg, ServiceAccountClaims(kIssuer, kAudience, "ns", "sa", NowUnix()));
  }
  std::string AddKey(KeyType t = KeyType::kP256) {
    std::lock_guard<std::mutex> lock(mu);
    return signer.AddKey(t);
  }
};

IssuerOptions Options(FakeApiserver& api) {
  IssuerOptions o;
  o.fetch = [&api](std::string_view path) { return api.Fetch(path); };
  o.backoff = {10ms, 50ms, 2.0, 0.0, 0ms};
  o.min_refresh_interval = 1h;
  return o;
}

TEST_CASE("unavailable until loaded, then verifies locally", "[issuer]") {
  FakeApiserver api;
  std::string kid = api.AddKey();
  Issuer issuer(Options(api));
  Issuer::Result r = issuer.Verify(api.Token(kid), kAudience);
  CHECK(r.kind == Issuer::kUnavailable);
  CHECK(api.fetches == 0);
  REQUIRE(issuer.Load().ok());
  CHECK(issuer.issuer() == kIssuer);
  const int after_load = api.fetches;
  for (int i = 0; i < 5; ++i) {
    r = issuer.Verify(api.Token(kid), kAudience);
    CHECK(r.kind == Issuer::kValid);
  }
  CHECK(api.fetches == after_load);  // no request per token
  CHECK(r.claims["kubernetes.io"]["namespace"].AsString() == "ns");
  CHECK(issuer.Verify(api.Token(kid), "other").kind == Issuer::kInvalid);
  CHECK(issuer.Verify("garbage", kAudience).kind == Issuer::kInvalid);
}

TEST_CASE("unknown kid: one refresh picks up a rotated key, then rate-limited", "[issuer]") {
  FakeApiserver api;
  std::string old_kid = api.AddKey();
  IssuerOptions o = Options(api);
  Issuer issuer(o);
  REQUIRE(issuer.Load().ok());
  std::string new_kid = api.AddKey();
  api.signer.RemoveKey(old_kid);
  // Issuer::Load above counts as the last refresh: with the hour-long limit, no refresh yet.
  CHECK(issuer.Verify(api.Token(new_kid), kAudience).kind == Issuer::kInvalid);

  o.min_refresh_interval = 0ms;
  Issuer fresh(o);
  REQUIRE(fresh.Load().ok());
  std::string newer = api.AddKey();
  const int before = api.fetches;
  CHECK(fresh.Verify(api.Token(newer), kAudience).kind == Issuer::kValid);
  CHECK(api.fetches == before + 2);  // discovery and keys, once
  CHECK(fresh.Verify(api.Token(newer), kAudience).kind == Issuer::kValid);
  CHECK(api.fetches == before + 2);
}

TEST_CASE("unknown kid while the issuer is down: unavailable, not denied", "[issuer]") {
  FakeApiserver api;
  api.AddKey();
  IssuerOptions o = Options(api);
  o.min_refresh_interval = 0ms;
  Issuer issuer(o);
  REQUIRE(issuer.Load().ok());
  std::string rotated = api.AddKey();
  api.down = true;
  CHECK(issuer.Verify(api.Token(rotated), kAudience).kind == Issuer::kUnavailable);
  api.down = false;
  CHECK(issuer.Verify(api.Token(rotated), kAudience).kind == Issuer::kValid);
}

TEST_CASE("concurrent unknown kids share one refresh", "[issuer]") {
  FakeApiserver api;
  api.AddKey();
  IssuerOptions o = Options(api);
  o.min_refresh_interval = 0ms;
  Issuer shared(o);
  REQUIRE(shared.Load().ok());
  std::string rotated = api.AddKey();
  std::string token = api.Token(rotated);
  const int before = api.fetches;
  std::vector<std::thread> threads;
  std::atomic<int> valid{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      if (shared.Verify(token, kAudience).kind == Issuer::kValid) ++valid;
    });
  }
  for (auto& t : threads) t.join();
  CHECK(valid == 8);
  CHECK(api.fetches == before + 2);
}

TEST_CASE("algorithms come from discovery; RS256 when it lists none", "[issuer]") {
  FakeApiserver api;
  std::string ec = api.AddKey(KeyType::kP256);
  std::string rsa = api.AddKey(KeyType::kRsa2048);
  Issuer es_only(Options(api));
  REQUIRE(es_only.Load().ok());
  CHECK(es_only.Verify(api.Token(ec), kAudience).kind == Issuer::kValid);
  CHECK(es_only.Verify(api.Token(rsa, "RS256"), kAudience).kind == Issuer::kInvalid);
  api.algs = "";
  Issuer rs_default(Options(api));
  REQUIRE(rs_default.Load().ok());
  CHECK(rs_default.Verify(api.Token(rsa, "RS256"), kAudience).kind == Issuer::kValid);
  CHECK(rs_default.Verify(api.Token(ec), kAudience).kind == Issuer::kInvalid);
}

TEST_CASE("Start: retries with backoff until the issuer answers; Stop is prompt", "[issuer]") {
  FakeApiserver api;
  std::string kid = api.AddKey();
  api.down = true;
  std::atomic<int> failures{0};
  IssuerOptions o = Options(api);
  o.on_load = [&failures](const Status& s) {
    if (!s.ok()) ++failures;
  };
  Issuer issuer(o);
  issuer.Start();
  while (failures < 3) std::this_thread::sleep_for(5ms);
  CHECK_FALSE(issuer.ready());
  CHECK(issuer.Verify(api.Token(kid), kAudience).kind == Issuer::kUnavailable);
  api.down = false;
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!issuer.ready() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  REQUIRE(issuer.ready());
  CHECK(issuer.Verify(api.Token(kid), kAudience).kind == Issuer::kValid);

  // A long backoff does not delay Stop.
  FakeApiserver down;
  down.down = true;
  IssuerOptions slow = Options(down);
  slow.backoff = {1h, 1h, 2.0, 0.0, 0ms};
  Issuer waiting(slow);
  waiting.Start();
  while (down.fetches == 0) std::this_thread::sleep_for(1ms);
  auto t0 = std::chrono::steady_clock::now();
  waiting.Stop();
  CHECK(std::chrono::steady_clock::now() - t0 < 1s);
}

TEST_CASE("resync: a key the issuer retired stops being trusted", "[issuer]") {
  FakeApiserver api;
  std::string old_kid = api.AddKey();
  IssuerOptions o = Options(api);
  o.resync_interval = 20ms;
  Issuer issuer(o);
  issuer.Start();
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!issuer.ready() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  std::string token = api.Token(old_kid);
  CHECK(issuer.Verify(token, kAudience).kind == Issuer::kValid);
  {
    std::lock_guard<std::mutex> lock(api.mu);
    api.signer.AddKey(KeyType::kP256);
    api.signer.RemoveKey(old_kid);
  }
  Issuer::Kind kind = Issuer::kValid;
  while (kind == Issuer::kValid && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
    kind = issuer.Verify(token, kAudience).kind;
  }
  CHECK(kind == Issuer::kInvalid);
  issuer.Stop();
}

}  // namespace
}  // namespace trainer::jwt
