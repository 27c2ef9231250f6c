// Workqueue: the key-based queue controllers are built on, with the rules of client-go's
// workqueue (util/workqueue: queue.go, delaying_queue.go, rate_limiting_queue.go):
//  - de-duplicating: a key added many times before a worker takes it is processed once;
//  - never the same key in two workers at once: a key added while it is being processed is held
//    back ("dirty") and queued again when the worker calls Done;
//  - delayed adds (AddAfter) on one timer thread, earliest deadline kept per key;
//  - rate-limited requeues (AddRateLimited) through a RateLimiter, by default per-item
//    exponential 5 ms -> 1000 s combined with an overall 10 qps / 100 token bucket;
//  - shutdown: ShutDown stops accepting adds and lets workers drain what is queued;
//    ShutDownWithDrain also waits until every handed-out key is Done.
// Thread-safe; blocking waits use condition variables (no polling).
//
//   Workqueue q({.name = "trainjob"});
//   q.Add("ns/name");
//   while (auto key = q.Get()) {            // nullopt once shut down and drained
//     Status s = Reconcile(*key);
//     if (s.ok()) q.Forget(*key); else q.AddRateLimited(*key);
//     q.Done(*key);
//   }
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/workqueue/metrics.h"
#include "common/workqueue/rate_limiter.h"

namespace trainer::workqueue {

struct WorkqueueOptions {
  std::string name;                             // metrics label
  std::unique_ptr<RateLimiter> rate_limiter;    // null: DefaultControllerRateLimiter()
  WorkqueueMetricsProvider* metrics = nullptr;  // optional; must outlive the queue
};

class Workqueue {
 public:
  explicit Workqueue(WorkqueueOptions options = {});
  ~Workqueue();  // ShutDown() and stop the timer thread
  Workqueue(const Workqueue&) = delete;
  Workqueue& operator=(const Workqueue&) = delete;

  void Add(const std::string& key);
  // Adds `key` once `delay` has passed (at once if delay <= 0).
  void AddAfter(const std::string& key, Clock::duration delay);
  // AddAfter(key, rate_limiter.When(key)): a failed key, retried with backoff.
  void AddRateLimited(const std::string& key);
  // Clears the failure history of `key` in the rate limiter (call after a success).
  void Forget(const std::string& key);
  int NumRequeues(const std::string& key);

  // Blocks until a key is available and marks it processing. Returns nullopt once the queue is
  // shut down and empty.
  std::optional<std::string> Get();
  // Marks `key` done; if it was added meanwhile, it is queued again.
  void Done(const std::string& key);

  // Keys waiting to be handed out (not counting delayed or processing ones).
  size_t Len() const;
  void ShutDown();
  // ShutDown, then wait until workers have taken every queued key and marked it Done (so call
  // it with workers still running).
  void ShutDownWithDrain();
  bool ShuttingDown() const;

  // Refreshes workqueue_unfinished_work_seconds and _longest_running_processor_seconds
  // (the timer thread calls it every 500 ms when metrics are set).
  void UpdateUnfinishedWork();

 private:
  void AddLocked(const std::string& key, Clock::time_point now);  // mu_ held
  void TimerLoop();

  const std::string name_;
  std::unique_ptr<RateLimiter> limiter_;
  std::unique_ptr<WorkqueueMetrics> metrics_;

  mutable std::mutex mu_;
  std::condition_variable cv_;          // Get waiters
  std::condition_variable drained_cv_;  // ShutDownWithDrain waiters
  std::condition_variable timer_cv_;    // timer thread
  std::deque<std::string> queue_;
  std::unordered_set<std::string> dirty_;
  std::unordered_map<std::string, Clock::time_point> processing_;  // key -> started
  std::unordered_map<std::string, Clock::time_point> added_at_;    // key -> first queued
  bool shutting_down_ = false;

  // Delayed keys: ready time per key, plus a min-heap of (ready, key) with stale entries
  // skipped when popped.
  using Waiting = std::pair<Clock::time_point, std::string>;
  std::priority_queue<Waiting, std::vector<Waiting>, std::greater<>> waiting_heap_;
  std::unordered_map<std::string, Clock::time_point> waiting_;
  bool stop_timer_ = false;
  std::thread timer_;
};

}  // namespace trainer::workqueue
