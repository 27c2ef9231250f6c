// Controller metrics on prometheus-cpp.
#include "controller/metrics.h"

#include "common/kube/meta.h"

namespace trainer::controller {

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
