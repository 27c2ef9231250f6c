// Progress reports in trainer-controller (controller/progress.h): the reporting count, the stale
// signal for running TrainJobs only, and which updates need no reconcile.
#include "controller/progress.h"

#include <catch2/catch.hpp>

#include "common/kube/meta.h"
#include "common/yaml/yaml.h"

namespace trainer::controller {
namespace {

using std::chrono::system_clock;

json::Value Yaml(std::string_view text) {
  StatusOr<json::Value> v = yaml::ParseYaml(text);
  REQUIRE(v.ok());
  return std::move(v).value();
}

json::Value Job(std::string_view name, std::string_view extra) {
  return Yaml("metadata: {name: " + std::string(name) +
              ", namespace: team, resourceVersion: '1'}\nspec: {runtimeRef: {name: torch}}\n" +
              std::string(extra));
}

constexpr char kReportedAt9[] =
    "status: {trainerStatus: {progressPercentage: 40, "
    "lastUpdatedTime: '2026-01-01T09:00:00Z'}}";

system_clock::time_point At(std::string_view hhmm) {
  return *kube::ParseTime("2026-01-01T" + std::string(hhmm) + ":00Z");
}

std::string Text(ProgressMetrics& m) {
  metrics::Registry r;
  r.AddCollectable(std::shared_ptr<ProgressMetrics>(&m, [](ProgressMetrics*) {}));
  return r.Text();
}

TEST_CASE("reporting TrainJobs are counted; running ones that went quiet are stale", "[progress]") {
  system_clock::time_point now = At("09:05");
  ProgressMetrics m(std::chrono::minutes(10), [&now] { return now; });
  m.Observe(Job("quiet", ""));  // never reported: neither counted nor stale
  m.Observe(Job("a", kReportedAt9));
  m.Observe(
      Job("done",
          std::string(kReportedAt9).insert(9, "conditions: [{type: Complete, status: 'True'}], ")));
  json::Value suspended = Job("suspended", kReportedAt9);
  suspended["spec"].Set("suspend", json::Value(true));
  m.Observe(suspended);
  std::string t = Text(m);
  CHECK(t.find("trainer_trainjobs_reporting_progress 3") != std::string::npos);
  CHECK(t.find("trainer_trainjob_progress_stale{") == std::string::npos);
  now = At("09:11");
  t = Text(m);
  CHECK(t.find(R"(trainer_trainjob_progress_stale{namespace="team",name="a"} 1)") !=
        std::string::npos);
  CHECK(t.find(R"(name="done")") == std::string::npos);
  CHECK(t.find(R"(name="suspended")") == std::string::npos);
  // A new report makes it fresh again; deletion forgets it.
  m.Observe(Job("a", "status: {trainerStatus: {lastUpdatedTime: '2026-01-01T09:10:30Z'}}"));
  CHECK(Text(m).find("trainer_trainjob_progress_stale{") == std::string::npos);
  m.Forget(Job("a", ""));
  CHECK(Text(m).find("trainer_trainjobs_reporting_progress 2") != std::string::npos);
}

TEST_CASE("OnlyTrainerStatusChanged: a report needs no reconcile, anything else does",
          "[progress]") {
  json::Value before = Job("a", kReportedAt9);
  json::Value report = Job("a",
                           "status: {trainerStatus: {progressPercentage: 41, "
                           "lastUpdatedTime: '2026-01-01T09:01:00Z'}}");
  report["metadata"].Set("resourceVersion", "2");
  CHECK(OnlyTrainerStatusChanged(before, report));
  CHECK(OnlyTrainerStatusChanged(Job("a", ""), Job("a", kReportedAt9)));  // the first report
  json::Value suspended = report.Clone();
  suspended["spec"].Set("suspend", json::Value(true));
  CHECK_FALSE(OnlyTrainerStatusChanged(before, suspended));
  json::Value conditions = Job("a", kReportedAt9);
  conditions["status"].Set("conditions", Yaml("[{type: Complete, status: 'True'}]"));
  CHECK_FALSE(OnlyTrainerStatusChanged(before, conditions));
  json::Value labelled = Job("a", kReportedAt9);
  labelled["metadata"].Set("labels", Yaml("{a: b}"));
  CHECK_FALSE(OnlyTrainerStatusChanged(before, labelled));
  CHECK_FALSE(OnlyTrainerStatusChanged(before, before));  // a resync: reconcile as before
}

}  // namespace
}  // namespace trainer::controller
