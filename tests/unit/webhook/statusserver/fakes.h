// Test doubles of the status server: a recording StatusWriter, a pod directory, and an issuer
// of apiserver-shaped tokens whose keys an Issuer loads without a network.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/jwt/issuer.h"
#include "common/jwt/testing/signer.h"
#include "webhook/statusserver/auth.h"
#include "webhook/statusserver/writer.h"

namespace trainer::statusserver::testing {

inline constexpr char kIssuer[] = "https://kubernetes.default.svc";

inline int64_t NowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class FakeWriter final : public StatusWriter {
 public:
  struct Call {
    std::string key;
    TrainerStatus status;
  };
  Status Apply(std::string_view ns, std::string_view name, const TrainerStatus& status) override {
    std::unique_lock<std::mutex> lock(mu);
    calls.push_back({std::string(ns) + "/" + std::string(name), status});
    ++in_flight;
    max_in_flight = std::max(max_in_flight, in_flight);
    released.wait(lock, [this] { return !hold; });  // a test holds writes in flight
    --in_flight;
    return next;
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu);
    hold = false;
    released.notify_all();
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(mu);
    return calls.size();
  }
  std::mutex mu;
  std::condition_variable released;
  std::vector<Call> calls;
  Status next;
  bool hold = false;  // Apply blocks until Release()
  int in_flight = 0, max_in_flight = 0;
};

class FakePods final : public PodDirectory {
 public:
  bool HasSynced() const override { return synced; }
  std::optional<std::string> TrainJobOf(std::string_view ns, std::string_view name,
                                        std::string_view uid) const override {
    auto it = pods.find(std::string(ns) + "/" + std::string(name));
    if (it == pods.end() || it->second.first != uid) return std::nullopt;
    return it->second.second;
  }
  bool synced = true;
  std::map<std::string, std::pair<std::string, std::string>> pods;  // key -> {uid, trainjob}
};

// Tokens and the Issuer that trusts them.
struct TokenSource {
  jwt::testing::Signer signer;
  std::string kid = signer.AddKey(jwt::testing::KeyType::kP256);
  bool down = false;
  jwt::Issuer issuer{{.fetch = [this](std::string_view path) -> StatusOr<json::Value> {
    if (down) return UnavailableError("connection refused");
    if (path == "/openid/v1/jwks") return signer.Jwks();
    json::Value d = json::Value::Object();
    d.Set("issuer", kIssuer);
    d.Set("id_token_signing_alg_values_supported", json::Value::StringArray({"ES256"}));
    return d;
  }}};

  // A token of ServiceAccount `sa` in `ns` for TrainJob audience_ns/audience_name.
  std::string Token(std::string_view ns, std::string_view audience_ns,
                    std::string_view audience_name, std::string_view sa = "default") {
    return signer.Sign(kid, "ES256", Claims(ns, audience_ns, audience_name, sa));
  }
  json::Value Claims(std::string_view ns, std::string_view audience_ns,
                     std::string_view audience_name, std::string_view sa = "default") {
    return jwt::testing::ServiceAccountClaims(kIssuer,
                                              "trainer.kubeflow.org/v1alpha1/namespaces/" +
                                                  std::string(audience_ns) + "/trainjobs/" +
                                                  std::string(audience_name) + "/status",
                                              ns, sa, NowUnix());
  }
  std::string Sign(const json::Value& claims) { return signer.Sign(kid, "ES256", claims); }
};

}  // namespace trainer::statusserver::testing
