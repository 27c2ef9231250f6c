// RestConfig: where the apiserver is and how to authenticate, loaded from a kubeconfig file or
// from the in-cluster service account, in the order controller-runtime's GetConfig uses:
// --kubeconfig, then $KUBECONFIG (a ':'-separated list, merged first-wins like kubectl), then
// in-cluster, then ~/.kube/config. Mirrors k8s.io/client-go/tools/clientcmd (the subset a
// controller needs: client certificates, bearer tokens and token files, CA, inline `-data` and
// file forms, insecure-skip-tls-verify) and rest.InClusterConfig. Exec and auth-provider plugins
// are rejected with a clear error.
//
//   ASSIGN_OR_RETURN(kube::RestConfig cfg, kube::LoadConfig(flags.kubeconfig));
//   ASSIGN_OR_RETURN(auto client, kube::CurlClient::New(std::move(cfg)));
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <string_view>

#include "common/status/status.h"

namespace trainer::kube {

struct RestConfig {
  std::string server;  // "https://127.0.0.1:6443", no trailing slash
  // Trust: PEM bytes, or a file read by libcurl, or neither (the system store).
  std::string ca_pem;
  std::string ca_file;
  bool insecure_skip_tls_verify = false;
  // Client certificate authentication (PEM bytes).
  std::string client_cert_pem;
  std::string client_key_pem;
  // Bearer token authentication: a fixed token, or a file re-read as it rotates.
  std::string bearer_token;
  std::string token_file;
  std::string username, password;  // basic auth (rare; test clusters)
  // The context's namespace (in-cluster: the pod's), "default" when unset.
  std::string default_namespace = "default";
  bool namespace_set = false;  // default_namespace came from the context or the pod
  // Where this came from, for logs: "kubeconfig /x (context y)" or "in-cluster".
  std::string source;
};

// Loads the current (or the named) context of a kubeconfig. `paths` may list several files
// separated by ':' (KUBECONFIG form); for every named entry and for current-context the first
// file that sets it wins. Relative file references resolve against the file that holds them.
StatusOr<RestConfig> LoadKubeconfig(std::string_view paths, std::string_view context = "");

// Parses kubeconfig text (for tests); relative paths resolve against `base_dir`.
StatusOr<RestConfig> ParseKubeconfig(std::string_view text, std::string_view base_dir,
                                     std::string_view context = "");

// Where in-cluster configuration comes from; defaults read the process environment and the
// standard service-account mount.
struct InClusterEnv {
  std::string host;  // $KUBERNETES_SERVICE_HOST
  std::string port;  // $KUBERNETES_SERVICE_PORT
  std::string service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  static InClusterEnv FromProcess();
};

// rest.InClusterConfig: server from the env, CA from ca.crt, token from the `token` file (re-read
// on rotation by the client), namespace from the `namespace` file.
StatusOr<RestConfig> LoadInClusterConfig(const InClusterEnv& env = InClusterEnv::FromProcess());

// --kubeconfig flag (may be empty), then $KUBECONFIG, then in-cluster, then ~/.kube/config.
StatusOr<RestConfig> LoadConfig(std::string_view kubeconfig_flag, std::string_view context = "");

// Where the trainer services' own objects (webhook Secret and Service, Lease) live when no flag
// names it: the pod's namespace, or the kubeconfig context's; else kubeflow-system, as upstream's
// cert.GetOperatorNamespace falls back (never "default").
std::string OperatorNamespace(const RestConfig& cfg);

// A bearer token read from a file and re-read when it may have rotated: at most `max_age` after
// the last read (client-go re-reads projected tokens every minute), or at once after
// Invalidate() (the client calls it on a 401). Thread-safe.
class TokenFile {
 public:
  explicit TokenFile(std::string path, std::chrono::seconds max_age = std::chrono::seconds(60))
      : path_(std::move(path)), max_age_(max_age) {}
  StatusOr<std::string> Token();
  void Invalidate();

 private:
  const std::string path_;
  const std::chrono::seconds max_age_;
  std::mutex mu_;
  std::string token_;
  std::chrono::steady_clock::time_point read_at_{};
  bool valid_ = false;
};

// Helpers exposed for tests.

}  // namespace trainer::kube
