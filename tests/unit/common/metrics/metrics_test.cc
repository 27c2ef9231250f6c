// Unit tests for common/metrics: family creation, exposition text, promtool's linter, and the
// reconcile and workqueue families.
#include "common/metrics/metrics.h"
#include "common/metrics/reconcile.h"
#include "common/metrics/workqueue.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace trainer::metrics {
namespace {

bool Contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// Runs `promtool check metrics` on `text`; returns its exit code and output.
int PromtoolCheck(const std::string& text, std::string* output) {
  char path[] = "/tmp/metrics_test_XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  close(fd);
  std::string cmd = std::string("promtool check metrics < ") + path + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
    output->append(buf, n);
  }
  int rc = pclose(p);
  unlink(path);
  return WEXITSTATUS(rc);
}

TEST_CASE("bucket presets match client_golang and controller-runtime") {
  CHECK(DefBuckets().size() == 11);
  CHECK(DefBuckets().front() == 0.005);
  CHECK(DefBuckets().back() == 10);
  CHECK(ReconcileTimeBuckets().size() == 40);
  CHECK(ReconcileTimeBuckets().back() == 60);
  CHECK(ExponentialBuckets(1, 2, 4) == Buckets{1, 2, 4, 8});
}

TEST_CASE("families are created once and serialized in the text format") {
  Registry r;
  auto& c = r.Counter("controller_runtime_webhook_requests_total",
                      "Total number of admission requests by HTTP status code.");
  auto& again = r.Counter("controller_runtime_webhook_requests_total", "ignored");
  CHECK(&c == &again);
  c.Add({{"webhook", "/validate-x"}, {"code", "200"}}).Increment(3);
  r.Gauge("controller_runtime_webhook_requests_in_flight",
          "Current number of admission requests being served.")
      .Add({{"webhook", "/validate-x"}})
      .Set(2);
  r.Histogram("controller_runtime_webhook_latency_seconds",
              "Histogram of the latency of processing admission requests")
      .Add({{"webhook", "/validate-x"}}, DefBuckets())
      .Observe(0.02);
  // A family whose labels were never used is not exposed (as client_golang does).
  r.Counter("trainer_unused_total", "Never incremented.");

  std::string text = r.Text();
  CHECK(Contains(text, "# TYPE controller_runtime_webhook_requests_total counter\n"));
  CHECK(Contains(
      text, "controller_runtime_webhook_requests_total{code=\"200\",webhook=\"/validate-x\"} 3"));
  CHECK(Contains(text, "controller_runtime_webhook_requests_in_flight{webhook=\"/validate-x\"} 2"));
  CHECK(Contains(
      text,
      "controller_runtime_webhook_latency_seconds_bucket{webhook=\"/validate-x\",le=\"0.025\"} 1"));
  CHECK(Contains(
      text,
      "controller_runtime_webhook_latency_seconds_bucket{webhook=\"/validate-x\",le=\"0.01\"} 0"));
  CHECK(Contains(text,
                 "controller_runtime_webhook_latency_seconds_count{webhook=\"/validate-x\"} 1"));
  CHECK_FALSE(Contains(text, "trainer_unused_total"));
}

TEST_CASE("process collector reports the Go process families") {
  Registry r;
  RegisterProcessCollector(r);
  std::string text = r.Text();
  CHECK(Contains(text, "# TYPE process_cpu_seconds_total counter"));
  CHECK(Contains(text, "process_resident_memory_bytes "));
  CHECK(Contains(text, "process_start_time_seconds "));
  CHECK(Contains(text, "process_open_fds "));
  CHECK(Contains(text, "process_max_fds "));
}

TEST_CASE("exposition passes promtool check metrics") {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) {
    WARN("promtool not installed; skipping");
    return;
  }
  Registry r;
  RegisterProcessCollector(r);
  r.Counter("controller_runtime_webhook_panics_total", "Total number of webhook panics").Add({});
  r.Counter("controller_runtime_webhook_requests_total",
            "Total number of admission requests by HTTP status code.")
      .Add({{"webhook", "/mutate-trainer-kubeflow-org-v1alpha1-trainjob"}, {"code", "200"}})
      .Increment();
  r.Histogram("controller_runtime_webhook_latency_seconds",
              "Histogram of the latency of processing admission requests")
      .Add({{"webhook", "/mutate-trainer-kubeflow-org-v1alpha1-trainjob"}}, DefBuckets())
      .Observe(0.001);
  r.Gauge("trainer_webhook_certificate_expiry_timestamp_seconds",
          "Expiry time (unix seconds) of the serving certificate.")
      .Add({})
      .Set(1.9e9);
  std::string out;
  int rc = PromtoolCheck(r.Text(), &out);
  INFO(out);
  CHECK(rc == 0);
  CHECK(out.empty());
}

TEST_CASE("reconcile metrics start at zero with controller-runtime's names and labels") {
  Registry r;
  ReconcileMetrics m(r, "trainjob_controller", 5);
  for (const char* result : {"success", "error", "requeue", "requeue_after"}) {
    CHECK(Contains(r.Text(), std::string("controller_runtime_reconcile_total{controller=\"trainjob_controller\""
                             ",result=\"") +
                     result + "\"} 0"));
  }
  for (const char* family :
       {"controller_runtime_reconcile_errors_total", "controller_runtime_reconcile_panics_total",
        "controller_runtime_terminal_reconcile_errors_total",
        "controller_runtime_reconcile_timeouts_total", "controller_runtime_active_workers"}) {
    CHECK(Contains(r.Text(), std::string(family) + "{controller=\"trainjob_controller\"} 0"));
  }
  CHECK(
      Contains(r.Text(), "controller_runtime_max_concurrent_reconciles{controller=\"trainjob_controller\"} 5"));
  m.WorkerStarted();
  m.Observe(ReconcileMetrics::Result::kError, 0.02);
  m.Panic();
  CHECK(Contains(r.Text(), "controller_runtime_active_workers{controller=\"trainjob_controller\"} 1"));
  CHECK(Contains(r.Text(), "controller_runtime_reconcile_errors_total{controller=\"trainjob_controller\"} 1"));
  CHECK(Contains(r.Text(), "controller_runtime_reconcile_panics_total{controller=\"trainjob_controller\"} 1"));
  CHECK(Contains(
      r.Text(), "controller_runtime_reconcile_time_seconds_count{controller=\"trainjob_controller\"} 1"));
  m.WorkerFinished();
  CHECK(Contains(r.Text(), "controller_runtime_active_workers{controller=\"trainjob_controller\"} 0"));
}

TEST_CASE("workqueue metrics carry controller and name labels") {
  Registry r;
  PrometheusWorkqueueMetrics provider(r);
  std::unique_ptr<workqueue::WorkqueueMetrics> q = provider.NewQueueMetrics("trainjob_controller");
  q->Add();
  q->SetDepth(3);
  q->Retry();
  const std::string labels = "{controller=\"trainjob_controller\",name=\"trainjob_controller\"";
  CHECK(Contains(r.Text(), "workqueue_adds_total" + labels + "} 1"));
  CHECK(Contains(r.Text(), "workqueue_depth" + labels + ",priority=\"0\"} 3"));
  CHECK(Contains(r.Text(), "workqueue_retries_total" + labels + "} 1"));
}

}  // namespace
}  // namespace trainer::metrics
