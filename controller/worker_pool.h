// WorkerPool: controller-runtime's controller loop for one reconciler: a workqueue of
// "ns/name" keys, N workers, and the result rules of sigs.k8s.io/controller-runtime
// (pkg/internal/controller/controller.go):
//   error          -> AddRateLimited (per-key exponential backoff), result "error"
//   requeue_after  -> Forget + AddAfter, result "requeue_after"
//   success        -> Forget, result "success"
// A reconcile that throws is caught, counted as a panic and retried like an error. Stop()
// stops handing out keys, lets in-flight reconciles finish and joins the workers.
//
//   WorkerPool pool({.name = "trainjob_controller", .workers = 5,
//                    .reconcile = [&](const std::string& key) { return r.Reconcile(...); }},
//                   &registry, &queue_metrics);
//   pool.Start();  pool.Add("ns/tj");  ...  pool.Stop();
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "common/metrics/metrics.h"
#include "common/workqueue/queue.h"
#include "controller/metrics.h"
#include "controller/reconcile.h"

namespace trainer::controller {

struct WorkerPoolOptions {
  std::string name;  // controller name: metrics label and queue name
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

  const WorkerPoolOptions options_;
  ReconcileMetrics metrics_;
  workqueue::Workqueue queue_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> processed_{0};
  std::vector<std::thread> threads_;

  std::mutex backlog_mu_;
  std::condition_variable_any backlog_cv_;
  std::deque<std::string> backlog_;
  std::unordered_set<std::string> backlog_keys_;
  // The feeder sleeps here until a worker takes a key (the only way the queue shrinks).
  std::mutex room_mu_;
  std::condition_variable_any room_cv_;
  std::jthread feeder_;
};

}  // namespace trainer::controller
