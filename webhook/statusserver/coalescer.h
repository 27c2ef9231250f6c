// Coalescer: at most one status write per TrainJob per interval (--status-write-interval, beyond
// upstream, off by default). Every rank of a large job may report each second; with an interval
// the latest report of a TrainJob wins and reaches the apiserver once per interval.
//
// The rule that keeps it honest (a reporter is never told 200 for a report the apiserver would
// refuse): a report is held back only when
//   - it passed the CRD's rules for status.trainerStatus (the caller checks ValidateAsCrd; an
//     invalid report is written at once and gets the apiserver's own answer), and
//   - this TrainJob's last write succeeded less than an interval ago (so it existed then).
// Otherwise the report is written now and its answer is the apiserver's; while such a write is
// in flight, further reports of that TrainJob wait for its result (one write in flight per
// TrainJob, so a burst of first reports is one write, not one per reporter). Held reports are
// written when the interval since the last write ends, by one background thread; a failure then
// is logged and counted (its reporter already has its 200, and the next report retries).
// Stop() writes what is still held, so a graceful stop loses nothing; after Stop every report
// is written at once.
//
//   Coalescer c(&writer, {.interval = 5s});
//   c.Start();
//   Coalescer::Outcome o = c.Submit("ns", "job", status);   // o.deferred: answered 200 now
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "common/status/status.h"
#include "webhook/statusserver/request.h"
#include "webhook/statusserver/writer.h"

namespace trainer::statusserver {

struct CoalescerOptions {
  std::chrono::milliseconds interval{0};
  // After each write the coalescer makes: its result and whether it wrote a held report.
  std::function<void(const Status& result, bool held)> on_write;
};

class Coalescer {
 public:
  Coalescer(StatusWriter* writer, CoalescerOptions options);
  ~Coalescer();  // Stop()s
  Coalescer(const Coalescer&) = delete;
  Coalescer& operator=(const Coalescer&) = delete;

  void Start();
  // Writes the held reports, then writes every later report at once.
  void Stop();

  struct Outcome {
    Status status;          // the write's result when written now; OK when held
    bool deferred = false;  // held for a later write
  };
  Outcome Submit(std::string_view ns, std::string_view name, TrainerStatus status);

  // TrainJobs with a held report (tests, metrics).
  size_t held() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    Clock::time_point last_write{};
    bool last_ok = false;
    bool writing = false;
    std::optional<TrainerStatus> held;
  };
  // Writes `status` for `key` with mu_ released around the call; `lock` holds mu_.
  Status WriteLocked(std::unique_lock<std::mutex>& lock, const std::string& key,
                     const TrainerStatus& status, bool held);
  void Loop();
  void FlushDue(std::unique_lock<std::mutex>& lock, bool all);

  StatusWriter* const writer_;
  const CoalescerOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Entry, std::less<>> entries_;  // by "ns/name"
  bool stopped_ = false;
  std::thread flusher_;
};

}  // namespace trainer::statusserver
