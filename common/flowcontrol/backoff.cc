// Backoff implementation.
#include "common/flowcontrol/backoff.h"

#include <algorithm>
#include <cmath>

namespace trainer::flowcontrol {

Backoff::Backoff(BackoffPolicy policy, uint64_t seed) : policy_(policy), rng_(seed) {}

Backoff::Clock::duration Backoff::Next(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failures_ > 0 && policy_.reset_after.count() > 0 &&
      now - last_failure_ > policy_.reset_after) {
    failures_ = 0;
  }
  last_failure_ = now;
  const double initial = std::chrono::duration<double>(policy_.initial).count();
  const double max = std::chrono::duration<double>(policy_.max).count();
  // Cap the exponent so pow() never overflows however long failures go on.
  const double base = std::min(max, initial * std::pow(policy_.factor, std::min(failures_, 60)));
  ++failures_;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double delay = std::min(max, base + unit(rng_) * policy_.jitter * base);
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(delay));
}

void Backoff::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  failures_ = 0;
}

}  // namespace trainer::flowcontrol
