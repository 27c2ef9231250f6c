// Flux EnforceMLPolicy, Build, Validate and watches (upstream plugins/flux/flux.go).
#include "runtime/plugins/flux/flux.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <memory>
#include <vector>

#include "common/encoding/base64.h"
#include "runtime/api/kinds.h"
#include "runtime/framework/apply.h"
#include "runtime/framework/constants.h"
#include "runtime/framework/trainjob.h"
#include "runtime/plugins/flux/templates.h"

namespace trainer::plugins {

using framework::kAncestorTrainer;
using framework::kNode;

StatusOr<std::unique_ptr<framework::Plugin>> Flux::New(const framework::PluginContext&) {
  return std::unique_ptr<framework::Plugin>(new Flux());
}

namespace flux {

namespace {

std::string ConfigMapName(const api::TrainJob& job) {
  return job.metadata.name + "-flux-entrypoint";
}
std::string CurveSecretName(const api::TrainJob& job) { return job.metadata.name + "-flux-curve"; }

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\n\r\v\f");
  if (b == std::string_view::npos) {
    return {};
  }
  size_t e = s.find_last_not_of(" \t\n\r\v\f");
  return s.substr(b, e - b + 1);
}

json::Value Mount(std::string_view name, std::string_view path, bool read_only) {
  json::Value m = json::Value::Object();
  m.Set("name", json::Value(name));
  if (read_only) {
    m.Set("readOnly", json::Value(true));
  }
  m.Set("mountPath", json::Value(path));
  return m;
}

json::Value EmptyDirVolume(std::string_view name, std::string_view medium = "") {
  json::Value v = json::Value::Object();
  v.Set("name", json::Value(name));
  json::Value& dir = v["emptyDir"];
  dir = json::Value::Object();
  if (!medium.empty()) {
    dir.Set("medium", json::Value(medium));
  }
  return v;
}

// spack-install, flux-install, the entrypoint ConfigMap, shared-memory, flux-curve.
json::Value Volumes(const api::TrainJob& job) {
  json::Value vols = json::Value::Array();
  vols.PushBack(EmptyDirVolume(kSpackViewVolumeName));
  vols.PushBack(EmptyDirVolume(kInstallVolumeName));
  json::Value cm = json::Value::Object();
  cm.Set("name", json::Value(ConfigMapName(job)));
  json::Value& src = cm["configMap"];
  src.Set("name", json::Value(ConfigMapName(job)));
  src.Set("defaultMode", json::Value(0755));
  vols.PushBack(std::move(cm));
  vols.PushBack(EmptyDirVolume(kMemoryVolumeName, "Memory"));
  json::Value curve = json::Value::Object();
  curve.Set("name", json::Value(kCurveVolumeName));
  json::Value& secret = curve["secret"];
  secret.Set("secretName", json::Value(CurveSecretName(job)));
  secret.Set("defaultMode", json::Value(0400));
  vols.PushBack(std::move(curve));
  return vols;
}

framework::Container Installer(const api::TrainJob& job, const std::string& image) {
  framework::Container c;
  c.name = kInstallerContainerName;
  c.image = image;
  c.command = {"/bin/bash", "/etc/flux-config/init.sh"};
  c.volume_mounts.PushBack(Mount(kInstallVolumeName, kVolumePath, false));
  c.volume_mounts.PushBack(Mount(ConfigMapName(job), kConfigMountPath, true));
  return c;
}

json::Value NodeMounts(const api::TrainJob& job) {
  json::Value m = json::Value::Array();
  m.PushBack(Mount(kInstallVolumeName, kVolumePath, false));
  m.PushBack(Mount(kSpackViewVolumeName, kSpackViewVolumePath, false));
  m.PushBack(Mount(ConfigMapName(job), kConfigMountPath, true));
  m.PushBack(Mount(kCurveVolumeName, kCurveVolumePath, true));
  m.PushBack(Mount(kMemoryVolumeName, kMemoryVolumePath, true));
  return m;
}

// numNodes: the TrainJob's, else the trainer PodSet's count (which PlainML set from the
// runtime's numNodes). Upstream dereferences a nil numNodes.
int32_t NumNodes(const framework::Info& info, const api::TrainJob& job) {
  if (job.spec.trainer && job.spec.trainer->num_nodes) {
    return *job.spec.trainer->num_nodes;
  }
  const framework::PodSet* ps = info.FindPodSetByAncestor(kAncestorTrainer);
  return ps != nullptr ? ps->count.value_or(1) : 1;
}

int32_t TasksPerNode(const framework::Info& info, const api::TrainJob& job) {
  if (job.spec.trainer && job.spec.trainer->num_proc_per_node) {
    return *job.spec.trainer->num_proc_per_node;
  }
  return info.runtime_policy.ml_policy->flux->num_proc_per_node.value_or(1);
}

std::string BrokerConfig(const api::TrainJob& job, const std::string& hosts,
                         const std::map<std::string, std::string>& settings) {
  std::string fqdn = job.metadata.name + "." + job.metadata.namespace_ + ".svc.cluster.local";
  std::string bind = "tcp://" + settings.at("FLUX_NETWORK_DEVICE") + ":%p";
  std::string connect = "tcp://%h." + fqdn + ":%p";
  return Fill(kBrokerTemplate, {bind, connect, hosts, settings.at("FLUX_QUEUE_POLICY")});
}

std::string InitScript(const framework::Info& info, const api::TrainJob& job,
                       const std::map<std::string, std::string>& settings) {
  std::string hosts = GenerateHostlist(job.metadata.name, NumNodes(info, job));
  return Fill(kInitTemplate,
              {"/opt/view", job.metadata.name + "-0", hosts, BrokerConfig(job, hosts, settings)});
}

std::string EntrypointScript(const framework::Info& info, const api::TrainJob& job) {
  int32_t nodes = NumNodes(info, job);
  int32_t tasks = TasksPerNode(info, job);
  std::string flags = "-N " + std::to_string(nodes) + " -n " + std::to_string(tasks * nodes);
  json::Value resources = framework::ExtractResourcePerNodeFromRuntime(info);
  if (job.spec.trainer && !job.spec.trainer->resources_per_node.IsNull()) {
    resources = job.spec.trainer->resources_per_node.Clone();
  }
  int64_t gpus = framework::GetNumGPUPerNode(resources);
  std::string rspec = "--cores=" + GenerateRange(tasks, 0);
  if (gpus > 0) {
    flags += " -g " + std::to_string(gpus);
    rspec += " --gpu=" + GenerateRange(static_cast<int32_t>(gpus), 0);
  }
  return Fill(kEntrypointTemplate, {rspec, framework::NodeZeroPodName(job), flags});
}

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};

}  // namespace

