// Tests of common/flowcontrol: token bucket arithmetic and backoff growth, reset and jitter.
#include <catch2/catch.hpp>

#include "common/flowcontrol/backoff.h"
#include "common/flowcontrol/token_bucket.h"

namespace trainer::flowcontrol {
namespace {

using namespace std::chrono;
using Clock = TokenBucket::Clock;

double Secs(Clock::duration d) { return duration<double>(d).count(); }

TEST_CASE("token bucket serves the burst at once, then qps", "[flowcontrol]") {
  const Clock::time_point t0{};
  TokenBucket b(10, 3, t0);
  CHECK(Secs(b.Reserve(t0)) == 0);
  CHECK(Secs(b.Reserve(t0)) == 0);
  CHECK(Secs(b.Reserve(t0)) == 0);
  CHECK(Secs(b.Reserve(t0)) == Approx(0.1));
  CHECK(Secs(b.Reserve(t0)) == Approx(0.2));  // queued behind the previous reservation
  // After a second the bucket refilled (capped at burst).
  const auto t1 = t0 + seconds(10);
  CHECK(Secs(b.Reserve(t1)) == 0);
  CHECK(Secs(b.Reserve(t1)) == 0);
  CHECK(Secs(b.Reserve(t1)) == 0);
  CHECK(Secs(b.Reserve(t1)) == Approx(0.1));
}

TEST_CASE("a bucket with qps <= 0 never delays", "[flowcontrol]") {
  TokenBucket b(0, 0);
  for (int i = 0; i < 1000; ++i) REQUIRE(Secs(b.Reserve(Clock::now())) == 0);
}

TEST_CASE("bucket wait can be stopped", "[flowcontrol]") {
  TokenBucket b(0.001, 1);
  REQUIRE(b.Wait());
  std::stop_source src;
  src.request_stop();
  const auto start = Clock::now();
  CHECK_FALSE(b.Wait(src.get_token()));
  CHECK(Clock::now() - start < seconds(1));
}

TEST_CASE("reflector backoff grows 800ms -> 30s with jitter and resets", "[flowcontrol]") {
  Backoff b(BackoffPolicy::Reflector(), 42);
  Clock::time_point t{};
  double prev_base = 0.8;
  for (int i = 0; i < 12; ++i) {
    const double d = Secs(b.Next(t));
    const double base = std::min(30.0, 0.8 * std::pow(2.0, i));
    INFO("failure " << i);
    CHECK(d >= base - 1e-9);
    CHECK(d <= std::min(30.0, 2 * base) + 1e-9);
    prev_base = base;
    t += seconds(1);
  }
  CHECK(prev_base == 30.0);
  CHECK(Secs(b.Next(t)) == Approx(30.0));
  // Three minutes without failure: back to the start.
  t += minutes(3);
  const double after_reset = Secs(b.Next(t));
  CHECK(after_reset >= 0.8);
  CHECK(after_reset <= 1.6);
}

TEST_CASE("request backoff jitters within bounds", "[flowcontrol]") {
  Backoff b(BackoffPolicy::Request(), 7);
  const double first = Secs(b.Next(Clock::now()));
  CHECK(first >= 0.25);
  CHECK(first <= 0.375);
}

}  // namespace
}  // namespace trainer::flowcontrol
