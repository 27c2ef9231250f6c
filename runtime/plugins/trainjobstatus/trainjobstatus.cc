// TrainJobStatus EnforceMLPolicy and Build (upstream plugins/trainjobstatus/trainjobstatus.go).
#include "runtime/plugins/trainjobstatus/trainjobstatus.h"

#include "certs/state.h"
#include "common/encoding/base64.h"
#include "runtime/api/kinds.h"
#include "runtime/framework/apply.h"
#include "runtime/framework/constants.h"

namespace trainer::plugins {

namespace trainjobstatus {

std::string TokenAudience(std::string_view ns, std::string_view name) {
  return "trainer.kubeflow.org/v1alpha1/namespaces/" + std::string(ns) + "/trainjobs/" +
         std::string(name) + "/status";
}

std::string StatusPath(std::string_view ns, std::string_view name) {
  return "/apis/trainer.kubeflow.org/v1alpha1/namespaces/" + std::string(ns) + "/trainjobs/" +
         std::string(name) + "/status";
}

std::string TlsConfigMapName(std::string_view trainjob) {
  return std::string(trainjob) + "-tls-config";
}

}  // namespace trainjobstatus

namespace {

using namespace trainjobstatus;

json::Value TokenVolume(const api::TrainJob& job) {
  json::Value token = json::Value::Object();
  token.Set("audience", TokenAudience(job.metadata.namespace_, job.metadata.name));
  token.Set("expirationSeconds", json::Value(kTokenExpirySeconds));
  token.Set("path", kTokenFile);
  json::Value item = json::Value::Object();
  item.Set("key", kCACertKey);
  item.Set("path", kCACertKey);
  json::Value items = json::Value::Array();
  items.PushBack(std::move(item));
  json::Value config_map = json::Value::Object();
  config_map.Set("name", TlsConfigMapName(job.metadata.name));
  config_map.Set("items", std::move(items));

  json::Value sources = json::Value::Array();
  sources.PushBack(json::Value::Object()).Set("serviceAccountToken", std::move(token));
  sources.PushBack(json::Value::Object()).Set("configMap", std::move(config_map));
  json::Value volume = json::Value::Object();
  volume.Set("name", kTokenVolume);
  volume.Set("projected", json::Value::Object()).Set("sources", std::move(sources));
  return volume;
}

json::Value TokenVolumeMount() {
  json::Value mount = json::Value::Object();
  mount.Set("name", kTokenVolume);
  mount.Set("mountPath", kMountPath);
  mount.Set("readOnly", json::Value(true));
  return mount;
}

}  // namespace

StatusOr<std::unique_ptr<framework::Plugin>> TrainJobStatus::New(
    const framework::PluginContext& ctx) {
  return std::unique_ptr<framework::Plugin>(new TrainJobStatus(ctx));
}

bool TrainJobStatus::Enabled(const framework::Config& config) {
  return config.feature_gates.Enabled(features::kTrainJobStatus);
}

Status TrainJobStatus::EnforceMLPolicy(framework::Info* info, api::TrainJob& job) {
  if (info == nullptr) {
    return OkStatus();
  }
  if (!config_.status_server_port) {
    return InvalidArgumentError("missing status server port");
  }
  const std::string url = "https://" + config_.webhook_service_name + "." +
                          config_.operator_namespace +
                          ".svc:" + std::to_string(*config_.status_server_port) +
                          StatusPath(job.metadata.namespace_, job.metadata.name);
  json::Value env = json::Value::Array();
  env.PushBack(framework::EnvVar(kEnvServerURL, url));
  env.PushBack(framework::EnvVar(kEnvCACert, std::string(kMountPath) + "/" + kCACertKey));
  env.PushBack(framework::EnvVar(kEnvToken, std::string(kMountPath) + "/" + kTokenFile));
  json::Value mounts = json::Value::Array();
  mounts.PushBack(TokenVolumeMount());

  framework::PodSet* trainer = info->FindPodSetByAncestor(framework::kAncestorTrainer);
  if (trainer == nullptr) {
    return OkStatus();
  }
  for (framework::Container& c : trainer->containers) {
    framework::UpsertEnvVars(c.env, env);
    framework::UpsertVolumeMounts(c.volume_mounts, mounts);
  }
  json::Value volumes = json::Value::Array();
  volumes.PushBack(TokenVolume(job));
  framework::UpsertVolumes(trainer->volumes, volumes);
  return OkStatus();
}

StatusOr<std::vector<json::Value>> TrainJobStatus::Build(framework::Info* info,
                                                         const api::TrainJob& job) {
  if (info == nullptr) {
    return std::vector<json::Value>{};
  }
  StatusOr<json::Value> secret =
      reader_->Get(api::kSecretGVK, config_.operator_namespace, config_.webhook_secret_name);
  if (!secret.ok()) {
    return secret.status().WithContext("failed to look up status server tls secret");
  }
  // Secret data is base64; the ConfigMap holds the PEM text.
  const json::Value* data = secret->Find("data");
  auto decoded = [data](std::string_view key) -> std::string {
    const json::Value* v = data != nullptr ? data->Find(key) : nullptr;
    if (v == nullptr || !v->IsString()) return "";
    StatusOr<std::string> pem = encoding::Base64Decode(v->AsString());
    return pem.ok() ? *pem : "";
  };
  std::string pem = decoded(kCACertKey);
  if (pem.empty()) {
    return InternalError("failed to find status server ca.crt in tls secret");
  }
  // Upstream copies ca.crt. trainer-webhook's CA rotation trusts the next CA (ca-bundle.crt holds
  // both) before it signs with it: pods given the bundle keep reporting across the switch.
  if (std::string bundle = decoded(certs::kCABundleKey); !bundle.empty()) pem = std::move(bundle);
  json::Value cm =
      framework::NewOwnedObject(api::kConfigMapGVK, TlsConfigMapName(job.metadata.name), job);
  cm.Set("data", json::Value::Object()).Set(kCACertKey, std::move(pem));
  std::vector<json::Value> out;
  out.push_back(std::move(cm));
  return out;
}

}  // namespace trainer::plugins
