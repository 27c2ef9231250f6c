// Metrics of trainer-webhook, on a metrics::Registry (trainer-controller's are in
// controller/metrics.h):
//  - controller-runtime's webhook families with its names, help texts, labels and buckets
//    (pkg/webhook/internal/metrics, pkg/webhook/admission/metrics), so dashboards for Go
//    operators keep working: controller_runtime_webhook_requests_total{webhook,code},
//    _requests_in_flight{webhook}, _latency_seconds{webhook}, _panics_total;
//  - trainer_webhook_denials_total{webhook,reason}: answers with allowed=false (upstream has no
//    such metric), by the Status reason users read in kubectl's error.
// The certificate watcher adds certwatcher_* and trainer_webhook_certificate_expiry_* itself.
//
//   AdmissionMetrics m(registry);
//   AdmissionMetrics::Endpoint ep = m.ForPath("/validate-...");   // once per path
//   m.CountRequest("/validate-...", ep, 200);
#pragma once

#include <string>

#include "common/metrics/metrics.h"

namespace trainer::webhook {

class AdmissionMetrics {
 public:
  explicit AdmissionMetrics(metrics::Registry& registry);

  // The children of one webhook path, created once (labels are fixed per path). As
  // controller-runtime, the likely codes (200, 500) start at zero.
  struct Endpoint {
    prometheus::Counter* code_200 = nullptr;
    prometheus::Gauge* in_flight = nullptr;
    prometheus::Histogram* latency = nullptr;
  };
  Endpoint ForPath(const std::string& path);

  void CountRequest(const std::string& path, const Endpoint& ep, int http_status);
  void CountDenial(const std::string& path, const std::string& reason);
  void CountPanic() { panics_->Increment(); }

 private:
  metrics::Registry& registry_;
  prometheus::Family<prometheus::Counter>* requests_;
  prometheus::Family<prometheus::Counter>* denials_;
  prometheus::Counter* panics_;
};

}  // namespace trainer::webhook