std::string Fill(std::string_view tmpl, std::initializer_list<std::string_view> args) {
  std::string out;
  auto arg = args.begin();
  size_t pos = 0;
  while (true) {
    size_t at = tmpl.find("%s", pos);
    if (at == std::string_view::npos || arg == args.end()) {
      out.append(tmpl.substr(pos));
      return out;
    }
    out.append(tmpl.substr(pos, at - pos));
    out.append(*arg++);
    pos = at + 2;
  }
}

std::map<std::string, std::string> BrokerSettings(const framework::Info* info,
                                                  const api::TrainJob& job) {
  std::map<std::string, std::string> settings = {{"FLUX_VIEW_IMAGE", kInstallerImage},
                                                 {"FLUX_NETWORK_DEVICE", kNetworkDevice},
                                                 {"FLUX_QUEUE_POLICY", kQueuePolicy}};
  auto overlay = [&settings](const json::Value& env, bool literal_only) {
    if (!env.IsArray()) {
      return;
    }
    for (const json::Value& e : env.elements()) {
      auto it = settings.find(framework::StringField(e, "name"));
      const json::Value* value = e.Find("value");
      if (it == settings.end() || (literal_only && (value == nullptr || !value->IsString()))) {
        continue;
      }
      it->second = value != nullptr && value->IsString() ? value->AsString() : "";
    }
  };
  if (info != nullptr) {
    if (const framework::Container* c =
            const_cast<framework::Info*>(info)->FindContainerByPodSetAncestorContainerName(
                kAncestorTrainer, kNode)) {
      overlay(c->env, /*literal_only=*/true);
    }
  }
  if (job.spec.trainer) {
    overlay(job.spec.trainer->env, /*literal_only=*/false);
  }
  return settings;
}

