// Rotator: the webhook's certificates, kept valid while it runs (upstream: cert-controller's
// CertRotator, run by every replica without leader election). Each replica:
//  - reads the shared Secret, plans (certs/plan.h), and writes the planned state with the
//    resourceVersion it read as the precondition: of replicas acting at once one write wins, the
//    others get 409 Conflict, read again and find the work done;
//  - serves the Secret's serving pair in-process through `serve` (no files, no restart);
//  - writes the Secret's bundle into caBundle of every webhook of both configurations, with
//    their resourceVersion as the precondition (read before the Secret, so an older bundle can
//    never overwrite a newer one);
//  - reports which CA signed what it serves while a CA rotation is under way, so the old CA
//    leaves the bundle only when no replica serves its certificates any more.
// Step() is one such pass (one reconcile in RotatorOptions::metrics); Start() queues passes, as
// upstream's controller does, on a one-key workqueue named "cert-rotator": on every change of the
// Secret or a configuration (watched), at the times the plan names, and after errors with
// backoff (0.5 s doubling to 30 s, reset by a success).
//
//   certs::Rotator rotator(client, {.ns = "kubeflow-system", .replica = pod_name,
//                                   .policy = {.dns_names =
//                                   {"trainer-webhook.kubeflow-system.svc"}}, .serve = [&](const
//                                   certs::KeyPair& p, const std::string& ca) {
//                                     return watcher.Use(p.cert_pem, p.key_pem, ca); }});
//   rotator.Start();
//   bool ready = rotator.ready();   // serving, and both configurations trust its CA
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "certs/plan.h"
#include "certs/state.h"
#include "common/kube/client.h"
#include "common/metrics/reconcile.h"
#include "common/workqueue/queue.h"

namespace trainer::informer {
class Informer;
}

namespace trainer::certs {

struct RotatorOptions {
  std::string ns;  // of the Secret (upstream: the pod's namespace)
  std::string secret_name = "kubeflow-trainer-webhook-cert";
  std::string mutating_configuration = "defaulter.trainer.kubeflow.org";
  std::string validating_configuration = "validator.trainer.kubeflow.org";
  std::string replica;  // this replica's id in reports (the pod name)
  Policy policy;
  std::function<Time()> now = [] { return std::chrono::system_clock::now(); };
  // Receives the pair to serve and the PEM of the CA that signed it whenever the Secret's pair
  // changes. An error keeps the previous pair (and is retried at the next pass).
  std::function<Status(const KeyPair& serving, const std::string& ca_pem)> serve;
  std::string field_manager = "trainer-webhook";
  // When set, every Step is counted as one reconcile of this controller (trainer-webhook's is
  // "cert-rotator", upstream's name): an error is a failed pass that Run retries.
  metrics::ReconcileMetrics* metrics = nullptr;
  // When set, Start()'s queue exports its workqueue_* metrics through it.
  workqueue::WorkqueueMetricsProvider* queue_metrics = nullptr;
};

// Checks what a misconfiguration would break silently: names set, at least one DNS name, a CA
// that outlives two lookaheads (else every new CA would start rotating at once).
Status ValidateRotatorOptions(const RotatorOptions& options);

class Rotator {
 public:
  Rotator(kube::Client& client, RotatorOptions options);
  ~Rotator();  // Stop()s
  Rotator(const Rotator&) = delete;
  Rotator& operator=(const Rotator&) = delete;

  // One pass: read, plan, write, serve, inject, until nothing is left to do. Returns when the
  // next pass is due. Not thread-safe against itself; Start() runs it on one thread.
  StatusOr<Time> Step();

  // Watches the Secret and both configurations and runs Step on its own thread.
  void Start();
  void Stop();

  // A certificate is served and both configurations carry a bundle with its CA.
  bool ready() const { return ready_.load(std::memory_order_acquire); }
  bool WaitReady(std::chrono::milliseconds timeout);
  // Fingerprint of the CA that signed the certificate served ("" before one is).
  std::string serving_ca() const;

 private:
  struct Configuration {
    kube::GroupVersionResource gvr;
    std::string name;
    std::optional<json::Value> object;  // absent: not found
  };
  StatusOr<Time> Pass();  // Step without the metrics
  StatusOr<std::vector<Configuration>> ReadConfigurations();
  // Every webhook's caBundle is `bundle` (vacuously true for absent configurations).
  static bool Carries(const json::Value& config, const std::string& bundle);
  static bool Carries(const std::vector<Configuration>& configs, const std::string& bundle);
  Status Inject(const std::vector<Configuration>& configs, const std::string& bundle);
  void Serve(const State& state);
  void Run();
  void Wake();

  kube::Client& client_;
  const RotatorOptions options_;

  mutable std::mutex mu_;  // guards what Step shares with readers
  std::string served_cert_;  // fingerprint of the certificate handed to `serve`
  std::string served_ca_;
  std::atomic<bool> ready_{false};
  bool missing_logged_ = false;

  std::unique_ptr<workqueue::Workqueue> queue_;  // from Start() to Stop()
  std::vector<std::unique_ptr<informer::Informer>> informers_;
  std::thread thread_;
};

}  // namespace trainer::certs
