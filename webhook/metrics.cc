// AdmissionMetrics (see metrics.h).
#include "webhook/metrics.h"

namespace trainer::webhook {

AdmissionMetrics::AdmissionMetrics(metrics::Registry& registry)
    : registry_(registry),
      requests_(&registry.Counter("controller_runtime_webhook_requests_total",
                                  "Total number of admission requests by HTTP status code.")),
      denials_(&registry.Counter(
          "trainer_webhook_denials_total",
          "Total number of admission requests answered with allowed=false, by webhook and "
          "reason.")),
      panics_(
          &registry
               .Counter("controller_runtime_webhook_panics_total", "Total number of webhook panics")
               .Add({})) {}

AdmissionMetrics::Endpoint AdmissionMetrics::ForPath(const std::string& path) {
  Endpoint ep;
  ep.code_200 = &requests_->Add({{"webhook", path}, {"code", "200"}});
  requests_->Add({{"webhook", path}, {"code", "500"}});
  ep.in_flight = &registry_
                      .Gauge("controller_runtime_webhook_requests_in_flight",
                             "Current number of admission requests being served.")
                      .Add({{"webhook", path}});
  ep.latency = &registry_
                    .Histogram("controller_runtime_webhook_latency_seconds",
                               "Histogram of the latency of processing admission requests")
                    .Add({{"webhook", path}}, metrics::ExponentialBuckets(10e-9, 10, 12));
  return ep;
}

void AdmissionMetrics::CountRequest(const std::string& path, const Endpoint& ep, int http_status) {
  if (http_status == 200) {
    ep.code_200->Increment();
    return;
  }
  requests_->Add({{"webhook", path}, {"code", std::to_string(http_status)}}).Increment();
}

void AdmissionMetrics::CountDenial(const std::string& path, const std::string& reason) {
  denials_->Add({{"webhook", path}, {"reason", reason}}).Increment();
}

}  // namespace trainer::webhook
