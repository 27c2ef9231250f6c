// Prometheus metrics for trainer-cpp: a Registry around prometheus-cpp's, helpers that create
// counters, gauges and histograms with controller-runtime's bucket defaults, and the text
// exposition format our own HTTP server (common/http) serves on /metrics.
//
// Metric names reuse controller-runtime's where the meaning is the same (dashboards written for
// controller-runtime operators keep working); ours start with `trainer_` and end in a unit.
//
//   metrics::Registry& r = metrics::DefaultRegistry();
//   auto& total = r.Counter("controller_runtime_webhook_requests_total",
//                           "Total number of admission requests by HTTP status code.");
//   total.Add({{"webhook", "/validate-x"}, {"code", "200"}}).Increment();
//   std::string text = r.Text();   // "# HELP ...\n# TYPE ... counter\n..."
//
// Families and metrics live as long as the Registry; the references returned stay valid.
// Every method is thread-safe. A malformed metric or label name is a programming error and
// aborts with a message (names are constants in our code, never user input).
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace trainer::metrics {

// Content type of the text exposition format 0.0.4.
inline constexpr std::string_view kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

using Buckets = std::vector<double>;

// prometheus.DefBuckets (client_golang): controller-runtime's webhook latency histogram uses
// these.
const Buckets& DefBuckets();
// controller-runtime's controller_runtime_reconcile_time_seconds buckets (5 ms .. 60 s).
const Buckets& ReconcileTimeBuckets();
// prometheus.ExponentialBuckets(start, factor, count): start, start*factor, ... (count values).
Buckets ExponentialBuckets(double start, double factor, int count);

class Registry {
 public:
  Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Returns the family `name`, creating it on first use (a second call with the same name and
  // type returns the same family; a different type aborts).
  prometheus::Family<prometheus::Counter>& Counter(std::string_view name, std::string_view help);
  prometheus::Family<prometheus::Gauge>& Gauge(std::string_view name, std::string_view help);
  // Histogram families take their buckets per metric: family.Add(labels, buckets).
  prometheus::Family<prometheus::Histogram>& Histogram(std::string_view name,
                                                       std::string_view help);

  // Adds a collector evaluated at every scrape (e.g. process metrics read from /proc).
  void AddCollectable(std::shared_ptr<prometheus::Collectable> collectable);

  // Everything registered, serialized in the text exposition format 0.0.4.
  std::string Text() const;

  // The underlying prometheus-cpp registry, for code that builds with prometheus::Build*.
  prometheus::Registry& prom() { return *registry_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<prometheus::Collectable>> extra_;
};

// The process-wide registry that binaries serve on /metrics.
Registry& DefaultRegistry();

// Registers the `process_*` families the Go process collector exports (cpu seconds, resident
// and virtual memory, open and max fds, start time), read from /proc at scrape time.
void RegisterProcessCollector(Registry& registry);

}  // namespace trainer::metrics
