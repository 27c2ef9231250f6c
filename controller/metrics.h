// Metrics of trainer-controller, on a metrics::Registry:
//  - controller-runtime's families with its names and labels (the only ones upstream v2.3.0
//    exports besides Go/process/client-go ones), so dashboards for Go operators keep working:
//    the reconcile families (common/metrics/reconcile.h) and workqueue_* {controller,name}
//    (common/metrics/workqueue.h);
//  - TrainJob lifecycle metrics upstream lacks (upstream #3429):
//    trainer_trainjob_objects_applied_seconds   creationTimestamp -> objects first applied
//    trainer_trainjob_jobset_ready_seconds      creationTimestamp -> every replicated job ready
//    trainer_trainjob_apply_errors_total{kind}  failed server-side applies by object kind
//    trainer_trainjob_apply_skipped_total       applies skipped because the live object is current
//    trainer_trainjobs{state}                   TrainJobs by state (Created, Suspended, Running,
//                                               Complete, Failed), as this controller last saw them
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/metrics/metrics.h"
#include "common/metrics/reconcile.h"
#include "controller/reconcile.h"

namespace trainer::controller {

// The lifecycle metrics; also the reconciler's ReconcileObserver. Each TrainJob (by key and uid)
// is observed at most once per histogram in this process.
class TrainJobMetrics final : public ReconcileObserver {
 public:
  explicit TrainJobMetrics(metrics::Registry& registry,
                           std::function<std::chrono::system_clock::time_point()> now = {});

  void ObjectsApplied(const api::TrainJob& job) override;
  void ApplyError(std::string_view kind) override;
  void JobSetReady(const api::TrainJob& job) override;
  void State(std::string_view key, std::string_view state) override;
  void ApplySkipped() override;

 private:
  struct Seen {
    std::string uid;
    bool applied = false;
    bool ready = false;
    std::string state;
  };
  double SinceCreation(const api::TrainJob& job) const;
  Seen& Entry(const api::TrainJob& job);  // mu_ held

  metrics::Registry& registry_;
  std::function<std::chrono::system_clock::time_point()> now_;
  prometheus::Histogram* applied_seconds_;
  prometheus::Histogram* ready_seconds_;
  prometheus::Family<prometheus::Counter>* apply_errors_;
  prometheus::Counter* skipped_;
  prometheus::Family<prometheus::Gauge>* states_;
  std::mutex mu_;
  std::unordered_map<std::string, Seen> seen_;
  std::map<std::string, int64_t> counts_;
};

}  // namespace trainer::controller
