// Coalescer (webhook/statusserver/coalescer.h): one write per TrainJob per interval, the latest
// report wins, nothing held for a TrainJob not known to exist, nothing lost at Stop.
#include "webhook/statusserver/coalescer.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "tests/unit/webhook/statusserver/fakes.h"

namespace trainer::statusserver {
namespace {

using namespace std::chrono_literals;

TrainerStatus Progress(int32_t p) {
  TrainerStatus s;
  s.progress_percentage = p;
  s.last_updated_time = *ParseRfc3339("2026-01-01T00:00:00Z");
  return s;
}

bool WaitFor(const std::function<bool()>& cond, std::chrono::milliseconds limit = 5000ms) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

TEST_CASE("one write per interval per TrainJob; the latest report wins", "[coalescer]") {
  testing::FakeWriter w;
  Coalescer c(&w, {.interval = 200ms});
  c.Start();
  CHECK_FALSE(c.Submit("ns", "a", Progress(1)).deferred);  // written at once
  for (int p = 2; p <= 20; ++p) CHECK(c.Submit("ns", "a", Progress(p)).deferred);
  CHECK_FALSE(c.Submit("ns", "b", Progress(7)).deferred);  // another TrainJob: its own interval
  CHECK(w.count() == 2);
  REQUIRE(WaitFor([&] { return w.count() == 3; }));
  std::this_thread::sleep_for(50ms);
  CHECK(w.count() == 3);
  std::lock_guard<std::mutex> lock(w.mu);
  CHECK(w.calls[2].key == "ns/a");
  CHECK(*w.calls[2].status.progress_percentage == 20);
}

TEST_CASE("nothing is held for a TrainJob whose last write failed", "[coalescer]") {
  testing::FakeWriter w;
  Coalescer c(&w, {.interval = 1h});
  w.next = NotFoundError("not found");
  for (int i = 0; i < 3; ++i) {
    Coalescer::Outcome o = c.Submit("ns", "missing", Progress(1));
    CHECK_FALSE(o.deferred);
    CHECK(IsNotFound(o.status));
  }
  CHECK(w.count() == 3);
  w.next = OkStatus();
  CHECK_FALSE(c.Submit("ns", "missing", Progress(1)).deferred);  // created meanwhile
  CHECK(c.Submit("ns", "missing", Progress(2)).deferred);
}

TEST_CASE("Stop writes what is held, then writes at once", "[coalescer]") {
  testing::FakeWriter w;
  Coalescer c(&w, {.interval = 1h});
  c.Start();
  c.Submit("ns", "a", Progress(1));
  CHECK(c.Submit("ns", "a", Progress(2)).deferred);
  CHECK(c.held() == 1);
  c.Stop();
  CHECK(w.count() == 2);
  CHECK(c.held() == 0);
  CHECK_FALSE(c.Submit("ns", "a", Progress(3)).deferred);
  CHECK(w.count() == 3);
}

TEST_CASE("many reporters of one TrainJob: writes bounded by the interval", "[coalescer]") {
  testing::FakeWriter w;
  std::atomic<int> flushed{0};
  Coalescer c(&w, {.interval = 100ms, .on_write = [&](const Status&, bool held) {
                     if (held) ++flushed;
                   }});
  c.Start();
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> ranks;
  for (int r = 0; r < 16; ++r) {
    ranks.emplace_back([&, r] {
      for (int i = 0; i < 50; ++i) {
        c.Submit("ns", "big", Progress(r));
        std::this_thread::sleep_for(10ms);
      }
    });
  }
  for (auto& t : ranks) t.join();
  c.Stop();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // 800 reports in ~0.5 s; at most one write per 100 ms (plus the first and the final flush).
  CHECK(w.count() <= static_cast<size_t>(seconds / 0.1) + 3);
  CHECK(w.count() >= 2);
  CHECK(flushed >= 1);
}

TEST_CASE("reports arriving during a TrainJob's first write wait for it, then are held",
          "[coalescer]") {
  testing::FakeWriter w;
  w.hold = true;
  Coalescer c(&w, {.interval = 1h});
  c.Start();
  std::atomic<bool> first_deferred{true};
  std::thread first([&] { first_deferred = c.Submit("ns", "a", Progress(1)).deferred; });
  REQUIRE(WaitFor([&] { return w.count() == 1; }));
  std::atomic<int> deferred{0};
  std::vector<std::thread> ranks;
  for (int r = 0; r < 8; ++r) {
    ranks.emplace_back([&, r] { deferred += c.Submit("ns", "a", Progress(10 + r)).deferred; });
  }
  std::this_thread::sleep_for(50ms);  // the ranks reach Submit while the write is in flight
  w.Release();
  first.join();
  for (auto& t : ranks) t.join();
  CHECK_FALSE(first_deferred);
  CHECK(deferred == 8);
  CHECK(w.count() == 1);
  CHECK(w.max_in_flight == 1);
  c.Stop();  // writes the latest held report
  CHECK(w.count() == 2);
}

TEST_CASE("after a failed first write, waiting reports write one at a time", "[coalescer]") {
  testing::FakeWriter w;
  w.next = NotFoundError("not found");
  Coalescer c(&w, {.interval = 1h});
  std::vector<std::thread> ranks;
  std::atomic<int> not_found{0};
  for (int r = 0; r < 8; ++r) {
    ranks.emplace_back(
        [&] { not_found += IsNotFound(c.Submit("ns", "gone", Progress(1)).status); });
  }
  for (auto& t : ranks) t.join();
  CHECK(not_found == 8);  // each report gets the apiserver's answer
  CHECK(w.count() == 8);
  CHECK(w.max_in_flight == 1);
}

}  // namespace
}  // namespace trainer::statusserver
