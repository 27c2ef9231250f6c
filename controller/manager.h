// Manager: trainer-controller in its service frame (common/service/frame.h), wired together
// (controller-runtime's Manager reduced to this binary): the REST client; informer caches for
// TrainJobs, both runtime kinds and every kind the runtime's plugins watch
// (framework::WatchExtensionPlugin: JobSet, ConfigMap, Secret; PodGroups, LimitRanges and
// RuntimeClasses when the PodGroup kind is installed), with the indexes the plugins' mappings
// list by; event handlers that map those kinds' events to TrainJobs (the controlling TrainJob, or
// a plugin's mapping); the TrainJob and runtime controllers on workqueues; leader election. The
// frame serves its probes (ready once every cache has its first list) and metrics.
//
// Caches start at once on every replica (a standby takes over with warm caches); controllers run
// only while leading. Stop order on SIGTERM: stop handing out keys, let in-flight reconciles
// finish, release the Lease, stop the caches; then the frame stops its servers.
//
//   service::Frame frame(options.frame);
//   return frame.Run([&](service::Frame& f) { return Manager::New(options, f); });
#pragma once

#include <memory>
#include <stop_token>

#include "common/kube/client.h"
#include "common/service/frame.h"
#include "common/status/status.h"
#include "controller/options.h"

namespace trainer::controller {

class Manager : public service::Runnable {
 public:
  // `client` (optional; tests pass kube::testing::FakeClient) replaces the client built from
  // the kubeconfig; it must outlive the manager.
  static StatusOr<std::unique_ptr<service::Runnable>> New(const Options& options,
                                                          service::Frame& frame,
                                                          kube::Client* client = nullptr);

  // Blocks until `stop` is requested (returns OK after a graceful stop) or leadership is lost
  // (returns an error; the process should exit so a fresh start campaigns again).
  Status Run(std::stop_token stop) override = 0;
};

}  // namespace trainer::controller
