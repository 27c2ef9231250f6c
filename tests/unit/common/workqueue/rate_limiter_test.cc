// Tests of common/workqueue/rate_limiter.h: the default controller limiter's arithmetic.
#include "common/workqueue/rate_limiter.h"

#include <catch2/catch.hpp>

namespace trainer::workqueue {
namespace {

using namespace std::chrono;

double Ms(Clock::duration d) { return duration<double, std::milli>(d).count(); }

TEST_CASE("per-item exponential backoff doubles from 5ms and caps at 1000s", "[workqueue]") {
  ItemExponentialFailureRateLimiter l(milliseconds(5), seconds(1000));
  CHECK(Ms(l.When("a")) == Approx(5));
  CHECK(Ms(l.When("a")) == Approx(10));
  CHECK(Ms(l.When("a")) == Approx(20));
  CHECK(Ms(l.When("b")) == Approx(5));  // per key
  CHECK(l.NumRequeues("a") == 3);
  for (int i = 0; i < 30; ++i) l.When("a");
  CHECK(Ms(l.When("a")) == Approx(1000000));
  for (int i = 0; i < 5000; ++i) l.When("a");  // no overflow however long it fails
  CHECK(Ms(l.When("a")) == Approx(1000000));
  l.Forget("a");
  CHECK(l.NumRequeues("a") == 0);
  CHECK(Ms(l.When("a")) == Approx(5));
}

TEST_CASE("the overall bucket allows 100 at once then 10 per second", "[workqueue]") {
  Clock::time_point now{};
  BucketRateLimiter l(10, 100, [&] { return now; });
  for (int i = 0; i < 100; ++i) REQUIRE(Ms(l.When("k" + std::to_string(i))) == 0);
  CHECK(Ms(l.When("x")) == Approx(100));
  CHECK(Ms(l.When("y")) == Approx(200));
  now += seconds(100);
  CHECK(Ms(l.When("z")) == 0);
}

TEST_CASE("the default controller limiter is the max of both", "[workqueue]") {
  auto l = DefaultControllerRateLimiter();
  CHECK(Ms(l->When("a")) == Approx(5).margin(0.5));
  CHECK(Ms(l->When("a")) == Approx(10).margin(0.5));
  CHECK(l->NumRequeues("a") == 2);
  // Exhaust the bucket: from the 101st requeue on, the bucket's delay dominates for new keys.
  for (int i = 0; i < 120; ++i) l->When("k" + std::to_string(i));
  CHECK(Ms(l->When("fresh")) > 100);
  l->Forget("a");
  CHECK(l->NumRequeues("a") == 0);
}

}  // namespace
}  // namespace trainer::workqueue
