// Tests of common/workqueue/queue.h: de-duplication, one worker per key, delays, rate-limited
// requeues, shutdown and drain, metrics; and a many-thread stress run (meant for TSan).
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <thread>

#include "common/workqueue/queue.h"

namespace trainer::workqueue {
namespace {

using namespace std::chrono_literals;

TEST_CASE("adds of a waiting key are de-duplicated", "[workqueue]") {
  Workqueue q;
  q.Add("a");
  q.Add("a");
  q.Add("b");
  q.Add("a");
  CHECK(q.Len() == 2);
  CHECK(q.Get() == "a");
  CHECK(q.Get() == "b");
  CHECK(q.Len() == 0);
}

TEST_CASE("a key added while processing waits for Done", "[workqueue]") {
  Workqueue q;
  q.Add("a");
  REQUIRE(q.Get() == "a");
  q.Add("a");
  q.Add("a");
  CHECK(q.Len() == 0);  // not handed to a second worker
  q.Done("a");
  CHECK(q.Len() == 1);
  CHECK(q.Get() == "a");
  q.Done("a");
  CHECK(q.Len() == 0);
}

TEST_CASE("AddAfter delays and keeps the earliest deadline", "[workqueue]") {
  Workqueue q;
  const auto start = Clock::now();
  q.AddAfter("late", 3s);
  q.AddAfter("late", 100ms);  // earlier wins
  q.AddAfter("later", 10s);
  CHECK(q.Len() == 0);
  auto key = q.Get();
  CHECK(key == "late");
  const auto waited = Clock::now() - start;
  CHECK(waited >= 95ms);
  CHECK(waited < 2500ms);
  q.Done("late");
  CHECK(q.Len() == 0);
}

TEST_CASE("AddRateLimited backs off per key and Forget resets", "[workqueue]") {
  Workqueue q(
      {.name = "t", .rate_limiter = std::make_unique<ItemExponentialFailureRateLimiter>(50ms, 1s)});
  q.AddRateLimited("a");
  q.AddRateLimited("a");
  CHECK(q.NumRequeues("a") == 2);
  const auto start = Clock::now();
  CHECK(q.Get() == "a");
  CHECK(Clock::now() - start >= 45ms);
  q.Done("a");
  q.Forget("a");
  CHECK(q.NumRequeues("a") == 0);
}

TEST_CASE("shutdown hands out what is queued, then ends Get", "[workqueue]") {
  Workqueue q;
  q.Add("a");
  q.Add("b");
  q.AddAfter("delayed", 1h);
  q.ShutDown();
  q.Add("c");  // ignored
  CHECK(q.ShuttingDown());
  CHECK(q.Get() == "a");
  CHECK(q.Get() == "b");
  CHECK_FALSE(q.Get().has_value());
}

TEST_CASE("shutdown wakes blocked workers", "[workqueue]") {
  Workqueue q;
  std::atomic<int> ended{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < 4; ++i) {
    workers.emplace_back([&] {
      while (q.Get()) {
      }
      ++ended;
    });
  }
  std::this_thread::sleep_for(50ms);
  q.ShutDown();
  for (auto& w : workers) w.join();
  CHECK(ended == 4);
}

TEST_CASE("ShutDownWithDrain waits for in-flight work", "[workqueue]") {
  Workqueue q;
  std::atomic<bool> finished{false};
  q.Add("slow");
  std::thread worker([&] {
    while (auto key = q.Get()) {
      std::this_thread::sleep_for(200ms);
      finished = true;
      q.Done(*key);
    }
  });
  std::this_thread::sleep_for(20ms);  // let the worker take it
  q.ShutDownWithDrain();
  CHECK(finished);
  worker.join();
}

class RecordingMetrics final : public WorkqueueMetrics {
 public:
  std::atomic<int> adds{0}, retries{0}, queue_obs{0}, work_obs{0};
  std::atomic<int64_t> depth{0};
  std::atomic<double> longest{0};
  void Add() override { ++adds; }
  void SetDepth(int64_t d) override { depth = d; }
  void ObserveQueueDuration(double) override { ++queue_obs; }
  void ObserveWorkDuration(double) override { ++work_obs; }
  void SetUnfinishedWorkSeconds(double) override {}
  void SetLongestRunningProcessorSeconds(double s) override { longest = s; }
  void Retry() override { ++retries; }
};

class RecordingProvider final : public WorkqueueMetricsProvider {
 public:
  RecordingMetrics* last = nullptr;
  std::string name;
  std::unique_ptr<WorkqueueMetrics> NewQueueMetrics(std::string_view n) override {
    name = n;
    auto m = std::make_unique<RecordingMetrics>();
    last = m.get();
    return m;
  }
};

TEST_CASE("metrics hooks follow controller-runtime's meanings", "[workqueue]") {
  RecordingProvider provider;
  Workqueue q({.name = "trainjob", .metrics = &provider});
  REQUIRE(provider.name == "trainjob");
  RecordingMetrics& m = *provider.last;
  q.Add("a");
  q.Add("a");
  q.Add("b");
  CHECK(m.adds == 2);
  CHECK(m.depth == 2);
  auto key = q.Get();
  CHECK(m.depth == 1);
  CHECK(m.queue_obs == 1);
  // The timer refreshes unfinished work every 500 ms.
  const auto deadline = Clock::now() + 5s;
  while (m.longest < 0.4 && Clock::now() < deadline) std::this_thread::sleep_for(10ms);
  CHECK(m.longest >= 0.4);
  q.Done(*key);
  CHECK(m.work_obs == 1);
  q.AddRateLimited("c");
  CHECK(m.retries == 1);
  CHECK(kAddsMetric == "workqueue_adds_total");
  CHECK(kLongestRunningProcessorMetric == "workqueue_longest_running_processor_seconds");
}

TEST_CASE("many producers and workers: no key in two workers, every add seen",
          "[workqueue][stress]") {
  Workqueue q({.name = "stress",
               .rate_limiter = std::make_unique<ItemExponentialFailureRateLimiter>(1ms, 5ms)});
  constexpr int kKeys = 64, kProducers = 4, kWorkers = 8, kAddsPerProducer = 5000;
  std::vector<std::atomic<int>> in_flight(kKeys);
  std::vector<std::atomic<int>> last_added(kKeys), last_seen(kKeys);  // sequence numbers
  std::atomic<int> violations{0}, processed{0}, seq{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      std::mt19937 rng(w);
      while (auto key = q.Get()) {
        const int k = std::stoi(*key);
        if (in_flight[k].fetch_add(1) != 0) ++violations;
        // Everything added before we took the key is covered by this processing.
        last_seen[k] = std::max(last_seen[k].load(), seq.load());
        if (rng() % 16 == 0) std::this_thread::yield();
        in_flight[k].fetch_sub(1);
        ++processed;
        if (rng() % 50 == 0) {
          q.AddRateLimited(*key);
        } else {
          q.Forget(*key);
        }
        q.Done(*key);
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      std::mt19937 rng(100 + p);
      for (int i = 0; i < kAddsPerProducer; ++i) {
        const int k = static_cast<int>(rng() % kKeys);
        last_added[k] = ++seq;
        q.Add(std::to_string(k));
      }
    });
  }
  for (auto& t : producers) t.join();
  // Wait until every key's last add has been processed.
  const auto deadline = Clock::now() + 20s;
  auto converged = [&] {
    for (int k = 0; k < kKeys; ++k) {
      if (last_seen[k].load() < last_added[k].load()) return false;
    }
    return true;
  };
  while (!converged() && Clock::now() < deadline) std::this_thread::sleep_for(5ms);
  CHECK(converged());
  q.ShutDownWithDrain();
  for (auto& t : workers) t.join();
  CHECK(violations == 0);
  CHECK(processed > 0);
}

}  // namespace
}  // namespace trainer::workqueue
