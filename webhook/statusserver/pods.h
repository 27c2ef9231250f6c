// InformerPodDirectory: the pods of TrainJobs, cached for pod binding (auth.h). One informer on
// pods carrying JobSet's jobset-name label (a TrainJob's JobSet has the TrainJob's name), each
// trimmed to its name, uid, that label and its phase, so the cache stays small however many
// pods run. Used only with --status-server-require-pod-binding; the webhook then needs
// list/watch on pods (deploy/components/status-server-pod-binding).
//
//   InformerPodDirectory pods(client);
//   pods.Start();
//   std::optional<std::string> job = pods.TrainJobOf("ns", "job-node-0-0-x", uid);
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/informer/informer.h"
#include "webhook/statusserver/auth.h"

namespace trainer::statusserver {

inline constexpr char kJobSetNameLabel[] = "jobset.sigs.k8s.io/jobset-name";

class InformerPodDirectory final : public PodDirectory {
 public:
  explicit InformerPodDirectory(kube::Client& client);

  void Start() { informer_.Start(); }
  void Stop() { informer_.Stop(); }

  bool HasSynced() const override { return informer_.HasSynced(); }
  std::optional<std::string> TrainJobOf(std::string_view ns, std::string_view name,
                                        std::string_view uid) const override;

 private:
  informer::Informer informer_;
};

}  // namespace trainer::statusserver
