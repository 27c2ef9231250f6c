// Backoff: jittered exponential delays for retries and reconnects, with the reset rule of
// k8s.io/apimachinery's ExponentialBackoffManager (the reflector's 800 ms -> 30 s backoff that
// restarts from the beginning once no failure happened for a while).
//
//   Backoff b(BackoffPolicy::Reflector());
//   auto delay = b.Next(Backoff::Clock::now());   // 800 ms .. 1.6 s, then doubling up to 30 s
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>

namespace trainer::flowcontrol {

struct BackoffPolicy {
  std::chrono::milliseconds initial{800};
  std::chrono::milliseconds max{30000};
  double factor = 2.0;
  // Each delay d becomes d + U[0, jitter) * d, then is capped at `max`.
  double jitter = 1.0;
  // After this long without a failure the next delay starts from `initial` again (0 = never).
  std::chrono::milliseconds reset_after{120000};

  // client-go's reflector: 800 ms -> 30 s, factor 2, jitter 1, reset after 2 min.
  static BackoffPolicy Reflector() { return {}; }
  // Retries of one REST request: 250 ms -> 8 s with +/-50% ("full-ish") jitter.
  static BackoffPolicy Request() {
    return {std::chrono::milliseconds(250), std::chrono::milliseconds(8000), 2.0, 0.5,
            std::chrono::milliseconds(0)};
  }
};

// Thread-safe; randomness is seeded per instance (inject `seed` for reproducible tests).
class Backoff {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Backoff(BackoffPolicy policy, uint64_t seed = std::random_device{}());

  // The delay to sleep after a failure at `now`.
  Clock::duration Next(Clock::time_point now);
  // Forget earlier failures (e.g. after a success that proves the peer healthy).
  void Reset();

  const BackoffPolicy& policy() const { return policy_; }

 private:
  const BackoffPolicy policy_;
  std::mutex mu_;
  std::mt19937_64 rng_;
  int failures_ = 0;
  Clock::time_point last_failure_{};
};

}  // namespace trainer::flowcontrol
