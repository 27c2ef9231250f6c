// Issuer: verifies tokens of one OpenID Connect issuer locally, with its discovery document and
// signing keys fetched once and cached (what go-oidc's Provider and remote key set do for
// upstream's status server), made robust for a server that must not depend on the issuer at
// every request:
//   - Start() loads in the background, retrying with jittered exponential backoff; until the
//     first load succeeds Verify answers kUnavailable (the caller's 500), never a denial;
//   - a token whose `kid` is not cached triggers one synchronous refresh (concurrent callers
//     share it); refreshes are at most one per min_refresh_interval, so a flood of tokens with
//     made-up kids cannot turn into a flood of fetches; a refresh that fails is kUnavailable;
//   - the keys are re-fetched every resync_interval, so a key the issuer retired stops being
//     trusted (a failed resync keeps the old keys);
//   - Stop() returns as soon as an in-progress fetch returns (fetches should have short
//     timeouts); nothing waits on the issuer otherwise.
// The fetch function is injected: trainer-webhook fetches through its apiserver client, since
// the apiserver serves its issuer's discovery document and keys itself.
//
//   jwt::Issuer issuer({.fetch = [&](std::string_view path) { return client.GetPath(path); }});
//   issuer.Start();
//   jwt::Issuer::Result r = issuer.Verify(raw_token, audience);
//   if (r.kind == jwt::Issuer::kUnavailable) reply(500); else if (r.kind == kInvalid) reply(403);
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "common/flowcontrol/backoff.h"
#include "common/json/json.h"
#include "common/jwt/jwt.h"
#include "common/status/status.h"

namespace trainer::jwt {

struct IssuerOptions {
  // GET of a path on the issuer's server, parsed as JSON.
  std::function<StatusOr<json::Value>(std::string_view path)> fetch;
  std::string discovery_path = "/.well-known/openid-configuration";
  // The JWKS path. The kube-apiserver always serves its keys here, whatever jwks_uri its
  // discovery document names (--service-account-jwks-uri may point elsewhere).
  std::string jwks_path = "/openid/v1/jwks";
  flowcontrol::BackoffPolicy backoff = {std::chrono::milliseconds(500),
                                        std::chrono::milliseconds(30000), 2.0, 0.5,
                                        std::chrono::milliseconds(0)};
  std::chrono::milliseconds min_refresh_interval{10000};
  std::chrono::milliseconds resync_interval{3600 * 1000};
  std::function<std::chrono::system_clock::time_point()> now = std::chrono::system_clock::now;
  // Called after every load attempt (true: the keys are current), for metrics and logs.
  std::function<void(const Status&)> on_load;
};

class Issuer {
 public:
  enum Kind { kValid, kInvalid, kUnavailable };
  struct Result {
    Kind kind = kUnavailable;
    std::string reason;  // why it is not kValid (for logs and metrics labels)
    json::Value claims;  // kValid only
  };

  explicit Issuer(IssuerOptions options);
  ~Issuer();  // Stop()s
  Issuer(const Issuer&) = delete;
  Issuer& operator=(const Issuer&) = delete;

  // Starts the background loader (idempotent).
  void Start();
  void Stop();
  // Loads now, on the calling thread (tests; Start() does this in the background).
  Status Load();

  // Discovery and keys are loaded.
  bool ready() const;
  // The issuer URL of the discovery document ("" before the first load).
  std::string issuer() const;

  // Verifies `raw` (a compact JWT) for `audience`: signature, issuer, audience, exp, nbf.
  Result Verify(std::string_view raw, std::string_view audience);

 private:
  struct State {
    std::string issuer;
    std::vector<std::string> algorithms;
    KeySet keys;
  };
  std::shared_ptr<const State> Current() const;
  Status LoadLocked();  // refresh_mu_ held
  // Refreshes for an unknown kid unless one was tried within min_refresh_interval.
  Result RefreshFor(const std::string& kid, std::shared_ptr<const State>* state);
  void Loop();

  const IssuerOptions options_;
  mutable std::mutex mu_;
  std::shared_ptr<const State> state_;  // guarded by mu_
  Status last_error_ = UnavailableError("not loaded yet");

  std::mutex refresh_mu_;                                 // one load at a time
  std::chrono::steady_clock::time_point last_refresh_{};  // guarded by refresh_mu_

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread loader_;
};

}  // namespace trainer::jwt
