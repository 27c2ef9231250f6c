// MPI EnforceMLPolicy, Build, Validate and watches (upstream plugins/mpi/mpi.go).
#include "runtime/plugins/mpi/mpi.h"

#include <algorithm>
#include <set>

#include "common/encoding/base64.h"
#include "runtime/api/kinds.h"
#include "runtime/framework/apply.h"
#include "runtime/framework/constants.h"
#include "runtime/framework/validation.h"

namespace trainer::plugins {

using framework::kLauncher;
using framework::kNode;

StatusOr<std::unique_ptr<framework::Plugin>> MPI::New(const framework::PluginContext& ctx) {
  return NewWithKeyGenerator(ctx, &mpi::GenerateSSHKeyPair);
}

StatusOr<std::unique_ptr<framework::Plugin>> MPI::NewWithKeyGenerator(
    const framework::PluginContext& ctx, mpi::SSHKeyGenerator generator) {
  if (ctx.reader == nullptr) {
    return InvalidArgumentError("mpi plugin: a reader is required");
  }
  if (!generator) {
    return InvalidArgumentError("mpi plugin: a key generator is required");
  }
  return std::unique_ptr<framework::Plugin>(new MPI(ctx.reader, std::move(generator)));
}

namespace {

bool HasMPI(const framework::Info* info) {
  return info != nullptr && info->runtime_policy.ml_policy && info->runtime_policy.ml_policy->mpi;
}

json::Value KeyToPath(std::string_view key, std::string_view path, int mode) {
  json::Value kp = json::Value::Object();
  kp.Set("key", json::Value(key));
  kp.Set("path", json::Value(path));
  kp.Set("mode", json::Value(mode));
  return kp;
}

json::Value SSHAuthVolume(const std::string& tj) {
  json::Value items = json::Value::Array();
  items.PushBack(
      KeyToPath(mpi::kSSHPrivateKey, mpi::kSSHPrivateKeyFile, mpi::kSSHPrivateKeyFileMode));
  items.PushBack(KeyToPath(mpi::kSSHPublicKey, mpi::kSSHPublicKeyFile, mpi::kSSHPublicKeyFileMode));
  items.PushBack(
      KeyToPath(mpi::kSSHPublicKey, mpi::kSSHAuthorizedKeys, mpi::kSSHPublicKeyFileMode));
  json::Value secret = json::Value::Object();
  secret.Set("secretName", json::Value(tj + mpi::kSSHAuthSecretSuffix));
  secret.Set("items", std::move(items));
  secret.Set("defaultMode", json::Value(mpi::kSSHAuthDefaultMode));
  json::Value v = json::Value::Object();
  v.Set("name", json::Value(mpi::kSSHAuthVolumeName));
  v.Set("secret", std::move(secret));
  return v;
}

json::Value HostfileVolume(const std::string& tj) {
  json::Value items = json::Value::Array();
  items.PushBack(KeyToPath(mpi::kHostfileName, mpi::kHostfileName, mpi::kHostfileMode));
  json::Value cm = json::Value::Object();
  cm.Set("name", json::Value(tj + mpi::kHostfileConfigMapSuffix));
  cm.Set("items", std::move(items));
  json::Value v = json::Value::Object();
  v.Set("name", json::Value(mpi::kHostfileVolumeName));
  v.Set("configMap", std::move(cm));
  return v;
}

json::Value Mount(std::string_view name, std::string_view path) {
  json::Value m = json::Value::Object();
  m.Set("name", json::Value(name));
  m.Set("mountPath", json::Value(path));
  return m;
}

json::Value Single(json::Value v) {
  json::Value list = json::Value::Array();
  list.PushBack(std::move(v));
  return list;
}

json::Value OpenMPIEnv(int32_t slots) {
  json::Value env = json::Value::Array();
  env.PushBack(framework::EnvVar(mpi::kOpenMPIEnvHostFileLocation,
                                 std::string(mpi::kHostfileDir) + "/" + mpi::kHostfileName));
  env.PushBack(framework::EnvVar(mpi::kOpenMPIEnvKeepFQDNHostNames, "true"));
  env.PushBack(framework::EnvVar(mpi::kOpenMPIEnvDefaultSlots, std::to_string(slots)));
  env.PushBack(framework::EnvVar(mpi::kOpenMPIEnvKeyRSHArgs, mpi::kOpenMPIEnvDefaultValueRSHArgs));
  return env;
}

}  // namespace

Status MPI::EnforceMLPolicy(framework::Info* info, api::TrainJob& job) {
  if (!HasMPI(info)) {
    return OkStatus();
  }
  api::MPIMLPolicySource& policy = *info->runtime_policy.ml_policy->mpi;
  bool launcher_as_node = policy.run_launcher_as_node.value_or(false);
  if (job.spec.trainer && job.spec.trainer->num_nodes) {
    // As upstream, MPI sizes the PodSet *named* node, not the trainer ancestor (the launcher
    // is the trainer ancestor and keeps mlPolicy.numNodes as its count).
    if (framework::PodSet* node = info->FindPodSetByName(kNode); node != nullptr && node->count) {
      int32_t n = *job.spec.trainer->num_nodes;
      node->count = launcher_as_node ? std::max(n - 1, 1) : n;
    }
  }
  if (job.spec.trainer && job.spec.trainer->num_proc_per_node) {
    policy.num_proc_per_node = *job.spec.trainer->num_proc_per_node;
  } else if (policy.num_proc_per_node.value_or(1) == 1) {
    // One slot per GPU when the runtime leaves the default of one process per node.
    json::Value resources = framework::ExtractResourcePerNodeFromRuntime(*info);
    if (job.spec.trainer && !job.spec.trainer->resources_per_node.IsNull()) {
      resources = job.spec.trainer->resources_per_node.Clone();
    }
    if (int64_t gpu = framework::GetNumGPUPerNode(resources); gpu > 1) {
      policy.num_proc_per_node = static_cast<int32_t>(gpu);
    }
  }

  const std::string& tj = job.metadata.name;
  std::string mount_path = policy.ssh_auth_mount_path.value_or(mpi::kDefaultSSHAuthMountPath);
  for (framework::PodSet& ps : info->template_spec.pod_sets) {
    if (ps.name != kNode && ps.name != kLauncher) {
      continue;
    }
    bool is_launcher = ps.name == kLauncher;
    framework::UpsertVolumes(ps.volumes, Single(SSHAuthVolume(tj)));
    if (is_launcher) {
      framework::UpsertVolumes(ps.volumes, Single(HostfileVolume(tj)));
    }
    for (framework::Container& c : ps.containers) {
      if (c.name != kNode) {
        continue;
      }
      framework::UpsertVolumeMounts(c.volume_mounts,
                                    Single(Mount(mpi::kSSHAuthVolumeName, mount_path)));
      if (!is_launcher) {
        continue;
      }
      framework::UpsertVolumeMounts(c.volume_mounts,
                                    Single(Mount(mpi::kHostfileVolumeName, mpi::kHostfileDir)));
      std::string impl = policy.mpi_implementation.value_or("");
      if (impl != mpi::kImplementationOpenMPI) {
        // Upstream prints the enum pointer's address here; the value is more useful.
        return InvalidArgumentError("MPI implementation for " + field::GoQuote(impl) +
                                    " doesn't supported");
      }
      framework::UpsertEnvVars(c.env, OpenMPIEnv(policy.num_proc_per_node.value_or(1)));
    }
  }
  return OkStatus();
}

StatusOr<std::vector<json::Value>> MPI::Build(framework::Info* info, const api::TrainJob& job) {
  std::vector<json::Value> objects;
  if (!HasMPI(info)) {
    return objects;
  }
  const std::string secret_name = job.metadata.name + mpi::kSSHAuthSecretSuffix;
  StatusOr<json::Value> existing =
      reader_->Get(api::kSecretGVK, job.metadata.namespace_, secret_name);
  if (!existing.ok() && !IsNotFound(existing.status())) {
    return existing.status();
  }
  if (!existing.ok()) {
    StatusOr<mpi::SSHKeyPair> key = generate_key_();
    if (!key.ok()) {
      return key.status().WithContext("failed to build SSH Auth secret");
    }
    json::Value secret = framework::NewOwnedObject(api::kSecretGVK, secret_name, job);
    secret.Set("immutable", json::Value(true));
    json::Value& data = secret["data"];
    data.Set(mpi::kSSHPrivateKey, json::Value(encoding::Base64Encode(key->private_key_pem)));
    data.Set(mpi::kSSHPublicKey, json::Value(encoding::Base64Encode(key->authorized_key)));
    secret.Set("type", json::Value(mpi::kSecretTypeSSHAuth));
    objects.push_back(std::move(secret));
  }

  const api::MPIMLPolicySource& policy = *info->runtime_policy.ml_policy->mpi;
  bool launcher_as_node = policy.run_launcher_as_node.value_or(false);
  int32_t slots = policy.num_proc_per_node.value_or(1);
  std::string hostfile;
  if (policy.mpi_implementation.value_or("") == mpi::kImplementationOpenMPI) {
    for (const framework::PodSet& ps : info->template_spec.pod_sets) {
      if (ps.name != kNode && !(launcher_as_node && ps.name == kLauncher)) {
        continue;
      }
      for (const std::string& e : ps.Endpoints()) {
        hostfile += e + " slots=" + std::to_string(slots) + "\n";
      }
    }
  }
  json::Value cm = framework::NewOwnedObject(
      api::kConfigMapGVK, job.metadata.name + mpi::kHostfileConfigMapSuffix, job);
  cm["data"].Set(mpi::kHostfileName, json::Value(hostfile));
  objects.push_back(std::move(cm));
  return objects;
}

field::ValidationResult MPI::Validate(const framework::Info* info, const api::TrainJob*,
                                      const api::TrainJob& new_job) {
  field::ValidationResult result;
  if (!HasMPI(info) || !new_job.spec.trainer) {
    return result;
  }
  const api::Trainer& trainer = *new_job.spec.trainer;
  field::Path spec = field::NewPath("spec");
  if (trainer.num_nodes.value_or(1) >= 2 &&
      info->runtime_policy.ml_policy->mpi->run_launcher_as_node.value_or(false) &&
      (info->FindPodSetByName(kLauncher) == nullptr || info->FindPodSetByName(kNode) == nullptr)) {
    result.errors.push_back(field::Invalid(spec.Child("trainer", "numNodes"),
                                           field::Int(*trainer.num_nodes),
                                           "must have 1 when MPI trainingRuntime with enabled "
                                           "runLauncherAsNode does not have either launcher and "
                                           "node"));
  }
  static const std::set<std::string> kReserved = {
      mpi::kOpenMPIEnvHostFileLocation, mpi::kOpenMPIEnvKeyRSHArgs,
      mpi::kOpenMPIEnvKeepFQDNHostNames, mpi::kOpenMPIEnvDefaultSlots};
  if (std::optional<field::Error> e = framework::ReservedEnvError(trainer, kReserved)) {
    result.errors.push_back(std::move(*e));
  }
  return result;
}

std::vector<framework::Watch> MPI::Watches() const {
  return {framework::Watch{api::kConfigMapGVK, /*owned_by_trainjob=*/true},
          framework::Watch{api::kSecretGVK, /*owned_by_trainjob=*/true}};
}

}  // namespace trainer::plugins
