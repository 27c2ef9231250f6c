// What plugins read of the services' configuration (upstream passes its whole Configuration,
// pkg/apis/config/v1alpha1, to every plugin's New). Defaults are what deploy/ installs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "runtime/features/features.h"

namespace trainer::framework {

struct Config {
  features::FeatureGates feature_gates;
  // The namespace trainer-cpp runs in (upstream cert.GetOperatorNamespace: the pod's namespace,
  // else kubeflow-system).
  std::string operator_namespace = "kubeflow-system";
  // certManagement.webhookServiceName: the Service in front of the webhook, which also serves
  // the status server (upstream's default names its single manager Service; ours is
  // trainer-webhook, see deploy/base/webhook/service.yaml).
  std::string webhook_service_name = "trainer-webhook";
  // certManagement.webhookSecretName: the serving certificate Secret (ca.crt, tls.crt, tls.key).
  std::string webhook_secret_name = "kubeflow-trainer-webhook-cert";
  // statusServer.port.
  std::optional<int32_t> status_server_port = 10443;
};

}  // namespace trainer::framework
