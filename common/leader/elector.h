// LeaderElector: leader election on a coordination.k8s.io/v1 Lease, the protocol of client-go's
// tools/leaderelection so our services and Go ones interoperate on the same Lease:
//  - a candidate takes the Lease when it is absent, released (empty holder), or not renewed for
//    lease_duration as observed on the candidate's own clock (no cross-node clock comparison);
//  - writes are optimistic (PUT with resourceVersion): of two racing candidates one wins;
//  - the leader renews every retry_period; if it cannot renew for renew_deadline it stops leading
//    (the service must then stop its controllers or exit);
//  - on a clean shutdown the leader releases the Lease (holder cleared, duration 1 s) so the next
//    candidate takes over within one retry_period instead of a whole lease_duration.
// Defaults are upstream Kubeflow Trainer's (controller-runtime's): 15 s lease, 10 s renew
// deadline, 2 s retry.
// With a master_status gauge (MasterStatusGauge), it exports client-go's
// leader_election_master_status{name=<lease name>}: 1 while leading, 0 otherwise.
//
//   leader::LeaderElector elector(client, {.lease_namespace = "kubeflow-system",
//                                          .lease_name = "trainer-controller",
//                                          .identity = leader::DefaultIdentity()},
//                                 {.on_started_leading = [&] { controllers.Start(); },
//                                  .on_stopped_leading = [&] { controllers.Stop(); }});
//   elector.Run(stop_token);   // returns after losing the Lease or on stop (released)
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>

#include "common/json/json.h"
#include "common/kube/client.h"
#include "common/metrics/metrics.h"

namespace trainer::leader {

struct LeaderElectionConfig {
  std::string lease_namespace;
  std::string lease_name;
  std::string identity;  // unique per process: DefaultIdentity()
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
  bool release_on_cancel = true;
  // Set to 1 while this process leads and 0 otherwise; may be null.
  prometheus::Gauge* master_status = nullptr;
};

// client-go's leader_election_master_status{name=lease_name} in `registry`, at 0. Create it when
// the process starts (before its caches sync and it campaigns), so a replica that is not leading
// shows 0 rather than nothing, unlike client-go: then "no replica leads" is an expression over
// the replicas Prometheus scrapes (sum < 1), not over missing series.
prometheus::Gauge& MasterStatusGauge(metrics::Registry& registry, std::string_view lease_name);

struct LeaderCallbacks {
  // Called on the Run thread when this process becomes leader; must return promptly (start
  // work on other threads).
  std::function<void()> on_started_leading;
  // Called on the Run thread when leadership ends (lost, or stop requested), after the release.
  std::function<void()> on_stopped_leading;
  // Called when the observed leader changes (including to ourselves).
  std::function<void(const std::string& identity)> on_new_leader;
};

class LeaderElector {
 public:
  LeaderElector(kube::Client& client, LeaderElectionConfig config, LeaderCallbacks callbacks = {});

  // Campaigns until leader (or stop), leads until the Lease is lost (or stop), then returns.
  // Returns true if it was leader at some point.
  bool Run(std::stop_token stop);

  bool IsLeader() const { return leader_.load(); }
  std::string GetLeader() const;

  // One acquire-or-renew attempt at `now` (exposed for tests). True if we hold the Lease after it.
  bool TryAcquireOrRenew();
  // Clears the holder if we hold the Lease. True if released (or nothing to release).
  bool Release();

 private:
  struct Record {
    std::string holder;
    int64_t lease_duration_seconds = 0;
    std::string acquire_time, renew_time;
    int64_t transitions = 0;
    bool operator==(const Record&) const = default;
  };
  static Record RecordOf(const json::Value& lease);
  json::Value MakeLease(const Record& r, const json::Value* existing) const;
  void Observe(const Record& r, std::chrono::steady_clock::time_point now);
  void SetLeading(bool leading);
  bool Sleep(std::chrono::milliseconds d, std::stop_token stop);

  kube::Client& client_;
  const LeaderElectionConfig config_;
  const LeaderCallbacks callbacks_;
  std::atomic<bool> leader_{false};
  mutable std::mutex mu_;
  Record observed_;
  std::chrono::steady_clock::time_point observed_time_{};
  std::string reported_leader_;
};

// "<pod name or hostname>_<random hex>": unique even when two processes share a host name.
std::string DefaultIdentity();

}  // namespace trainer::leader
