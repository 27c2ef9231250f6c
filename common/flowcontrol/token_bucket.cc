// TokenBucket implementation: refill lazily from the elapsed time on every reservation.
#include "common/flowcontrol/token_bucket.h"

#include <algorithm>
#include <condition_variable>

namespace trainer::flowcontrol {

TokenBucket::TokenBucket(double qps, int burst, Clock::time_point now)
    : qps_(qps), burst_(std::max(burst, 1)), tokens_(std::max(burst, 1)), last_(now) {}

TokenBucket::Clock::duration TokenBucket::Reserve(Clock::time_point now) {
  if (qps_ <= 0) {
    return Clock::duration::zero();
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (now > last_) {
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min<double>(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  tokens_ -= 1;
  if (tokens_ >= 0) {
    return Clock::duration::zero();
  }
  // `last_` may lie ahead of `now` when the caller's clock reading is older than another's.
  const auto wait = std::chrono::duration<double>(-tokens_ / qps_) + (last_ - now);
  return std::chrono::duration_cast<Clock::duration>(wait);
}

bool TokenBucket::Wait(std::stop_token stop) {
  const auto delay = Reserve(Clock::now());
  if (delay <= Clock::duration::zero()) {
    return true;
  }
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock<std::mutex> lock(mu);
  cv.wait_for(lock, stop, delay, [] { return false; });  // wakes early only on stop
  return !stop.stop_requested();
}

}  // namespace trainer::flowcontrol
