// Requeue rate limiters, as in k8s.io/client-go/util/workqueue/default_rate_limiters.go: per-item
// exponential backoff, an overall token bucket, and the max of several. The default controller
// limiter combines 5 ms -> 1000 s per item with 10 qps / 100 burst overall, exactly upstream's
// DefaultTypedControllerRateLimiter, so failing reconciles back off like the Go controller's.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/flowcontrol/token_bucket.h"

namespace trainer::workqueue {

using Clock = std::chrono::steady_clock;

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  // How long to wait before `key` is processed again; counts one failure of it.
  virtual Clock::duration When(const std::string& key) = 0;
  // Forget the failures of `key` (it succeeded).
  virtual void Forget(const std::string& key) = 0;
  virtual int NumRequeues(const std::string& key) = 0;
};

// base * 2^failures, capped at max.
class ItemExponentialFailureRateLimiter final : public RateLimiter {
 public:
  ItemExponentialFailureRateLimiter(Clock::duration base, Clock::duration max)
      : base_(base), max_(max) {}
  Clock::duration When(const std::string& key) override;
  void Forget(const std::string& key) override;
  int NumRequeues(const std::string& key) override;

 private:
  const Clock::duration base_, max_;
  std::mutex mu_;
  std::unordered_map<std::string, int> failures_;
};

// One token per requeue, whatever the key.
class BucketRateLimiter final : public RateLimiter {
 public:
  BucketRateLimiter(double qps, int burst, std::function<Clock::time_point()> now = Clock::now)
      : now_(std::move(now)), bucket_(qps, burst, now_()) {}
  Clock::duration When(const std::string&) override { return bucket_.Reserve(now_()); }
  void Forget(const std::string&) override {}
  int NumRequeues(const std::string&) override { return 0; }

 private:
  std::function<Clock::time_point()> now_;
  flowcontrol::TokenBucket bucket_;
};

// The longest delay of its limiters.
class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
      : limiters_(std::move(limiters)) {}
  Clock::duration When(const std::string& key) override;
  void Forget(const std::string& key) override;
  int NumRequeues(const std::string& key) override;

 private:
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

// max(per-item 5 ms -> 1000 s, overall 10 qps / burst 100).
std::unique_ptr<RateLimiter> DefaultControllerRateLimiter();

}  // namespace trainer::workqueue
