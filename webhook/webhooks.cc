// RegisterWebhooks (see webhooks.h).
#include "webhook/webhooks.h"

#include <memory>

#include "webhook/trainingruntime_webhook.h"

namespace trainer::webhook {

void RegisterWebhooks(AdmissionMux& mux, const Dependencies& deps) {
  mux.Register(kMutateTrainJobPath, std::make_shared<TrainJobDefaulter>(deps.now));
  mux.Register(kValidateTrainJobPath, std::make_shared<TrainJobValidator>(deps.runtimes));
  mux.Register(kValidateTrainingRuntimePath,
               std::make_shared<TrainingRuntimeValidator>(/*cluster=*/false));
  mux.Register(kValidateClusterTrainingRuntimePath,
               std::make_shared<TrainingRuntimeValidator>(/*cluster=*/true));
}

}  // namespace trainer::webhook
