// workqueue_* families bound to Prometheus with controller-runtime's names, labels
// ({controller, name}; depth also {priority}) and buckets, for every queue a service runs:
// trainer-controller's reconcilers and trainer-webhook's certificate rotator.
//
//   metrics::PrometheusWorkqueueMetrics provider(registry);
//   workqueue::Workqueue q({.name = "cert-rotator", .metrics = &provider});
#pragma once

#include <memory>
#include <string_view>

#include "common/metrics/metrics.h"
#include "common/workqueue/metrics.h"

namespace trainer::metrics {

class PrometheusWorkqueueMetrics final : public workqueue::WorkqueueMetricsProvider {
 public:
  explicit PrometheusWorkqueueMetrics(Registry& registry) : registry_(registry) {}
  std::unique_ptr<workqueue::WorkqueueMetrics> NewQueueMetrics(std::string_view name) override;

 private:
  Registry& registry_;
};

}  // namespace trainer::metrics
