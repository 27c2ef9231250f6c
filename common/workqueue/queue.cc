// Workqueue implementation.
#include "common/workqueue/queue.h"

#include <algorithm>

namespace trainer::workqueue {
namespace {

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

Workqueue::Workqueue(WorkqueueOptions options)
    : name_(std::move(options.name)),
      limiter_(options.rate_limiter ? std::move(options.rate_limiter)
                                    : DefaultControllerRateLimiter()) {
  if (options.metrics != nullptr) metrics_ = options.metrics->NewQueueMetrics(name_);
  timer_ = std::thread([this] { TimerLoop(); });
}

Workqueue::~Workqueue() {
  ShutDown();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_timer_ = true;
  }
  timer_cv_.notify_all();
  timer_.join();
}

void Workqueue::AddLocked(const std::string& key, Clock::time_point now) {
  if (shutting_down_ || dirty_.count(key) != 0) return;
  dirty_.insert(key);
  if (processing_.count(key) != 0) return;  // re-queued by Done
  queue_.push_back(key);
  added_at_.emplace(key, now);
  if (metrics_) {
    metrics_->Add();
    metrics_->SetDepth(static_cast<int64_t>(queue_.size()));
  }
  cv_.notify_one();
}

void Workqueue::Add(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  AddLocked(key, Clock::now());
}

void Workqueue::AddAfter(const std::string& key, Clock::duration delay) {
  std::lock_guard<std::mutex> lock(mu_);
  if (shutting_down_) return;
  const auto now = Clock::now();
  if (delay <= Clock::duration::zero()) {
    AddLocked(key, now);
    return;
  }
  const auto ready = now + delay;
  auto it = waiting_.find(key);
  if (it != waiting_.end() && it->second <= ready) return;  // an earlier add already waits
  waiting_[key] = ready;
  const bool earliest = waiting_heap_.empty() || ready < waiting_heap_.top().first;
  waiting_heap_.emplace(ready, key);
  if (earliest) timer_cv_.notify_one();
}

void Workqueue::AddRateLimited(const std::string& key) {
  if (metrics_) metrics_->Retry();
  AddAfter(key, limiter_->When(key));
}

void Workqueue::Forget(const std::string& key) { limiter_->Forget(key); }

int Workqueue::NumRequeues(const std::string& key) { return limiter_->NumRequeues(key); }

std::optional<std::string> Workqueue::Get() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !queue_.empty() || shutting_down_; });
  if (queue_.empty()) return std::nullopt;
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  const auto now = Clock::now();
  processing_[key] = now;
  dirty_.erase(key);
  if (metrics_) {
    metrics_->SetDepth(static_cast<int64_t>(queue_.size()));
    if (auto it = added_at_.find(key); it != added_at_.end()) {
      metrics_->ObserveQueueDuration(Seconds(now - it->second));
    }
  }
  added_at_.erase(key);
  return key;
}

void Workqueue::Done(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = processing_.find(key);
  if (it == processing_.end()) return;
  const auto now = Clock::now();
  if (metrics_) metrics_->ObserveWorkDuration(Seconds(now - it->second));
  processing_.erase(it);
  if (dirty_.count(key) != 0) {
    queue_.push_back(key);
    added_at_.emplace(key, now);
    if (metrics_) metrics_->SetDepth(static_cast<int64_t>(queue_.size()));
    cv_.notify_one();
  }
  if (processing_.empty()) drained_cv_.notify_all();
}

size_t Workqueue::Len() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

void Workqueue::ShutDown() {
  std::lock_guard<std::mutex> lock(mu_);
  shutting_down_ = true;
  waiting_.clear();
  waiting_heap_ = {};
  cv_.notify_all();
  timer_cv_.notify_all();
}

void Workqueue::ShutDownWithDrain() {
  std::unique_lock<std::mutex> lock(mu_);
  shutting_down_ = true;
  waiting_.clear();
  waiting_heap_ = {};
  cv_.notify_all();
  timer_cv_.notify_all();
  drained_cv_.wait(lock, [this] { return processing_.empty() && queue_.empty(); });
}

bool Workqueue::ShuttingDown() const {
  std::lock_guard<std::mutex> lock(mu_);
  return shutting_down_;
}

void Workqueue::UpdateUnfinishedWork() {
  if (!metrics_) return;
  double total = 0, longest = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = Clock::now();
    for (const auto& [key, started] : processing_) {
      const double s = Seconds(now - started);
      total += s;
      longest = std::max(longest, s);
    }
  }
  metrics_->SetUnfinishedWorkSeconds(total);
  metrics_->SetLongestRunningProcessorSeconds(longest);
}

void Workqueue::TimerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  auto next_metrics = Clock::now();
  while (!stop_timer_) {
    const auto now = Clock::now();
    // Move every due key into the queue.
    while (!waiting_heap_.empty() && waiting_heap_.top().first <= now) {
      Waiting top = waiting_heap_.top();
      waiting_heap_.pop();
      auto it = waiting_.find(top.second);
      if (it == waiting_.end() || it->second != top.first) continue;  // superseded
      waiting_.erase(it);
      AddLocked(top.second, now);
    }
    auto wake = Clock::time_point::max();
    if (!waiting_heap_.empty()) wake = waiting_heap_.top().first;
    if (metrics_) {
      if (now >= next_metrics) {
        lock.unlock();
        UpdateUnfinishedWork();
        lock.lock();
        next_metrics = now + std::chrono::milliseconds(500);
      }
      wake = std::min(wake, next_metrics);
    }
    if (wake == Clock::time_point::max()) {
      timer_cv_.wait(lock);
    } else {
      timer_cv_.wait_until(lock, wake);
    }
  }
}

}  // namespace trainer::workqueue
