// MPI plugin (OpenMPI): the SSH key Secret and hostfile ConfigMap of an MPI TrainJob, their
// volumes and mounts on the `launcher` and `node` PodSets, the OMPI_MCA_* launcher env, the
// `node` count (one node less with runLauncherAsNode), and the MPI admission checks. Mirrors
// upstream plugins/mpi/mpi.go (v2.3.0).
//
// Keys come from an injected generator: fresh OpenSSL P-521 keys in production
// (MPI::New), a fixed key in tests and trainer-render goldens (MPI::NewWithKeyGenerator).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "runtime/framework/interface.h"
#include "runtime/plugins/mpi/ssh_key.h"

namespace trainer::plugins {

class MPI final : public framework::Plugin,
                  public framework::EnforceMLPolicyPlugin,
                  public framework::ComponentBuilderPlugin,
                  public framework::CustomValidationPlugin,
                  public framework::WatchExtensionPlugin {
 public:
  static constexpr std::string_view kName = "MPI";
  static StatusOr<std::unique_ptr<framework::Plugin>> New(const framework::PluginContext& ctx);
  static StatusOr<std::unique_ptr<framework::Plugin>> NewWithKeyGenerator(
      const framework::PluginContext& ctx, mpi::SSHKeyGenerator generator);
  MPI(const framework::Reader* reader, mpi::SSHKeyGenerator generator)
      : reader_(reader), generate_key_(std::move(generator)) {}

  std::string_view Name() const override { return kName; }
  // framework::EnforceMLPolicyPlugin
  Status EnforceMLPolicy(framework::Info* info, api::TrainJob& job) override;
  // framework::ComponentBuilderPlugin: the Secret `<tj>-mpi-ssh-auth` only while it does not
  // exist (it is immutable), then the ConfigMap `<tj>-mpi-hostfile` on every call.
  Status SyncParallelCount(framework::Info*) override { return OkStatus(); }
  StatusOr<std::vector<json::Value>> Build(framework::Info* info,
                                           const api::TrainJob& job) override;
  // framework::CustomValidationPlugin: numNodes with runLauncherAsNode, and the reserved OpenMPI
  // env vars.
  field::ValidationResult Validate(const framework::Info* info, const api::TrainJob* old_job,
                                   const api::TrainJob& new_job) override;
  // framework::WatchExtensionPlugin: ConfigMaps and Secrets controlled by a TrainJob.
  std::vector<framework::Watch> Watches() const override;

 private:
  const framework::Reader* reader_;
  mpi::SSHKeyGenerator generate_key_;
};

namespace mpi {

inline constexpr char kSSHAuthSecretSuffix[] = "-mpi-ssh-auth";
inline constexpr char kSSHAuthVolumeName[] = "mpi-ssh-auth";
inline constexpr char kSSHPrivateKey[] = "ssh-privatekey";  // corev1.SSHAuthPrivateKey
inline constexpr char kSSHPublicKey[] = "ssh-publickey";
inline constexpr char kSSHPrivateKeyFile[] = "id_rsa";
inline constexpr char kSSHPublicKeyFile[] = "id_rsa.pub";
inline constexpr char kSSHAuthorizedKeys[] = "authorized_keys";
inline constexpr int kSSHAuthDefaultMode = 0400;
inline constexpr int kSSHPrivateKeyFileMode = 0640;
inline constexpr int kSSHPublicKeyFileMode = 0644;
inline constexpr char kSecretTypeSSHAuth[] = "kubernetes.io/ssh-auth";
inline constexpr char kHostfileConfigMapSuffix[] = "-mpi-hostfile";
inline constexpr char kHostfileVolumeName[] = "mpi-hostfile";
inline constexpr char kHostfileName[] = "hostfile";
inline constexpr char kHostfileDir[] = "/etc/mpi";
inline constexpr int kHostfileMode = 0444;
inline constexpr char kDefaultSSHAuthMountPath[] = "/root/.ssh";  // CRD default
inline constexpr char kImplementationOpenMPI[] = "OpenMPI";

inline constexpr char kOpenMPIEnvHostFileLocation[] = "OMPI_MCA_orte_default_hostfile";
inline constexpr char kOpenMPIEnvKeepFQDNHostNames[] = "OMPI_MCA_orte_keep_fqdn_hostnames";
inline constexpr char kOpenMPIEnvDefaultSlots[] = "OMPI_MCA_orte_set_default_slots";
inline constexpr char kOpenMPIEnvKeyRSHArgs[] = "OMPI_MCA_plm_rsh_args";
inline constexpr char kOpenMPIEnvDefaultValueRSHArgs[] = "-o ConnectionAttempts=10";

}  // namespace mpi
}  // namespace trainer::plugins
