// Rate limiter implementations.
#include "common/workqueue/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace trainer::workqueue {

Clock::duration ItemExponentialFailureRateLimiter::When(const std::string& key) {
  int exp;
  {
    std::lock_guard<std::mutex> lock(mu_);
    exp = failures_[key]++;
  }
  // Compute in floating point so huge exponents saturate at max instead of overflowing.
  const double delay =
      std::chrono::duration<double>(base_).count() * std::pow(2.0, std::min(exp, 1000));
  const double max = std::chrono::duration<double>(max_).count();
  if (delay >= max) return max_;
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(delay));
}

void ItemExponentialFailureRateLimiter::Forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  failures_.erase(key);
}

int ItemExponentialFailureRateLimiter::NumRequeues(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

Clock::duration MaxOfRateLimiter::When(const std::string& key) {
  Clock::duration longest = Clock::duration::zero();
  for (auto& l : limiters_) longest = std::max(longest, l->When(key));
  return longest;
}

void MaxOfRateLimiter::Forget(const std::string& key) {
  for (auto& l : limiters_) l->Forget(key);
}

int MaxOfRateLimiter::NumRequeues(const std::string& key) {
  int most = 0;
  for (auto& l : limiters_) most = std::max(most, l->NumRequeues(key));
  return most;
}

std::unique_ptr<RateLimiter> DefaultControllerRateLimiter() {
  std::vector<std::unique_ptr<RateLimiter>> limiters;
  limiters.push_back(std::make_unique<ItemExponentialFailureRateLimiter>(
      std::chrono::milliseconds(5), std::chrono::seconds(1000)));
  limiters.push_back(std::make_unique<BucketRateLimiter>(10, 100));
  return std::make_unique<MaxOfRateLimiter>(std::move(limiters));
}

}  // namespace trainer::workqueue
