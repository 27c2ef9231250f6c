// workqueue_* on prometheus-cpp (see workqueue.h).
#include "common/metrics/workqueue.h"

#include <string>

namespace trainer::metrics {

namespace {

class QueueMetrics final : public workqueue::WorkqueueMetrics {
 public:
  QueueMetrics(Registry& r, const std::string& name) {
    prometheus::Labels labels{{"controller", name}, {"name", name}};
    prometheus::Labels depth_labels = labels;
    depth_labels["priority"] = "0";
    depth_ = &r.Gauge(std::string(workqueue::kDepthMetric), "Current depth of workqueue")
                  .Add(depth_labels);
    adds_ =
        &r.Counter(std::string(workqueue::kAddsMetric), "Total number of adds handled by workqueue")
             .Add(labels);
    // controller-runtime: prometheus.ExponentialBuckets(10e-9, 10, 12).
    Buckets b = ExponentialBuckets(10e-9, 10, 12);
    queue_ = &r.Histogram(std::string(workqueue::kQueueDurationMetric),
                          "How long in seconds an item stays in workqueue before being requested")
                  .Add(labels, b);
    work_ = &r.Histogram(std::string(workqueue::kWorkDurationMetric),
                         "How long in seconds processing an item from workqueue takes.")
                 .Add(labels, b);
    unfinished_ = &r.Gauge(std::string(workqueue::kUnfinishedWorkMetric),
                           "How many seconds of work has been done that is in progress and "
                           "hasn't been observed by work_duration.")
                       .Add(labels);
    longest_ = &r.Gauge(std::string(workqueue::kLongestRunningProcessorMetric),
                        "How many seconds has the longest running processor for workqueue been "
                        "running.")
                    .Add(labels);
    retries_ = &r.Counter(std::string(workqueue::kRetriesMetric),
                          "Total number of retries handled by workqueue")
                    .Add(labels);
  }
  void Add() override { adds_->Increment(); }
  void SetDepth(int64_t depth) override { depth_->Set(static_cast<double>(depth)); }
  void ObserveQueueDuration(double s) override { queue_->Observe(s); }
  void ObserveWorkDuration(double s) override { work_->Observe(s); }
  void SetUnfinishedWorkSeconds(double s) override { unfinished_->Set(s); }
  void SetLongestRunningProcessorSeconds(double s) override { longest_->Set(s); }
  void Retry() override { retries_->Increment(); }

 private:
  prometheus::Gauge* depth_;
  prometheus::Counter* adds_;
  prometheus::Histogram* queue_;
  prometheus::Histogram* work_;
  prometheus::Gauge* unfinished_;
  prometheus::Gauge* longest_;
  prometheus::Counter* retries_;
};

}  // namespace

std::unique_ptr<workqueue::WorkqueueMetrics> PrometheusWorkqueueMetrics::NewQueueMetrics(
    std::string_view name) {
  return std::make_unique<QueueMetrics>(registry_, std::string(name));
}

}  // namespace trainer::metrics