std::string GetOriginalCommand(const api::TrainJob& job, const framework::Info& info) {
  std::vector<std::string> parts;
  if (const framework::Container* c =
          const_cast<framework::Info&>(info).FindContainerByPodSetAncestorContainerName(
              kAncestorTrainer, kNode)) {
    parts = c->command;
  }
  if (job.spec.trainer && job.spec.trainer->command) {
    parts = *job.spec.trainer->command;
  }
  if (job.spec.trainer && job.spec.trainer->args) {
    parts.insert(parts.end(), job.spec.trainer->args->begin(), job.spec.trainer->args->end());
  }
  std::string joined;
  for (size_t i = 0; i < parts.size(); ++i) {
    joined += (i == 0 ? "" : " ") + parts[i];
  }
  return std::string(Trim(joined));
}

std::string GenerateRange(int32_t size, int32_t start) {
  if (size == 1) {
    return std::to_string(start);
  }
  return std::to_string(start) + "-" + std::to_string(start + size - 1);
}

std::string GenerateHostlist(std::string_view prefix, int32_t size) {
  return std::string(prefix) + "-" + kNode + "-0-[" + GenerateRange(size, 0) + "]";
}

std::string EncodeZ85(std::string_view data) {
  static constexpr char kCharset[] =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
  if (data.size() % 4 != 0) {
    return "";
  }
  std::string out;
  for (size_t i = 0; i < data.size(); i += 4) {
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) {
      v = (v << 8) | static_cast<unsigned char>(data[i + k]);
    }
    for (uint32_t div : {52200625u, 614125u, 7225u, 85u, 1u}) {
      out.push_back(kCharset[(v / div) % 85]);
    }
  }
  return out;
}

StatusOr<std::string> CurveCertificate(const api::TrainJob& job) {
  unsigned char seed[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(job.metadata.uid.data()), job.metadata.uid.size(),
         seed);
  // Go's ecdh.X25519().NewPrivateKey(seed): the seed is the private key as is (clamping happens
  // inside the scalar multiplication, as in OpenSSL).
  std::unique_ptr<EVP_PKEY, PkeyFree> key(
      EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nullptr, seed, sizeof(seed)));
  unsigned char pub[32];
  size_t pub_len = sizeof(pub);
  if (!key || EVP_PKEY_get_raw_public_key(key.get(), pub, &pub_len) != 1 || pub_len != 32) {
    return InternalError("failed to create curve private key");
  }
  std::string z85_secret = EncodeZ85(std::string_view(reinterpret_cast<char*>(seed), 32));
  std::string z85_public = EncodeZ85(std::string_view(reinterpret_cast<char*>(pub), 32));
  return "#  ZeroMQ CURVE Secret Certificate\n"
         "#  Generated by Kubeflow Trainer\n\n"
         "metadata\n"
         "    name = \"" +
         job.metadata.name +
         "\"\n"
         "curve\n"
         "    public-key = \"" +
         z85_public +
         "\"\n"
         "    secret-key = \"" +
         z85_secret + "\"\n";
}

StatusOr<json::Value> BuildCurveSecret(const api::TrainJob& job) {
  ASSIGN_OR_RETURN(std::string cert, CurveCertificate(job));
  json::Value secret = framework::NewOwnedObject(api::kSecretGVK, CurveSecretName(job), job);
  secret["data"].Set("curve.cert", json::Value(encoding::Base64Encode(cert)));
  return secret;
}

}  // namespace flux

