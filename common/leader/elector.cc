// LeaderElector implementation (client-go tools/leaderelection/leaderelection.go semantics).
#include "common/leader/elector.h"

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <random>

#include "common/kube/meta.h"
#include "common/kube/rest_mapper.h"
#include "common/log/log.h"

namespace trainer::leader {

using SteadyClock = std::chrono::steady_clock;

LeaderElector::LeaderElector(kube::Client& client, LeaderElectionConfig config,
                             LeaderCallbacks callbacks)
    : client_(client), config_(std::move(config)), callbacks_(std::move(callbacks)) {}

std::string LeaderElector::GetLeader() const {
  std::lock_guard<std::mutex> lock(mu_);
  return observed_.holder;
}

LeaderElector::Record LeaderElector::RecordOf(const json::Value& lease) {
  Record r;
  const json::Value* spec = lease.Find("spec");
  if (spec == nullptr) return r;
  auto str = [&](std::string_view k) {
    const json::Value* v = spec->Find(k);
    return v != nullptr && v->IsString() ? v->AsString() : std::string();
  };
  auto num = [&](std::string_view k) -> int64_t {
    const json::Value* v = spec->Find(k);
    return v != nullptr && v->IsNumber() ? v->AsInt() : 0;
  };
  r.holder = str("holderIdentity");
  r.lease_duration_seconds = num("leaseDurationSeconds");
  r.acquire_time = str("acquireTime");
  r.renew_time = str("renewTime");
  r.transitions = num("leaseTransitions");
  return r;
}

json::Value LeaderElector::MakeLease(const Record& r, const json::Value* existing) const {
  json::Value lease = existing != nullptr ? existing->Clone() : json::Value::Object();
  lease.Set("apiVersion", "coordination.k8s.io/v1");
  lease.Set("kind", "Lease");
  json::Value& meta = lease["metadata"];
  meta.Set("name", config_.lease_name);
  meta.Set("namespace", config_.lease_namespace);
  json::Value spec = json::Value::Object();
  if (!r.holder.empty()) spec.Set("holderIdentity", r.holder);
  spec.Set("leaseDurationSeconds", r.lease_duration_seconds);
  spec.Set("acquireTime", r.acquire_time);
  spec.Set("renewTime", r.renew_time);
  spec.Set("leaseTransitions", r.transitions);
  lease.Set("spec", std::move(spec));
  return lease;
}

void LeaderElector::Observe(const Record& r, SteadyClock::time_point now) {
  std::string changed_to;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!(r == observed_)) {
      observed_ = r;
      observed_time_ = now;
    }
    if (r.holder != reported_leader_) {
      reported_leader_ = r.holder;
      changed_to = r.holder;
    }
  }
  if (!changed_to.empty() && callbacks_.on_new_leader) callbacks_.on_new_leader(changed_to);
}

bool LeaderElector::TryAcquireOrRenew() {
  const auto now_steady = SteadyClock::now();
  const std::string now = kube::FormatMicroTime(std::chrono::system_clock::now());
  // The Lease holds whole seconds; round up so a short test lease never reads as expired.
  const int64_t duration_s =
      std::max<int64_t>(1, std::chrono::ceil<std::chrono::seconds>(config_.lease_duration).count());
  Record desired{config_.identity, duration_s, now, now, 0};

  StatusOr<json::Value> current =
      client_.Get(kube::kLeases, config_.lease_namespace, config_.lease_name);
  if (!current.ok()) {
    if (!IsNotFound(current.status())) {
      log::Warn("leader election: reading lease failed",
                {{"lease", config_.lease_name}, {"error", current.status().ToString()}});
      return false;
    }
    StatusOr<json::Value> created =
        client_.Create(kube::kLeases, config_.lease_namespace, MakeLease(desired, nullptr));
    if (!created.ok()) return false;  // somebody else created it first
    Observe(desired, now_steady);
    return true;
  }
  const Record old = RecordOf(*current);
  Observe(old, now_steady);
  SteadyClock::time_point observed_time;
  {
    std::lock_guard<std::mutex> lock(mu_);
    observed_time = observed_time_;
  }
  const bool held_by_other = !old.holder.empty() && old.holder != config_.identity;
  const auto old_duration = std::chrono::seconds(old.lease_duration_seconds);
  if (held_by_other && observed_time + old_duration > now_steady) {
    return false;  // a live leader
  }
  if (old.holder == config_.identity) {
    desired.acquire_time = old.acquire_time;
    desired.transitions = old.transitions;
  } else {
    desired.transitions = old.transitions + 1;
  }
  // PUT with the resourceVersion we read: a racing candidate gets a Conflict.
  StatusOr<json::Value> updated =
      client_.Update(kube::kLeases, config_.lease_namespace, MakeLease(desired, &*current));
  if (!updated.ok()) {
    if (!IsConflict(updated.status())) {
      log::Warn("leader election: updating lease failed",
                {{"lease", config_.lease_name}, {"error", updated.status().ToString()}});
    }
    return false;
  }
  Observe(desired, now_steady);
  return true;
}

