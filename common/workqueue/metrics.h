// Workqueue metrics behind a small interface, so the services can bind them to Prometheus
// (common/metrics) without the workqueue depending on it. The names and meanings are
// controller-runtime's (sigs.k8s.io/controller-runtime/pkg/metrics/workqueue.go), each labelled
// by the queue's name (the controller name), so dashboards built for Go controllers keep working.
#pragma once

#include <memory>
#include <string_view>

namespace trainer::workqueue {

inline constexpr std::string_view kDepthMetric = "workqueue_depth";      // gauge
inline constexpr std::string_view kAddsMetric = "workqueue_adds_total";  // counter
inline constexpr std::string_view kQueueDurationMetric =
    "workqueue_queue_duration_seconds";  // histogram
inline constexpr std::string_view kWorkDurationMetric =
    "workqueue_work_duration_seconds";  // histogram
inline constexpr std::string_view kUnfinishedWorkMetric =
    "workqueue_unfinished_work_seconds";  // gauge
inline constexpr std::string_view kLongestRunningProcessorMetric =
    "workqueue_longest_running_processor_seconds";                             // gauge
inline constexpr std::string_view kRetriesMetric = "workqueue_retries_total";  // counter

// The hooks of one queue. Called with the queue's lock not held; implementations must be
// thread-safe and cheap.
class WorkqueueMetrics {
 public:
  virtual ~WorkqueueMetrics() = default;
  virtual void Add() = 0;                                 // adds_total += 1
  virtual void SetDepth(int64_t depth) = 0;               // depth
  virtual void ObserveQueueDuration(double seconds) = 0;  // added -> handed to a worker
  virtual void ObserveWorkDuration(double seconds) = 0;   // handed out -> Done
  virtual void SetUnfinishedWorkSeconds(double seconds) = 0;
  virtual void SetLongestRunningProcessorSeconds(double seconds) = 0;
  virtual void Retry() = 0;  // retries_total += 1
};

class WorkqueueMetricsProvider {
 public:
  virtual ~WorkqueueMetricsProvider() = default;
  virtual std::unique_ptr<WorkqueueMetrics> NewQueueMetrics(std::string_view queue_name) = 0;
};

}  // namespace trainer::workqueue
