// WorkerPool: controller-runtime's controller loop for one reconciler: a workqueue of
// "ns/name" keys, N workers, and the result rules of sigs.k8s.io/controller-runtime
// (pkg/internal/controller/controller.go):
//   error          -> AddRateLimited (per-key exponential backoff), result "error"
//   requeue_after  -> Forget + AddAfter, result "requeue_after"
//   success        -> Forget, result "success"
// A reconcile that throws is caught, counted as a panic and retried like an error. A failure is
// logged at the default level (as controller-runtime's "Reconciler error"), limited by a
// FailureLogLimiter; every failure is logged at -v=1. Stop() stops handing out keys, lets
// in-flight reconciles finish and joins the workers.
//
//   WorkerPool pool({.name = "trainjob_controller", .workers = 5,
//                    .reconcile = [&](const std::string& key) { return r.Reconcile(...); }},
//                   &registry, &queue_metrics);
//   pool.Start();  pool.Add("ns/tj");  ...  pool.Stop();
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/metrics/metrics.h"
#include "common/workqueue/queue.h"
#include "controller/metrics.h"
#include "controller/reconcile.h"

namespace trainer::controller {

// Decides which failed reconciles are logged at the default level, so that a failure is visible
// without -v, yet neither a key failing in a loop (the workqueue retries it after 5 ms, 10 ms,
// ...) nor thousands failing together (an apiserver outage) floods the log:
//  - a key's first failure is logged, then at most one per `per_key` while it keeps failing (the
//    line says how many failures it stands for); a success resets the key;
//  - at most `per_second` lines a second in all; the lines this drops are counted, and the next
//    line logged reports the count.
class FailureLogLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    Clock::duration per_key = std::chrono::seconds(30);
    int per_second = 10;
  };
  // What to write for a failure that is to be logged.
  struct Line {
    int64_t failures = 1;  // this key's failures since its last line, this one included
    int64_t dropped = 0;   // lines of any key dropped by the per-second limit since the last line
  };

  explicit FailureLogLimiter(Options options) : options_(options) {}
  FailureLogLimiter() : FailureLogLimiter(Options{}) {}

  std::optional<Line> Failed(const std::string& key, Clock::time_point now);
  void Succeeded(const std::string& key);

 private:
  struct KeyState {
    Clock::time_point last_line;
    int64_t unlogged = 0;
  };
  const Options options_;
  std::mutex mu_;
  std::unordered_map<std::string, KeyState> keys_;
  Clock::time_point window_start_{};
  int lines_in_window_ = 0;
  int64_t dropped_ = 0;
};

struct WorkerPoolOptions {
  std::string name;  // controller name: metrics label and queue name
  // The reconciled kind's group and kind: controllerGroup and controllerKind in the failure log.
  std::string group;
  std::string kind;
  int workers = 1;
  std::function<ReconcileResult(const std::string& key)> reconcile;
};

class WorkerPool {
 public:
  WorkerPool(WorkerPoolOptions options, metrics::Registry& registry,
             workqueue::WorkqueueMetricsProvider* queue_metrics);
  ~WorkerPool();

  void Add(const std::string& key) { queue_.Add(key); }
  // A low-priority add: the key waits in a backlog that feeds the queue only while the queue is
  // nearly empty (used for the keys of a cache's first list, so live events go first).
  void AddBackground(const std::string& key);
  // While held, background keys wait in the backlog and only live keys are reconciled (the
  // manager holds it until every cache has synced). Independent of Start and Stop.
  void HoldBackground();
  void ReleaseBackground();
  void AddAfter(const std::string& key, workqueue::Clock::duration d) { queue_.AddAfter(key, d); }

  void Start();
  // Idempotent.
  void Stop();

  size_t Len() const { return queue_.Len(); }
  // Reconciles finished (any result), for tests and benchmarks.
  uint64_t processed() const { return processed_.load(); }

 private:
  void Work();
  void Feed(std::stop_token stop);
  // The backlog fills the queue up to LowWater keys, in bursts that start once it is down to
  // RefillAt.
  size_t LowWater() const { return static_cast<size_t>(options_.workers); }
  size_t RefillAt() const { return LowWater() / 2; }

  void LogFailure(const std::string& key, const Status& error);

  const WorkerPoolOptions options_;
  metrics::ReconcileMetrics metrics_;
  FailureLogLimiter failure_log_;
  workqueue::Workqueue queue_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> processed_{0};
  std::vector<std::thread> threads_;

  std::mutex backlog_mu_;
  std::condition_variable_any backlog_cv_;
  std::deque<std::string> backlog_;
  std::unordered_set<std::string> backlog_keys_;
  bool backlog_held_ = false;
  // The feeder sleeps here until a worker takes a key (the only way the queue shrinks).
  std::mutex room_mu_;
  std::condition_variable_any room_cv_;
  std::jthread feeder_;
};

}  // namespace trainer::controller
