// What trainer-controller does with the progress training code reports through the status server
// (feature gate TrainJobStatus; the server writes status.trainerStatus, webhook/statusserver/):
//
//  - ProgressMetrics: from the TrainJob cache's events, at each scrape
//      trainer_trainjobs_reporting_progress            TrainJobs whose status has a trainerStatus
//      trainer_trainjob_progress_stale{namespace,name}  1 for each running TrainJob (not
//                                                       suspended, neither Complete nor Failed)
//                                                       whose last report is older than
//                                                       `stale_after`: a job that hangs stops
//                                                       reporting
//    A scrape reads one small entry per TrainJob, never the cache.
//  - OnlyTrainerStatusChanged: a report changes nothing the reconciler acts on, so its update
//    event does not enqueue the TrainJob (every rank of a large job may report each second).
//
//   auto progress = std::make_shared<ProgressMetrics>(std::chrono::minutes(10));
//   registry.AddCollectable(progress);
//   trainjobs.AddEventHandler({.on_add = [&](const json::Value& o) { progress->Observe(o); }});
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/json/json.h"
#include "common/metrics/metrics.h"

namespace trainer::controller {

class ProgressMetrics final : public prometheus::Collectable {
 public:
  explicit ProgressMetrics(std::chrono::milliseconds stale_after,
                           std::function<std::chrono::system_clock::time_point()> now = {});

  void Observe(const json::Value& trainjob);
  void Forget(const json::Value& trainjob);

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  struct Entry {
    bool reporting = false;
    bool running = false;
    std::chrono::system_clock::time_point last_report;
  };
  const std::chrono::milliseconds stale_after_;
  const std::function<std::chrono::system_clock::time_point()> now_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;  // by "ns/name"
};

// Whether `after` differs from `before` only in status.trainerStatus and the bookkeeping every
// write changes (resourceVersion, managedFields).
bool OnlyTrainerStatusChanged(const json::Value& before, const json::Value& after);

}  // namespace trainer::controller
