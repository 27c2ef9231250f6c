// Kubeconfig and in-cluster configuration loading.
#include "common/kube/curl/config.h"

#include <cstdlib>
#include <vector>

#include "common/encoding/base64.h"
#include "common/files/files.h"
#include "common/json/json.h"
#include "common/yaml/yaml.h"

namespace trainer::kube {

namespace {

std::string Str(const json::Value* obj, std::string_view key) {
  if (obj == nullptr) return {};
  const json::Value* v = obj->Find(key);
  return v != nullptr && v->IsString() ? v->AsString() : std::string();
}

std::string Resolve(std::string_view base_dir, const std::string& path) {
  if (path.empty() || path.front() == '/' || base_dir.empty()) return path;
  return std::string(base_dir) + "/" + path;
}

// Reads `<key>-data` (base64) or `<key>` (a file) of `obj`.
StatusOr<std::string> DataOrFile(const json::Value* obj, std::string_view key,
                                 std::string_view base_dir) {
  const std::string data = Str(obj, std::string(key) + "-data");
  if (!data.empty()) {
    StatusOr<std::string> decoded = encoding::Base64Decode(data);
    if (!decoded.ok()) return decoded.status().WithContext(std::string(key) + "-data");
    return decoded;
  }
  const std::string file = Str(obj, key);
  if (file.empty()) return std::string();
  return files::ReadFile(Resolve(base_dir, file));
}

// One parsed kubeconfig file with the directory its relative paths resolve against.
struct KubeconfigFile {
  json::Value doc;
  std::string base_dir;
};

// Finds the named entry of a kubeconfig list ("clusters", "users", "contexts"), first file wins.
const json::Value* FindNamed(const std::vector<KubeconfigFile>& files, std::string_view list,
                             std::string_view field, std::string_view name, std::string* base_dir) {
  for (const KubeconfigFile& f : files) {
    const json::Value* items = f.doc.Find(list);
    if (items == nullptr || !items->IsArray()) continue;
    const json::Value* item = json::FindByKey(*items, "name", name);
    if (item != nullptr) {
      *base_dir = f.base_dir;
      return item->Find(field);
    }
  }
  return nullptr;
}

StatusOr<RestConfig> Build(const std::vector<KubeconfigFile>& files, std::string_view context_name,
                           const std::string& source) {
  std::string context(context_name);
  if (context.empty()) {
    for (const KubeconfigFile& f : files) {
      context = Str(&f.doc, "current-context");
      if (!context.empty()) break;
    }
  }
  if (context.empty()) return InvalidArgumentError("kubeconfig " + source + ": no current-context");
  std::string dir;
  const json::Value* ctx = FindNamed(files, "contexts", "context", context, &dir);
  if (ctx == nullptr) {
    return NotFoundError("kubeconfig " + source + ": context \"" + context + "\" not found");
  }
  const std::string cluster_name = Str(ctx, "cluster");
  const std::string user_name = Str(ctx, "user");
  std::string cluster_dir, user_dir;
  const json::Value* cluster = FindNamed(files, "clusters", "cluster", cluster_name, &cluster_dir);
  if (cluster == nullptr) {
    return NotFoundError("kubeconfig " + source + ": cluster \"" + cluster_name + "\" not found");
  }
  RestConfig cfg;
  cfg.source = "kubeconfig " + source + " (context " + context + ")";
  cfg.server = Str(cluster, "server");
  while (!cfg.server.empty() && cfg.server.back() == '/') cfg.server.pop_back();
  if (cfg.server.empty()) {
    return InvalidArgumentError("kubeconfig " + source + ": cluster \"" + cluster_name +
                                "\" has no server");
  }
  if (const json::Value* insecure = cluster->Find("insecure-skip-tls-verify");
      insecure != nullptr && insecure->IsBool()) {
    cfg.insecure_skip_tls_verify = insecure->AsBool();
  }
  StatusOr<std::string> ca = DataOrFile(cluster, "certificate-authority", cluster_dir);
  if (!ca.ok())
    return ca.status().WithContext("kubeconfig " + source + ": cluster " + cluster_name);
  cfg.ca_pem = std::move(*ca);
  if (!Str(ctx, "namespace").empty()) {
    cfg.default_namespace = Str(ctx, "namespace");
    cfg.namespace_set = true;
  }

  if (user_name.empty()) return cfg;
  const json::Value* user = FindNamed(files, "users", "user", user_name, &user_dir);
  if (user == nullptr) {
    return NotFoundError("kubeconfig " + source + ": user \"" + user_name + "\" not found");
  }
  if (user->Has("exec") || user->Has("auth-provider")) {
    return UnimplementedError("kubeconfig " + source + ": user \"" + user_name +
                              "\" uses an exec or auth-provider plugin, which trainer-cpp does not "
                              "support; use a client certificate or a token");
  }
  const std::string where = "kubeconfig " + source + ": user " + user_name;
  StatusOr<std::string> cert = DataOrFile(user, "client-certificate", user_dir);
  if (!cert.ok()) return cert.status().WithContext(where);
  StatusOr<std::string> key = DataOrFile(user, "client-key", user_dir);
  if (!key.ok()) return key.status().WithContext(where);
  cfg.client_cert_pem = std::move(*cert);
  cfg.client_key_pem = std::move(*key);
  if (cfg.client_cert_pem.empty() != cfg.client_key_pem.empty()) {
    return InvalidArgumentError(where + ": client certificate and key must be set together");
  }
  cfg.bearer_token = Str(user, "token");
  if (!Str(user, "tokenFile").empty()) cfg.token_file = Resolve(user_dir, Str(user, "tokenFile"));
  cfg.username = Str(user, "username");
  cfg.password = Str(user, "password");
  return cfg;
}

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

StatusOr<RestConfig> ParseKubeconfig(std::string_view text, std::string_view base_dir,
                                     std::string_view context) {
  StatusOr<json::Value> doc = yaml::ParseYaml(text);
  if (!doc.ok()) return doc.status().WithContext("parsing kubeconfig");
  std::vector<KubeconfigFile> files;
  files.push_back({std::move(*doc), std::string(base_dir)});
  return Build(files, context, "<text>");
}

StatusOr<RestConfig> LoadKubeconfig(std::string_view paths, std::string_view context) {
  std::vector<KubeconfigFile> files;
  size_t start = 0;
  while (start <= paths.size()) {
    size_t end = paths.find(':', start);
    if (end == std::string_view::npos) end = paths.size();
    const std::string path(paths.substr(start, end - start));
    start = end + 1;
    if (path.empty()) continue;
    StatusOr<std::string> text = files::ReadFile(path);
    if (!text.ok()) {
      // kubectl skips missing files of a KUBECONFIG list, but a single named file must exist.
      if (paths.find(':') != std::string_view::npos && IsNotFound(text.status())) continue;
      return text.status().WithContext("loading kubeconfig");
    }
    StatusOr<json::Value> doc = yaml::ParseYaml(*text);
    if (!doc.ok()) return doc.status().WithContext("parsing kubeconfig " + path);
    files.push_back({std::move(*doc), DirOf(path)});
  }
  if (files.empty())
    return NotFoundError("loading kubeconfig: no file in \"" + std::string(paths) + "\"");
  return Build(files, context, std::string(paths));
}

InClusterEnv InClusterEnv::FromProcess() {
  InClusterEnv env;
  if (const char* h = std::getenv("KUBERNETES_SERVICE_HOST")) env.host = h;
  if (const char* p = std::getenv("KUBERNETES_SERVICE_PORT")) env.port = p;
  return env;
}

StatusOr<RestConfig> LoadInClusterConfig(const InClusterEnv& env) {
  if (env.host.empty() || env.port.empty()) {
    return NotFoundError(
        "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
  }
  RestConfig cfg;
  cfg.source = "in-cluster";
  const bool ipv6 = env.host.find(':') != std::string::npos;
  cfg.server = "https://" + (ipv6 ? "[" + env.host + "]" : env.host) + ":" + env.port;
  cfg.token_file = env.service_account_dir + "/token";
  StatusOr<std::string> token = files::ReadFile(cfg.token_file);
  if (!token.ok()) return token.status().WithContext("in-cluster config");
  StatusOr<std::string> ca = files::ReadFile(env.service_account_dir + "/ca.crt");
  if (!ca.ok()) return ca.status().WithContext("in-cluster config");
  cfg.ca_pem = std::move(*ca);
  if (StatusOr<std::string> ns = files::ReadFile(env.service_account_dir + "/namespace"); ns.ok()) {
    std::string n = *ns;
    while (!n.empty() && (n.back() == '\n' || n.back() == ' ')) n.pop_back();
    if (!n.empty()) {
      cfg.default_namespace = n;
      cfg.namespace_set = true;
    }
  }
  return cfg;
}

std::string OperatorNamespace(const RestConfig& cfg) {
  return cfg.namespace_set ? cfg.default_namespace : "kubeflow-system";
}

StatusOr<RestConfig> LoadConfig(std::string_view kubeconfig_flag, std::string_view context) {
  if (!kubeconfig_flag.empty()) return LoadKubeconfig(kubeconfig_flag, context);
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    return LoadKubeconfig(env, context);
  }
  StatusOr<RestConfig> in_cluster = LoadInClusterConfig();
  if (in_cluster.ok() || !IsNotFound(in_cluster.status())) return in_cluster;
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    StatusOr<RestConfig> home_cfg = LoadKubeconfig(std::string(home) + "/.kube/config", context);
    if (home_cfg.ok() || !IsNotFound(home_cfg.status())) return home_cfg;
  }
  return NotFoundError(
      "no Kubernetes configuration: pass --kubeconfig, set KUBECONFIG, run in a cluster, or "
      "create ~/.kube/config");
}

StatusOr<std::string> TokenFile::Token() {
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (valid_ && now - read_at_ < max_age_) return token_;
  StatusOr<std::string> text = files::ReadFile(path_);
  if (!text.ok()) {
    // Keep serving the last token if a rotation briefly removed the file.
    if (valid_) return token_;
    return text.status().WithContext("reading service account token");
  }
  std::string t = std::move(*text);
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  token_ = std::move(t);
  read_at_ = now;
  valid_ = true;
  return token_;
}

void TokenFile::Invalidate() {
  std::lock_guard<std::mutex> lock(mu_);
  // Age the token so the next call re-reads; valid_ stays so a failed re-read can fall back.
  read_at_ = std::chrono::steady_clock::now() - max_age_ - std::chrono::seconds(1);
}

}  // namespace trainer::kube
