// Controller metrics on prometheus-cpp.
#include "controller/metrics.h"

#include "common/kube/meta.h"

namespace trainer::controller {

namespace {

class QueueMetrics final : public workqueue::WorkqueueMetrics {
 public:
  QueueMetrics(metrics::Registry& r, const std::string& name) {
    prometheus::Labels labels{{"controller", name}, {"name", name}};
    prometheus::Labels depth_labels = labels;
    depth_labels["priority"] = "0";
    depth_ = &r.Gauge(std::string(workqueue::kDepthMetric), "Current depth of workqueue")
                  .Add(depth_labels);
    adds_ =
        &r.Counter(std::string(workqueue::kAddsMetric), "Total number of adds handled by workqueue")
             .Add(labels);
    // controller-runtime: prometheus.ExponentialBuckets(10e-9, 10, 12).
    metrics::Buckets b = metrics::ExponentialBuckets(10e-9, 10, 12);
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

TrainJobMetrics::TrainJobMetrics(metrics::Registry& registry,
                                 std::function<std::chrono::system_clock::time_point()> now)
    : registry_(registry), now_(std::move(now)) {
  if (!now_) now_ = [] { return std::chrono::system_clock::now(); };
  applied_seconds_ =
      &registry
           .Histogram("trainer_trainjob_objects_applied_seconds",
                      "Seconds from TrainJob creation until its objects were first applied")
           .Add({}, metrics::ExponentialBuckets(0.01, 2, 16));
  ready_seconds_ =
      &registry
           .Histogram("trainer_trainjob_jobset_ready_seconds",
                      "Seconds from TrainJob creation until every replicated job of its JobSet "
                      "was ready")
           .Add({}, metrics::ExponentialBuckets(0.5, 2, 16));
  apply_errors_ = &registry.Counter("trainer_trainjob_apply_errors_total",
                                    "Failed server-side applies of TrainJob objects by kind");
  for (const char* kind : {"JobSet", "ConfigMap"}) apply_errors_->Add({{"kind", kind}});
  skipped_ = &registry
                  .Counter("trainer_trainjob_apply_skipped_total",
                           "Applies skipped because the live object already carries the "
                           "desired content")
                  .Add({});
  states_ = &registry.Gauge("trainer_trainjobs", "TrainJobs by state");
  for (const char* s : {"Created", "Suspended", "Running", "Complete", "Failed"}) {
    states_->Add({{"state", s}}).Set(0);
  }
}

double TrainJobMetrics::SinceCreation(const api::TrainJob& job) const {
  std::optional<std::chrono::system_clock::time_point> created =
      kube::ParseTime(job.metadata.creation_timestamp);
  if (!created) return -1;
  return std::chrono::duration<double>(now_() - *created).count();
}

TrainJobMetrics::Seen& TrainJobMetrics::Entry(const api::TrainJob& job) {
  Seen& s = seen_[kube::ObjectKey(job.metadata.namespace_, job.metadata.name)];
  if (s.uid != job.metadata.uid) {
    s.uid = job.metadata.uid;
    s.applied = s.ready = false;
  }
  return s;
}

void TrainJobMetrics::ObjectsApplied(const api::TrainJob& job) {
  double since = SinceCreation(job);
  std::lock_guard<std::mutex> lock(mu_);
  Seen& s = Entry(job);
  if (s.applied || since < 0) return;
  s.applied = true;
  applied_seconds_->Observe(since);
}

void TrainJobMetrics::JobSetReady(const api::TrainJob& job) {
  double since = SinceCreation(job);
  std::lock_guard<std::mutex> lock(mu_);
  Seen& s = Entry(job);
  if (s.ready || since < 0) return;
  s.ready = true;
  ready_seconds_->Observe(since);
}

void TrainJobMetrics::ApplyError(std::string_view kind) {
  apply_errors_->Add({{"kind", std::string(kind)}}).Increment();
}

void TrainJobMetrics::ApplySkipped() { skipped_->Increment(); }

void TrainJobMetrics::State(std::string_view key, std::string_view state) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = seen_.find(std::string(key));
  std::string old = it != seen_.end() ? it->second.state : "";
  if (old == state) return;
  if (!old.empty()) states_->Add({{"state", old}}).Decrement();
  if (state.empty()) {
    if (it != seen_.end()) seen_.erase(it);
    return;
  }
  states_->Add({{"state", std::string(state)}}).Increment();
  seen_[std::string(key)].state = state;
}

}  // namespace trainer::controller