namespace {
bool HasFlux(const framework::Info* info) {
  return info != nullptr && info->runtime_policy.ml_policy && info->runtime_policy.ml_policy->flux;
}
}  // namespace

Status Flux::EnforceMLPolicy(framework::Info* info, api::TrainJob& job) {
  if (!HasFlux(info)) {
    return OkStatus();
  }
  std::map<std::string, std::string> settings = flux::BrokerSettings(info, job);
  std::string original = flux::GetOriginalCommand(job, *info);
  if (!job.spec.trainer) {
    // Upstream dereferences the nil trainer; an empty one lets the builder wrap the runtime's
    // command instead.
    job.spec.trainer.emplace();
  }
  job.spec.trainer->command =
      std::vector<std::string>{"/bin/bash", "/etc/flux-config/entrypoint.sh", original};
  job.spec.trainer->args.reset();  // nil: the builder keeps the template's args

  for (framework::PodSet& ps : info->template_spec.pod_sets) {
    if (ps.name != kNode) {
      continue;
    }
    framework::UpsertVolumes(ps.volumes, flux::Volumes(job));
    ps.init_containers.push_back(flux::Installer(job, settings.at("FLUX_VIEW_IMAGE")));
    for (framework::Container& c : ps.containers) {
      if (c.name == kNode) {
        framework::UpsertVolumeMounts(c.volume_mounts, flux::NodeMounts(job));
      }
    }
  }
  return OkStatus();
}

StatusOr<std::vector<json::Value>> Flux::Build(framework::Info* info, const api::TrainJob& job) {
  std::vector<json::Value> out;
  if (!HasFlux(info)) {
    return out;
  }
  std::map<std::string, std::string> settings = flux::BrokerSettings(info, job);
  json::Value cm = framework::NewOwnedObject(api::kConfigMapGVK, flux::ConfigMapName(job), job);
  json::Value& data = cm["data"];
  data.Set("entrypoint.sh", json::Value(flux::EntrypointScript(*info, job)));
  data.Set("init.sh", json::Value(flux::InitScript(*info, job, settings)));
  out.push_back(std::move(cm));
  ASSIGN_OR_RETURN(json::Value secret, flux::BuildCurveSecret(job));
  out.push_back(std::move(secret));
  return out;
}

field::ValidationResult Flux::Validate(const framework::Info* info, const api::TrainJob*,
                                       const api::TrainJob& new_job) {
  field::ValidationResult result;
  if (!HasFlux(info)) {
    return result;
  }
  std::optional<int32_t> procs = info->runtime_policy.ml_policy->flux->num_proc_per_node;
  if (new_job.spec.trainer && new_job.spec.trainer->num_proc_per_node) {
    procs = new_job.spec.trainer->num_proc_per_node;
  }
  if (procs && *procs < 1) {
    result.errors.push_back(field::Invalid(field::NewPath("spec", "trainer", "numProcPerNode"),
                                           field::Int(*procs),
                                           "must be greater than or equal to 1 for Flux TrainJob"));
  }
  for (const framework::PodSet& ps : info->template_spec.pod_sets) {
    if (ps.name != kNode) {
      continue;
    }
    for (const framework::Container& ic : ps.init_containers) {
      if (ic.name == flux::kInstallerContainerName) {
        result.errors.push_back(field::Invalid(field::NewPath("spec", "trainer", "initContainers"),
                                               field::String(ic.name),
                                               "InitContainer 'flux-installer' is reserved"));
      }
    }
  }
  return result;
}

std::vector<framework::Watch> Flux::Watches() const {
  return {framework::Watch{api::kConfigMapGVK, /*owned_by_trainjob=*/true},
          framework::Watch{api::kSecretGVK, /*owned_by_trainjob=*/true}};
}

}  // namespace trainer::plugins
