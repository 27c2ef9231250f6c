// TokenBucket: the qps/burst limiter shared by the REST client (client-side rate limit) and the
// workqueue (the overall bucket of the default controller rate limiter). Mirrors
// k8s.io/client-go/util/flowcontrol's token bucket and golang.org/x/time/rate's Reserve: a
// reservation always succeeds and says how long the caller must wait, so waiting callers are
// served in order and a burst of reservations spreads out at exactly `qps`.
//
//   TokenBucket bucket(/*qps=*/10, /*burst=*/100);
//   auto delay = bucket.Reserve(TokenBucket::Clock::now());   // 0 while tokens remain
//   bucket.Wait();                                            // or block for one token
#pragma once

#include <chrono>
#include <mutex>
#include <stop_token>

namespace trainer::flowcontrol {

class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;

  // A bucket that starts full. qps <= 0 means unlimited: Reserve() always returns 0.
  TokenBucket(double qps, int burst, Clock::time_point now = Clock::now());

  // Takes one token and returns how long after `now` it becomes available (zero if it already
  // is). Tokens may go negative: later reservations queue behind earlier ones.
  Clock::duration Reserve(Clock::time_point now);

  // Blocks until a token is available. Returns false (without waiting it out) if `stop` is
  // requested first; the reserved token is then lost, which only makes the bucket stricter.
  bool Wait(std::stop_token stop = {});

  double qps() const { return qps_; }
  int burst() const { return burst_; }

 private:
  const double qps_;
  const int burst_;
  std::mutex mu_;
  double tokens_;
  Clock::time_point last_;
};

}  // namespace trainer::flowcontrol
