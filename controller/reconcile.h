// The vocabulary the controller's parts share, apart from any one reconciler:
//   ReconcileResult   what a reconcile returns to its WorkerPool (controller-runtime's
//                     reconcile.Result plus the error): retry with backoff, requeue after a
//                     delay, or done;
//   ReconcileObserver what the TrainJob reconciler reports about a pass (TrainJobMetrics turns
//                     it into metrics).
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "common/status/status.h"
#include "runtime/api/types.h"

namespace trainer::controller {

struct ReconcileResult {
  Status error;  // not OK: requeue with backoff
  std::optional<std::chrono::milliseconds> requeue_after;
};

// What the TrainJob reconciler reports for metrics; every method is optional to implement.
class ReconcileObserver {
 public:
  virtual ~ReconcileObserver() = default;
  // The objects of a TrainJob were applied for the first time (its JobSet did not exist before).
  virtual void ObjectsApplied(const api::TrainJob& /*job*/) {}
  virtual void ApplyError(std::string_view /*kind*/) {}
  // The JobSet reported every replicated job ready for the first time.
  virtual void JobSetReady(const api::TrainJob& /*job*/) {}
  // The state the TrainJob is in after this pass ("" when it is gone or not ours).
  virtual void State(std::string_view /*key*/, std::string_view /*state*/) {}
  virtual void ApplySkipped() {}
};

}  // namespace trainer::controller
