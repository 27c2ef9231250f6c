// TrainJobStatus plugin (feature gate TrainJobStatus, alpha, off by default): gives the trainer
// pods what they need to report progress to the status server, as upstream
// plugins/trainjobstatus/trainjobstatus.go (v2.3.0) does, for every runtime:
//   - EnforceMLPolicy: into every container of the trainer-ancestor PodSet, the env
//     KUBEFLOW_TRAINER_SERVER_URL (https://<webhook Service>.<operator namespace>.svc:<port>
//     + StatusPath), KUBEFLOW_TRAINER_SERVER_CA_CERT and KUBEFLOW_TRAINER_SERVER_TOKEN (files
//     under /var/run/secrets/kubeflow/trainer) and the read-only mount of the projected volume
//     kubeflow-trainer-token: a service-account token for TokenAudience (3600 s) and ca.crt
//     from the ConfigMap below;
//   - Build: ConfigMap <trainjob>-tls-config holding the ca.crt of the webhook's serving
//     certificate Secret, owned by the TrainJob.
// Registered only while the gate is on (runtime/plugins/registry.cc), so with the gate off
// nothing of this reaches any object.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "runtime/framework/interface.h"

namespace trainer::plugins {

class TrainJobStatus final : public framework::Plugin,
                             public framework::EnforceMLPolicyPlugin,
                             public framework::ComponentBuilderPlugin {
 public:
  static constexpr std::string_view kName = "TrainJobStatus";
  static StatusOr<std::unique_ptr<framework::Plugin>> New(const framework::PluginContext& ctx);
  // Whether the registry instantiates it: the feature gate.
  static bool Enabled(const framework::Config& config);

  std::string_view Name() const override { return kName; }
  // framework::EnforceMLPolicyPlugin
  Status EnforceMLPolicy(framework::Info* info, api::TrainJob& job) override;
  // framework::ComponentBuilderPlugin
  Status SyncParallelCount(framework::Info*) override { return OkStatus(); }
  StatusOr<std::vector<json::Value>> Build(framework::Info* info,
                                           const api::TrainJob& job) override;

 private:
  explicit TrainJobStatus(const framework::PluginContext& ctx)
      : reader_(ctx.reader), config_(ctx.config) {}

  const framework::Reader* reader_;
  const framework::Config config_;
};

namespace trainjobstatus {

inline constexpr char kEnvServerURL[] = "KUBEFLOW_TRAINER_SERVER_URL";
inline constexpr char kEnvCACert[] = "KUBEFLOW_TRAINER_SERVER_CA_CERT";
inline constexpr char kEnvToken[] = "KUBEFLOW_TRAINER_SERVER_TOKEN";
inline constexpr char kMountPath[] = "/var/run/secrets/kubeflow/trainer";
inline constexpr char kTokenVolume[] = "kubeflow-trainer-token";
inline constexpr char kTokenFile[] = "token";
inline constexpr char kCACertKey[] = "ca.crt";
inline constexpr int64_t kTokenExpirySeconds = 3600;

// The audience a TrainJob's status tokens carry: "trainer.kubeflow.org/v1alpha1/namespaces/
// <ns>/trainjobs/<name>/status" (upstream statusserver.TokenAudience).
std::string TokenAudience(std::string_view ns, std::string_view name);
// The status endpoint's path: "/apis/trainer.kubeflow.org/v1alpha1/namespaces/<ns>/trainjobs/
// <name>/status" (upstream statusserver.StatusUrl).
std::string StatusPath(std::string_view ns, std::string_view name);
// "<trainjob>-tls-config".
std::string TlsConfigMapName(std::string_view trainjob);

}  // namespace trainjobstatus

}  // namespace trainer::plugins
