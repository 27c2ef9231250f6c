// controller-runtime's per-controller reconcile families, with its names and labels, for any
// loop that reconciles: trainer-controller's workers (trainjob_controller, ...) and
// trainer-webhook's certificate rotator (cert-rotator, as upstream's cert-controller names it).
//   controller_runtime_reconcile_total{controller,result}, _reconcile_errors_total{controller},
//   _terminal_reconcile_errors_total, _reconcile_panics_total, _reconcile_timeouts_total,
//   _reconcile_time_seconds, _active_workers, _max_concurrent_reconciles
// Every series starts at 0 when the controller is created, as controller-runtime's do.
//
//   metrics::ReconcileMetrics m(registry, "cert-rotator", /*max_workers=*/1);
//   m.Observe(metrics::ReconcileMetrics::Result::kError, seconds);
#pragma once

#include <string>

#include "common/metrics/metrics.h"

namespace trainer::metrics {

class ReconcileMetrics {
 public:
  ReconcileMetrics(Registry& registry, std::string controller, int max_workers);

  enum class Result { kSuccess, kError, kRequeue, kRequeueAfter };
  void Observe(Result result, double seconds);
  void Panic();
  void WorkerStarted();
  void WorkerFinished();

 private:
  prometheus::Counter* results_[4];
  prometheus::Counter* errors_;
  prometheus::Counter* panics_;
  prometheus::Histogram* time_;
  prometheus::Gauge* active_;
};

}  // namespace trainer::metrics
