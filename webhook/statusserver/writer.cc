// KubeStatusWriter (writer.h).
#include "webhook/statusserver/writer.h"

#include "common/kube/rest_mapper.h"

namespace trainer::statusserver {

Status KubeStatusWriter::Apply(std::string_view ns, std::string_view name,
                               const TrainerStatus& status) {
  return writer_
      ->ApplyStatus(kube::kTrainJobs, ns, StatusApplyConfiguration(ns, name, status),
                    {.field_manager = kFieldManager, .force = true})
      .status();
}

}  // namespace trainer::statusserver
