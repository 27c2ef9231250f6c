// Issuer: cached OIDC discovery and keys (issuer.h).
#include "common/jwt/issuer.h"

#include "common/log/log.h"

namespace trainer::jwt {

Issuer::Issuer(IssuerOptions options) : options_(std::move(options)) {}

Issuer::~Issuer() { Stop(); }

void Issuer::Start() {
  std::lock_guard<std::mutex> lock(stop_mu_);
  if (loader_.joinable() || stopping_) return;
  loader_ = std::thread([this] { Loop(); });
}

void Issuer::Stop() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (loader_.joinable()) loader_.join();
}

std::shared_ptr<const Issuer::State> Issuer::Current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

bool Issuer::ready() const { return Current() != nullptr; }

std::string Issuer::issuer() const {
  std::shared_ptr<const State> s = Current();
  return s != nullptr ? s->issuer : std::string();
}

Status Issuer::Load() {
  std::lock_guard<std::mutex> refresh(refresh_mu_);
  return LoadLocked();
}

Status Issuer::LoadLocked() {
  last_refresh_ = std::chrono::steady_clock::now();
  auto fail = [this](Status s) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_error_ = s;
    }
    if (options_.on_load) options_.on_load(s);
    return s;
  };
  StatusOr<json::Value> discovery = options_.fetch(options_.discovery_path);
  if (!discovery.ok()) {
    return fail(UnavailableError("fetching " + options_.discovery_path + ": " +
                                 discovery.status().message()));
  }
  const json::Value* iss = discovery->Find("issuer");
  if (iss == nullptr || !iss->IsString() || iss->AsString().empty()) {
    return fail(UnavailableError(options_.discovery_path + " names no issuer"));
  }
  auto state = std::make_shared<State>();
  state->issuer = iss->AsString();
  // go-oidc: without id_token_signing_alg_values_supported, RS256.
  if (const json::Value* algs = discovery->Find("id_token_signing_alg_values_supported");
      algs != nullptr && algs->IsArray()) {
    for (const json::Value& a : algs->elements()) {
      if (a.IsString()) state->algorithms.push_back(a.AsString());
    }
  }
  if (state->algorithms.empty()) state->algorithms = {"RS256"};
  StatusOr<json::Value> jwks = options_.fetch(options_.jwks_path);
  if (!jwks.ok()) {
    return fail(
        UnavailableError("fetching " + options_.jwks_path + ": " + jwks.status().message()));
  }
  StatusOr<KeySet> keys = KeySet::FromJwks(*jwks);
  if (!keys.ok())
    return fail(UnavailableError(options_.jwks_path + ": " + keys.status().message()));
  state->keys = std::move(keys).value();
  {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = std::move(state);
    last_error_ = OkStatus();
  }
  if (options_.on_load) options_.on_load(OkStatus());
  return OkStatus();
}

void Issuer::Loop() {
  flowcontrol::Backoff backoff(options_.backoff);
  for (;;) {
    Status s = Load();
    std::chrono::steady_clock::duration wait;
    if (s.ok()) {
      backoff.Reset();
      wait = options_.resync_interval;
    } else {
      wait = backoff.Next(std::chrono::steady_clock::now());
      log::Warn(
          "token issuer not reachable; retrying",
          {{"error", s.message()},
           {"retryIn",
            std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(wait).count()) +
                "ms"}});
    }
    std::unique_lock<std::mutex> lock(stop_mu_);
    if (stop_cv_.wait_for(lock, wait, [this] { return stopping_; })) return;
  }
}

Issuer::Result Issuer::RefreshFor(const std::string& kid, std::shared_ptr<const State>* state) {
  std::lock_guard<std::mutex> refresh(refresh_mu_);
  // Another request may have refreshed while this one waited for the lock.
  *state = Current();
  if (*state != nullptr && (*state)->keys.Has(kid)) return {kValid};
  if (std::chrono::steady_clock::now() - last_refresh_ < options_.min_refresh_interval) {
    return {kInvalid, "no key for kid \"" + kid + "\""};
  }
  Status s = LoadLocked();
  if (!s.ok()) return {kUnavailable, s.message()};
  *state = Current();
  return {kValid};
}

Issuer::Result Issuer::Verify(std::string_view raw, std::string_view audience) {
  std::shared_ptr<const State> state = Current();
  if (state == nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    return {kUnavailable, "issuer not loaded: " + last_error_.message()};
  }
  StatusOr<Token> token = Parse(raw);
  if (!token.ok()) return {kInvalid, token.status().message()};
  if (!token->kid.empty() && !state->keys.Has(token->kid)) {
    Result r = RefreshFor(token->kid, &state);
    if (r.kind != kValid) return r;
  }
  Status s = jwt::Verify(*token, state->keys,
                         {.issuer = state->issuer,
                          .audience = std::string(audience),
                          .now = options_.now(),
                          .algorithms = state->algorithms});
  if (!s.ok()) return {kInvalid, s.message()};
  return {kValid, "", std::move(token->claims)};
}

}  // namespace trainer::jwt
