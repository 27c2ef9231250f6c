// controller-runtime's reconcile families (see reconcile.h).
#include "common/metrics/reconcile.h"

namespace trainer::metrics {

namespace {
constexpr const char* kResultNames[] = {"success", "error", "requeue", "requeue_after"};
}  // namespace

ReconcileMetrics::ReconcileMetrics(Registry& registry, std::string controller,
                                   int max_workers) {
  auto& total = registry.Counter("controller_runtime_reconcile_total",
                                 "Total number of reconciliations per controller");
  for (int i = 0; i < 4; ++i) {
    results_[i] = &total.Add({{"controller", controller}, {"result", kResultNames[i]}});
  }
  errors_ = &registry
                 .Counter("controller_runtime_reconcile_errors_total",
                          "Total number of reconciliation errors per controller")
                 .Add({{"controller", controller}});
  registry
      .Counter("controller_runtime_terminal_reconcile_errors_total",
               "Total number of terminal reconciliation errors per controller")
      .Add({{"controller", controller}});
  panics_ = &registry
                 .Counter("controller_runtime_reconcile_panics_total",
                          "Total number of reconciliation panics per controller")
                 .Add({{"controller", controller}});
  registry
      .Counter("controller_runtime_reconcile_timeouts_total",
               "Total number of reconciliation timeouts per controller")
      .Add({{"controller", controller}});
  time_ = &registry
               .Histogram("controller_runtime_reconcile_time_seconds",
                          "Length of time per reconciliation per controller")
               .Add({{"controller", controller}}, ReconcileTimeBuckets());
  active_ = &registry
                 .Gauge("controller_runtime_active_workers",
                        "Number of currently used workers per controller")
                 .Add({{"controller", controller}});
  registry
      .Gauge("controller_runtime_max_concurrent_reconciles",
             "Maximum number of concurrent reconciles per controller")
      .Add({{"controller", controller}})
      .Set(max_workers);
}

void ReconcileMetrics::Observe(Result result, double seconds) {
  results_[static_cast<int>(result)]->Increment();
  if (result == Result::kError) errors_->Increment();
  time_->Observe(seconds);
}

void ReconcileMetrics::Panic() { panics_->Increment(); }
void ReconcileMetrics::WorkerStarted() { active_->Increment(); }
void ReconcileMetrics::WorkerFinished() { active_->Decrement(); }

}  // namespace trainer::metrics
