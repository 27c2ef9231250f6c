// Progress reports in the controller (progress.h).
#include "controller/progress.h"

#include <optional>

#include "common/kube/meta.h"
#include "runtime/api/conditions.h"

namespace trainer::controller {
namespace {

bool ConditionTrue(const json::Value& status, std::string_view type) {
  const json::Value* conds = status.Find("conditions");
  if (conds == nullptr || !conds->IsArray()) return false;
  for (const json::Value& c : conds->elements()) {
    const json::Value* t = c.Find("type");
    const json::Value* s = c.Find("status");
    if (t != nullptr && t->IsString() && t->AsString() == type && s != nullptr && s->IsString() &&
        s->AsString() == "True") {
      return true;
    }
  }
  return false;
}

// A copy without what a status report changes.
json::Value WithoutReport(const json::Value& trainjob) {
  json::Value c = trainjob.Clone();
  if (json::Value* meta = c.Find("metadata")) {
    meta->Erase("resourceVersion");
    meta->Erase("managedFields");
  }
  if (json::Value* status = c.Find("status")) {
    status->Erase("trainerStatus");
    if (status->empty()) c.Erase("status");  // the first report created the status
  }
  return c;
}

}  // namespace

ProgressMetrics::ProgressMetrics(std::chrono::milliseconds stale_after,
                                 std::function<std::chrono::system_clock::time_point()> now)
    : stale_after_(stale_after),
      now_(now ? std::move(now) : [] { return std::chrono::system_clock::now(); }) {}

void ProgressMetrics::Observe(const json::Value& trainjob) {
  static const json::Value kNone = json::Value::Object();
  const json::Value* status = trainjob.Find("status");
  if (status == nullptr || !status->IsObject()) status = &kNone;
  const json::Value* spec = trainjob.Find("spec");
  const json::Value* suspend = spec != nullptr ? spec->Find("suspend") : nullptr;
  Entry e;
  e.running = !(suspend != nullptr && suspend->AsBool()) &&
              !ConditionTrue(*status, api::kConditionComplete) &&
              !ConditionTrue(*status, api::kConditionFailed);
  if (const json::Value* ts = status->Find("trainerStatus"); ts != nullptr && ts->IsObject()) {
    e.reporting = true;
    const json::Value* t = ts->Find("lastUpdatedTime");
    std::optional<std::chrono::system_clock::time_point> when =
        t != nullptr && t->IsString() ? kube::ParseTime(t->AsString()) : std::nullopt;
    e.last_report = when.value_or(std::chrono::system_clock::time_point{});
  }
  std::lock_guard<std::mutex> lock(mu_);
  entries_[kube::ObjectKeyOf(trainjob)] = e;
}

void ProgressMetrics::Forget(const json::Value& trainjob) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.erase(kube::ObjectKeyOf(trainjob));
}

std::vector<prometheus::MetricFamily> ProgressMetrics::Collect() const {
  prometheus::MetricFamily reporting;
  reporting.name = "trainer_trainjobs_reporting_progress";
  reporting.help = "TrainJobs whose status holds progress reported by their trainer.";
  reporting.type = prometheus::MetricType::Gauge;
  prometheus::MetricFamily stale;
  stale.name = "trainer_trainjob_progress_stale";
  stale.help =
      "1 for each running TrainJob whose last progress report is older than "
      "--progress-stale-after.";
  stale.type = prometheus::MetricType::Gauge;
  const auto now = now_();
  double count = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, e] : entries_) {
      if (!e.reporting) continue;
      ++count;
      if (!e.running || now - e.last_report <= stale_after_) continue;
      auto [ns, name] = kube::SplitObjectKey(key);
      prometheus::ClientMetric m;
      m.label = {{"namespace", ns}, {"name", name}};
      m.gauge.value = 1;
      stale.metric.push_back(std::move(m));
    }
  }
  prometheus::ClientMetric total;
  total.gauge.value = count;
  reporting.metric.push_back(std::move(total));
  std::vector<prometheus::MetricFamily> out;
  out.push_back(std::move(reporting));
  out.push_back(std::move(stale));
  return out;
}

bool OnlyTrainerStatusChanged(const json::Value& before, const json::Value& after) {
  const json::Value* a = before.Find("status");
  const json::Value* b = after.Find("status");
  const json::Value* ra = a != nullptr ? a->Find("trainerStatus") : nullptr;
  const json::Value* rb = b != nullptr ? b->Find("trainerStatus") : nullptr;
  if ((ra == nullptr && rb == nullptr) || (ra != nullptr && rb != nullptr && *ra == *rb)) {
    return false;  // no report: whatever changed is for the reconciler
  }
  return WithoutReport(before) == WithoutReport(after);
}

}  // namespace trainer::controller
