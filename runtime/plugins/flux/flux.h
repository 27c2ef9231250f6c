// Flux plugin: runs a TrainJob inside a Flux Framework cluster. Wraps the trainer command in
// /etc/flux-config/entrypoint.sh, adds the `flux-installer` init container and the Flux
// volumes to the `node` PodSet, and builds the `<tj>-flux-entrypoint` ConfigMap (entrypoint.sh,
// init.sh with broker.toml) and the `<tj>-flux-curve` Secret (a ZeroMQ CURVE certificate whose
// X25519 key is derived from sha256(TrainJob uid), so every reconcile writes the same one).
// Mirrors upstream plugins/flux/flux.go (v2.3.0). PlainML also runs for Flux runtimes and sets
// the node count and trainer env.
//
// Unlike upstream, a TrainJob without `spec.trainer` or without `spec.trainer.numNodes` does not
// crash the controller: the node count falls back to the trainer PodSet's count
// (docs/design/plugins.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/framework/interface.h"

namespace trainer::plugins {

class Flux final : public framework::Plugin,
                   public framework::EnforceMLPolicyPlugin,
                   public framework::ComponentBuilderPlugin,
                   public framework::CustomValidationPlugin,
                   public framework::WatchExtensionPlugin {
 public:
  static constexpr std::string_view kName = "Flux";
  static StatusOr<std::unique_ptr<framework::Plugin>> New(const framework::PluginContext& ctx);

  std::string_view Name() const override { return kName; }
  // framework::EnforceMLPolicyPlugin: rewrites the in-memory TrainJob's trainer command.
  Status EnforceMLPolicy(framework::Info* info, api::TrainJob& job) override;
  // framework::ComponentBuilderPlugin: the ConfigMap and the curve Secret, on every call.
  Status SyncParallelCount(framework::Info*) override { return OkStatus(); }
  StatusOr<std::vector<json::Value>> Build(framework::Info* info,
                                           const api::TrainJob& job) override;
  // framework::CustomValidationPlugin: numProcPerNode >= 1 and the reserved flux-installer
  // init container.
  field::ValidationResult Validate(const framework::Info* info, const api::TrainJob* old_job,
                                   const api::TrainJob& new_job) override;
  // framework::WatchExtensionPlugin: ConfigMaps and Secrets controlled by a TrainJob.
  std::vector<framework::Watch> Watches() const override;
};

namespace flux {

inline constexpr char kInstallerContainerName[] = "flux-installer";
inline constexpr char kInstallerImage[] = "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy";
inline constexpr char kNetworkDevice[] = "eth0";
inline constexpr char kQueuePolicy[] = "fcfs";
inline constexpr char kInstallVolumeName[] = "flux-install";
inline constexpr char kConfigMountPath[] = "/etc/flux-config";
inline constexpr char kVolumePath[] = "/mnt/flux";
inline constexpr char kCurveVolumeName[] = "flux-curve";
inline constexpr char kCurveVolumePath[] = "/curve";
inline constexpr char kMemoryVolumeName[] = "shared-memory";
inline constexpr char kMemoryVolumePath[] = "/dev/shm";
inline constexpr char kSpackViewVolumeName[] = "spack-install";
inline constexpr char kSpackViewVolumePath[] = "/opt/software";

// FLUX_VIEW_IMAGE, FLUX_NETWORK_DEVICE, FLUX_QUEUE_POLICY: defaults, overridden by literal env
// of the runtime's trainer `node` container, then by the TrainJob's trainer env.
std::map<std::string, std::string> BrokerSettings(const framework::Info* info,
                                                  const api::TrainJob& job);
// The runtime trainer command (or the TrainJob's), then the TrainJob's args, joined by spaces
// and trimmed.
std::string GetOriginalCommand(const api::TrainJob& job, const framework::Info& info);
// "0" for size 1, else "<start>-<start+size-1>".
std::string GenerateRange(int32_t size, int32_t start);
// "<prefix>-node-0-[<range>]".
std::string GenerateHostlist(std::string_view prefix, int32_t size);
// ZeroMQ Z85; "" unless the length is a multiple of 4.
std::string EncodeZ85(std::string_view data);
// The curve Secret `<tj>-flux-curve` (key curve.cert, base64 in data).
StatusOr<json::Value> BuildCurveSecret(const api::TrainJob& job);
// The text of curve.cert for `job`.
StatusOr<std::string> CurveCertificate(const api::TrainJob& job);
// Go's fmt.Sprintf over "%s" verbs only.
std::string Fill(std::string_view tmpl, std::initializer_list<std::string_view> args);

}  // namespace flux
}  // namespace trainer::plugins
