// The worker loop of a controller.
#include "controller/worker_pool.h"

#include <exception>

#include "common/kube/meta.h"
#include "common/log/log.h"

namespace trainer::controller {
namespace {

constexpr char kFailureMessage[] = "Reconciler error";

}  // namespace

std::optional<FailureLogLimiter::Line> FailureLogLimiter::Failed(const std::string& key,
                                                                 Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, first] = keys_.try_emplace(key);
  KeyState& k = it->second;
  ++k.unlogged;
  if (!first && now - k.last_line < options_.per_key) return std::nullopt;
  if (now - window_start_ >= std::chrono::seconds(1)) {
    window_start_ = now;
    lines_in_window_ = 0;
  }
  if (lines_in_window_ >= options_.per_second) {
    ++dropped_;
    // Count it as logged for this key, so the key is not retried for a line every failure.
    k.last_line = now;
    return std::nullopt;
  }
  ++lines_in_window_;
  Line line{.failures = k.unlogged, .dropped = dropped_};
  k.last_line = now;
  k.unlogged = 0;
  dropped_ = 0;
  return line;
}

void FailureLogLimiter::Succeeded(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  keys_.erase(key);
}

WorkerPool::WorkerPool(WorkerPoolOptions options, metrics::Registry& registry,
                       workqueue::WorkqueueMetricsProvider* queue_metrics)
    : options_(std::move(options)),
      metrics_(registry, options_.name, options_.workers),
      queue_(workqueue::WorkqueueOptions{.name = options_.name, .metrics = queue_metrics}) {}

WorkerPool::~WorkerPool() { Stop(); }

void WorkerPool::AddBackground(const std::string& key) {
  {
    std::lock_guard<std::mutex> lock(backlog_mu_);
    if (!backlog_keys_.insert(key).second) return;
    backlog_.push_back(key);
  }
  backlog_cv_.notify_one();
}

void WorkerPool::HoldBackground() {
  std::lock_guard<std::mutex> lock(backlog_mu_);
  backlog_held_ = true;
}

void WorkerPool::ReleaseBackground() {
  {
    std::lock_guard<std::mutex> lock(backlog_mu_);
    backlog_held_ = false;
  }
  backlog_cv_.notify_one();
}

void WorkerPool::Feed(std::stop_token stop) {
  const size_t low_water = LowWater();
  while (!stop.stop_requested()) {
    std::string key;
    {
      std::unique_lock<std::mutex> lock(backlog_mu_);
      backlog_cv_.wait(lock, stop, [this] { return !backlog_held_ && !backlog_.empty(); });
      if (stop.stop_requested()) return;
      key = std::move(backlog_.front());
      backlog_.pop_front();
      backlog_keys_.erase(key);
    }
    // Wait for room: the queue then never holds more than ~workers backlog keys ahead of a
    // live event. Once full, wait until the workers took half of them and refill in a burst, so
    // the feeder wakes once per few keys rather than once per key (each wake is a context switch
    // of its own). Woken by Work (no polling: a 1 ms poll cost ~6% of the controller's CPU while
    // a first list drained); the timeout only bounds a missed wake-up.
    {
      std::unique_lock<std::mutex> lock(room_mu_);
      if (queue_.Len() >= low_water) {
        while (queue_.Len() > RefillAt() && !stop.stop_requested()) {
          room_cv_.wait_for(lock, stop, std::chrono::milliseconds(100),
                            [&] { return queue_.Len() <= RefillAt(); });
        }
      }
    }
    if (stop.stop_requested()) return;
    queue_.Add(key);
  }
}

void WorkerPool::Start() {
  feeder_ = std::jthread([this](std::stop_token stop) { Feed(stop); });
  for (int i = 0; i < options_.workers; ++i) {
    threads_.emplace_back([this] { Work(); });
  }
}

void WorkerPool::Stop() {
  stopping_ = true;
  feeder_.request_stop();
  if (feeder_.joinable()) feeder_.join();
  queue_.ShutDown();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void WorkerPool::Work() {
  while (std::optional<std::string> key = queue_.Get()) {
    if (queue_.Len() <= RefillAt()) {
      // The queue shrank to the refill mark: wake the feeder. Taking room_mu_ orders this after
      // its Len check.
      { std::lock_guard<std::mutex> lock(room_mu_); }
      room_cv_.notify_one();
    }
    if (stopping_) {
      // Shutting down: queued keys are left for the next leader (level-triggered).
      queue_.Done(*key);
      continue;
    }
    metrics_.WorkerStarted();
    auto start = std::chrono::steady_clock::now();
    ReconcileResult result;
    try {
      result = options_.reconcile(*key);
    } catch (const std::exception& e) {
      metrics_.Panic();
      result.error = InternalError(std::string("reconcile panicked: ") + e.what());
    } catch (...) {
      metrics_.Panic();
      result.error = InternalError("reconcile panicked");
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    metrics::ReconcileMetrics::Result kind = metrics::ReconcileMetrics::Result::kSuccess;
    if (!result.error.ok()) {
      kind = metrics::ReconcileMetrics::Result::kError;
      LogFailure(*key, result.error);
      queue_.AddRateLimited(*key);
    } else if (result.requeue_after) {
      kind = metrics::ReconcileMetrics::Result::kRequeueAfter;
      failure_log_.Succeeded(*key);
      queue_.Forget(*key);
      queue_.AddAfter(*key, *result.requeue_after);
    } else {
      failure_log_.Succeeded(*key);
      queue_.Forget(*key);
    }
    metrics_.Observe(kind, seconds);
    metrics_.WorkerFinished();
    queue_.Done(*key);
    ++processed_;
  }
}

// controller-runtime's "Reconciler error" record (pkg/internal/controller/controller.go,
// reconcileHandler): its message and keys, so alerts written for upstream's logs match ours; the
// nested object key (e.g. "TrainJob":{"name":...}) and reconcileID are left out.
void WorkerPool::LogFailure(const std::string& key, const Status& error) {
  std::optional<FailureLogLimiter::Line> line =
      failure_log_.Failed(key, FailureLogLimiter::Clock::now());
  auto [ns, name] = kube::SplitObjectKey(key);
  if (!line) {
    log::Debug(1, kFailureMessage,
               {{"controller", options_.name}, {"controllerGroup", options_.group},
                {"controllerKind", options_.kind}, {"namespace", ns}, {"name", name},
                {"error", error.message()}});
    return;
  }
  if (line->dropped > 0) {
    // Kept out of the failure's own record, so that record keeps upstream's shape.
    log::Warn("failed reconciles of other keys were not logged",
              {{"controller", options_.name},
               {"unlogged_failures_of_other_keys", std::to_string(line->dropped)}});
  }
  log::Error(kFailureMessage, {{"controller", options_.name},
                               {"controllerGroup", options_.group},
                               {"controllerKind", options_.kind},
                               {"namespace", ns},
                               {"name", name},
                               {"error", error.message()},
                               {"failures", std::to_string(line->failures)}});
}

}  // namespace trainer::controller
