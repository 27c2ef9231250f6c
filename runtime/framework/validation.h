// Admission checks more than one plugin makes, with upstream's paths and texts.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "runtime/api/types.h"
#include "runtime/field/field.h"

namespace trainer::framework {

// The reserved-env check of Torch and MPI (upstream plugins/{torch,mpi}: Validate): when
// spec.trainer.env sets any of `reserved`, one Invalid error on spec.trainer.env whose value is
// the whole list and whose detail names them sorted:
//   must not have reserved envs, invalid envs configured: [PET_MASTER_ADDR PET_NNODES]
// nullopt when it sets none.
std::optional<field::Error> ReservedEnvError(const api::Trainer& trainer,
                                             const std::set<std::string>& reserved);

}  // namespace trainer::framework
