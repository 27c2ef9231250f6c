// StatusWriter: how the status server writes status.trainerStatus of a TrainJob: a server-side
// apply of the /status subresource holding only that field (request.h
// StatusApplyConfiguration), field manager trainer-status, force, as upstream's
// client.Status().Apply(..., client.ForceOwnership, client.FieldOwner("trainer-status")).
// Nothing else of the status is touched, and the controller's own status writes (conditions,
// jobsStatus, field manager trainer-controller) never remove it.
//
//   KubeStatusWriter writer(client.get());
//   Status s = writer.Apply("ns", "job", status);   // kInvalid (422) with the apiserver's text
#pragma once

#include <string_view>

#include "common/kube/client.h"
#include "common/status/status.h"
#include "webhook/statusserver/request.h"

namespace trainer::statusserver {

// The field manager of status.trainerStatus.
inline constexpr char kFieldManager[] = "trainer-status";

class StatusWriter {
 public:
  virtual ~StatusWriter() = default;
  // The error is the apiserver's: kInvalid with its message, kNotFound, kUnavailable, ...
  virtual Status Apply(std::string_view ns, std::string_view name, const TrainerStatus& status) = 0;
};

class KubeStatusWriter final : public StatusWriter {
 public:
  explicit KubeStatusWriter(kube::Writer* writer) : writer_(writer) {}
  Status Apply(std::string_view ns, std::string_view name, const TrainerStatus& status) override;

 private:
  kube::Writer* writer_;
};

}  // namespace trainer::statusserver
