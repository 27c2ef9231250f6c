// Manager: everything trainer-controller runs, wired together (controller-runtime's Manager
// reduced to this binary): the REST client, informer caches for TrainJobs, both runtime kinds and
// the owned kinds (JobSet, ConfigMap, Secret, PodGroups when installed), the TrainJob and runtime
// controllers on workqueues, leader election, the probe and metrics servers, and graceful stop.
//
// Caches start at once on every replica (a standby takes over with warm caches); controllers run
// only while leading. Stop order on SIGTERM: stop handing out keys, let in-flight reconciles
// finish, release the Lease, stop the caches and servers.
//
//   ASSIGN_OR_RETURN(auto mgr, Manager::New(options));
//   return mgr->Run(stop_token);   // until stop (OK) or lost leadership (error)
#pragma once

#include <memory>
#include <stop_token>

#include "common/status/status.h"
#include "controller/options.h"

namespace trainer::controller {

class Manager {
 public:
  static StatusOr<std::unique_ptr<Manager>> New(const Options& options);
  virtual ~Manager() = default;

  // Blocks until `stop` is requested (returns OK after a graceful stop) or leadership is lost
  // (returns an error; the process should exit so a fresh start campaigns again).
  virtual Status Run(std::stop_token stop) = 0;
};

}  // namespace trainer::controller
