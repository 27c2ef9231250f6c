// The controller's own metrics as Prometheus scrapes them: the TrainJob lifecycle metrics (each
// TrainJob observed once per histogram and uid; the state gauge follows each TrainJob's last
// state). The reconcile and workqueue families are tested in common/metrics.
#include "controller/metrics.h"

#include <catch2/catch.hpp>

#include "common/kube/meta.h"

namespace trainer::controller {
namespace {

using Clock = std::chrono::system_clock;

bool Has(const metrics::Registry& r, const std::string& line) {
  return r.Text().find(line) != std::string::npos;
}

api::TrainJob Job(std::string name, std::string uid) {
  api::TrainJob job;
  job.metadata.namespace_ = "ns";
  job.metadata.name = std::move(name);
  job.metadata.uid = std::move(uid);
  job.metadata.creation_timestamp = "2026-01-01T00:00:00Z";
  return job;
}

TEST_CASE("lifecycle histograms observe a TrainJob once per uid") {
  metrics::Registry r;
  Clock::time_point now = *kube::ParseTime("2026-01-01T00:00:04Z");
  TrainJobMetrics m(r, [&] { return now; });
  m.ObjectsApplied(Job("a", "uid-1"));
  m.ObjectsApplied(Job("a", "uid-1"));  // the same TrainJob: not again
  CHECK(Has(r, "trainer_trainjob_objects_applied_seconds_count 1"));
  CHECK(Has(r, "trainer_trainjob_objects_applied_seconds_sum 4"));
  m.ObjectsApplied(Job("a", "uid-2"));  // deleted and created again under the same name
  CHECK(Has(r, "trainer_trainjob_objects_applied_seconds_count 2"));
  m.JobSetReady(Job("a", "uid-2"));
  m.JobSetReady(Job("a", "uid-2"));
  CHECK(Has(r, "trainer_trainjob_jobset_ready_seconds_count 1"));
  m.ApplyError("PodGroup");
  m.ApplySkipped();
  CHECK(Has(r, "trainer_trainjob_apply_errors_total{kind=\"PodGroup\"} 1"));
  CHECK(Has(r, "trainer_trainjob_apply_errors_total{kind=\"JobSet\"} 0"));
  CHECK(Has(r, "trainer_trainjob_apply_skipped_total 1"));
}

TEST_CASE("the state gauge counts each TrainJob in its last state") {
  metrics::Registry r;
  TrainJobMetrics m(r);
  m.State("ns/a", "Created");
  m.State("ns/b", "Created");
  CHECK(Has(r, "trainer_trainjobs{state=\"Created\"} 2"));
  m.State("ns/a", "Running");
  m.State("ns/a", "Running");
  CHECK(Has(r, "trainer_trainjobs{state=\"Created\"} 1"));
  CHECK(Has(r, "trainer_trainjobs{state=\"Running\"} 1"));
  m.State("ns/a", "");  // gone
  m.State("ns/gone", "");
  CHECK(Has(r, "trainer_trainjobs{state=\"Running\"} 0"));
  CHECK(Has(r, "trainer_trainjobs{state=\"Complete\"} 0"));
}

}  // namespace
}  // namespace trainer::controller
