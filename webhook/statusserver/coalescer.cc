// Coalescer (coalescer.h).
#include "webhook/statusserver/coalescer.h"

#include "common/log/log.h"

namespace trainer::statusserver {
namespace {

std::pair<std::string_view, std::string_view> Split(std::string_view key) {
  size_t slash = key.find('/');
  return {key.substr(0, slash), key.substr(slash + 1)};
}

}  // namespace

Coalescer::Coalescer(StatusWriter* writer, CoalescerOptions options)
    : writer_(writer), options_(std::move(options)) {}

Coalescer::~Coalescer() { Stop(); }

void Coalescer::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (flusher_.joinable() || stopped_) return;
  flusher_ = std::thread([this] { Loop(); });
}

void Coalescer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  cv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  std::unique_lock<std::mutex> lock(mu_);
  FlushDue(lock, /*all=*/true);
}

size_t Coalescer::held() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [k, e] : entries_) n += e.held.has_value();
  return n;
}

Status Coalescer::WriteLocked(std::unique_lock<std::mutex>& lock, const std::string& key,
                              const TrainerStatus& status, bool held) {
  entries_[key].writing = true;
  entries_[key].last_write = Clock::now();
  lock.unlock();
  auto [ns, name] = Split(key);
  Status s = writer_->Apply(ns, name, status);
  if (options_.on_write) options_.on_write(s, held);
  lock.lock();
  Entry& e = entries_[key];
  e.writing = false;
  e.last_ok = s.ok();
  if (IsNotFound(s)) e.held.reset();  // the TrainJob is gone
  cv_.notify_all();
  return s;
}

Coalescer::Outcome Coalescer::Submit(std::string_view ns, std::string_view name,
                                     TrainerStatus status) {
  const std::string key = std::string(ns) + "/" + std::string(name);
  std::unique_lock<std::mutex> lock(mu_);
  // A report that arrives while this TrainJob's first write (or a write after a failure) is in
  // flight waits for its result instead of writing too: every rank of a job reports at once
  // when it starts, and the interval must bound that burst as well.
  cv_.wait(lock, [&] {
    const Entry& e = entries_[key];
    return stopped_ || !e.writing || e.last_ok;
  });
  Entry& e = entries_[key];
  if (!stopped_ && e.last_ok && Clock::now() < e.last_write + options_.interval) {
    const bool wake = !e.held.has_value();
    e.held = std::move(status);
    if (wake) cv_.notify_all();
    return {OkStatus(), true};
  }
  return {WriteLocked(lock, key, status, /*held=*/false), false};
}

void Coalescer::FlushDue(std::unique_lock<std::mutex>& lock, bool all) {
  for (;;) {
    const Clock::time_point now = Clock::now();
    std::string due;
    bool busy = false;  // a held report waits for a write in flight
    for (auto& [key, e] : entries_) {
      if (!e.held) continue;
      if (e.writing) {
        busy = true;
      } else if (all || now >= e.last_write + options_.interval) {
        due = key;
        break;
      }
    }
    if (due.empty()) {
      if (!(all && busy)) break;
      cv_.wait(lock);  // WriteLocked notifies when a write ends
      continue;
    }
    TrainerStatus status = std::move(*entries_[due].held);
    entries_[due].held.reset();
    Status s = WriteLocked(lock, due, status, /*held=*/true);
    if (!s.ok()) {
      log::Warn("writing a held status report", {{"trainjob", due}, {"error", s.message()}});
    }
  }
  // Forget TrainJobs quiet for an interval: memory stays bounded by the reporting ones.
  const Clock::time_point now = Clock::now();
  for (auto it = entries_.begin(); it != entries_.end();) {
    const Entry& e = it->second;
    if (!e.held && !e.writing && now >= e.last_write + options_.interval) {
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
}

void Coalescer::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopped_) {
    FlushDue(lock, /*all=*/false);
    // Wake for the next held report due, a newly held one (Submit notifies), or the next sweep.
    Clock::time_point next =
        Clock::now() + std::max<Clock::duration>(options_.interval, std::chrono::seconds(1));
    for (const auto& [key, e] : entries_) {
      if (e.held && !e.writing) next = std::min(next, e.last_write + options_.interval);
    }
    if (!stopped_) cv_.wait_until(lock, next);
  }
}

}  // namespace trainer::statusserver