bool LeaderElector::Release() {
  StatusOr<json::Value> current =
      client_.Get(kube::kLeases, config_.lease_namespace, config_.lease_name);
  if (!current.ok()) return IsNotFound(current.status());
  const Record old = RecordOf(*current);
  if (old.holder != config_.identity) return true;
  const std::string now = kube::FormatMicroTime(std::chrono::system_clock::now());
  Record released{"", 1, now, now, old.transitions};
  StatusOr<json::Value> updated =
      client_.Update(kube::kLeases, config_.lease_namespace, MakeLease(released, &*current));
  if (!updated.ok()) {
    log::Warn("leader election: releasing lease failed",
              {{"lease", config_.lease_name}, {"error", updated.status().ToString()}});
    return false;
  }
  Observe(released, SteadyClock::now());
  return true;
}

bool LeaderElector::Sleep(std::chrono::milliseconds d, std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock<std::mutex> lock(mu);
  cv.wait_for(lock, stop, d, [] { return false; });
  return !stop.stop_requested();
}

namespace {

std::chrono::milliseconds Jittered(std::chrono::milliseconds d, double factor) {
  static thread_local std::mt19937 rng{std::random_device{}()};
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  return d + std::chrono::milliseconds(static_cast<int64_t>(d.count() * factor * unit(rng)));
}

}  // namespace

void LeaderElector::SetLeading(bool leading) {
  leader_ = leading;
  if (config_.master_status != nullptr) config_.master_status->Set(leading ? 1 : 0);
}

prometheus::Gauge& MasterStatusGauge(metrics::Registry& registry, std::string_view lease_name) {
  prometheus::Gauge& g =
      registry
          .Gauge("leader_election_master_status",
                 "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
                 "backup, 1 indicates master. 'name' is the string used to identify the lease. "
                 "Please make sure to group by name.")
          .Add({{"name", std::string(lease_name)}});
  g.Set(0);
  return g;
}

bool LeaderElector::Run(std::stop_token stop) {
  const std::string lease = config_.lease_namespace + "/" + config_.lease_name;
  // Campaign: retry every retry_period (jittered, as client-go's JitterFactor 1.2).
  log::Info("leader election: campaigning", {{"lease", lease}, {"identity", config_.identity}});
  while (!TryAcquireOrRenew()) {
    if (!Sleep(Jittered(config_.retry_period, 1.2), stop)) return false;
  }
  SetLeading(true);
  log::Info("leader election: acquired lease", {{"lease", lease}, {"identity", config_.identity}});
  if (callbacks_.on_started_leading) callbacks_.on_started_leading();

  // Lead: renew every retry_period; give up after renew_deadline without a successful renew.
  auto last_renew = SteadyClock::now();
  bool lost = false;
  while (Sleep(config_.retry_period, stop)) {
    if (TryAcquireOrRenew()) {
      last_renew = SteadyClock::now();
      continue;
    }
    if (SteadyClock::now() - last_renew >= config_.renew_deadline) {
      lost = true;
      break;
    }
  }
  SetLeading(false);
  if (lost) {
    log::Error("leader election: lost lease", {{"lease", lease}, {"identity", config_.identity}});
  } else if (config_.release_on_cancel) {
    Release() ? log::Info("leader election: released lease", {{"lease", lease}})
              : log::Warn("leader election: could not release lease", {{"lease", lease}});
  }
  if (callbacks_.on_stopped_leading) callbacks_.on_stopped_leading();
  return true;
}

std::string DefaultIdentity() {
  std::string base;
  if (const char* pod = std::getenv("POD_NAME"); pod != nullptr && *pod != '\0') {
    base = pod;
  } else {
    char host[256] = {0};
    if (gethostname(host, sizeof(host) - 1) == 0) base = host;
  }
  if (base.empty()) base = "trainer";
  std::random_device rd;
  char suffix[40];
  std::snprintf(suffix, sizeof(suffix), "%08x%08x", rd(), rd());
  return base + "_" + suffix;
}

}  // namespace trainer::leader
