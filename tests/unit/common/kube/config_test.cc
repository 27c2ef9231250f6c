// Tests of common/kube/curl/config.h: kubeconfig forms, merging, in-cluster, token rotation.
#include "common/kube/curl/config.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/files/testing/temp_dir.h"

namespace trainer::kube {
namespace {

namespace fs = std::filesystem;

using files::testing::TempDir;

// base64("CA PEM") etc.
constexpr const char* kInline = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: c1
  cluster:
    server: https://10.0.0.1:6443/
    certificate-authority-data: Q0EgUEVN
contexts:
- name: dev
  context: {cluster: c1, user: u1, namespace: team-a}
- name: other
  context: {cluster: c1, user: u2}
users:
- name: u1
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
- name: u2
  user:
    token: abc
)";

TEST_CASE("kubeconfig with inline data", "[kube][config]") {
  auto cfg = ParseKubeconfig(kInline, "/nowhere");
  REQUIRE(cfg.ok());
  CHECK(cfg->server == "https://10.0.0.1:6443");
  CHECK(cfg->ca_pem == "CA PEM");
  CHECK(cfg->client_cert_pem == "CERT");
  CHECK(cfg->client_key_pem == "KEY");
  CHECK(cfg->default_namespace == "team-a");
  auto other = ParseKubeconfig(kInline, "/nowhere", "other");
  REQUIRE(other.ok());
  CHECK(other->bearer_token == "abc");
  CHECK(other->default_namespace == "default");
  CHECK(OperatorNamespace(*cfg) == "team-a");
  CHECK(OperatorNamespace(*other) == "kubeflow-system");  // upstream's fallback, not "default"
  CHECK(IsNotFound(ParseKubeconfig(kInline, "/nowhere", "missing").status()));
}

TEST_CASE("kubeconfig file references resolve against the file's directory", "[kube][config]") {
  TempDir dir;
  dir.Write("ca.crt", "FILE CA");
  dir.Write("token", "tok\n");
  const std::string kc = dir.Write("config", R"(current-context: x
clusters: [{name: c, cluster: {server: "https://h:1", certificate-authority: ca.crt}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
users: [{name: u, user: {tokenFile: token}}]
)");
  auto cfg = LoadKubeconfig(kc);
  REQUIRE(cfg.ok());
  CHECK(cfg->ca_pem == "FILE CA");
  CHECK(cfg->token_file == (dir.path / "token").string());
}

TEST_CASE("a KUBECONFIG list merges first-wins and skips missing files", "[kube][config]") {
  TempDir dir;
  const std::string a = dir.Write("a", R"(current-context: from-a
contexts: [{name: from-a, context: {cluster: shared, user: ua}}]
users: [{name: ua, user: {token: token-a}}]
)");
  const std::string b = dir.Write("b", R"(current-context: from-b
clusters: [{name: shared, cluster: {server: "https://b:1"}}]
users: [{name: ua, user: {token: token-b}}]
)");
  auto cfg = LoadKubeconfig(a + ":" + (dir.path / "missing").string() + ":" + b);
  REQUIRE(cfg.ok());
  CHECK(cfg->server == "https://b:1");
  CHECK(cfg->bearer_token == "token-a");
}

TEST_CASE("exec plugins and broken files are clear errors", "[kube][config]") {
  auto exec = ParseKubeconfig(R"(current-context: x
clusters: [{name: c, cluster: {server: "https://h"}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
users: [{name: u, user: {exec: {command: aws}}}]
)",
                              "/");
  CHECK(exec.status().code() == StatusCode::kUnimplemented);
  CHECK(IsNotFound(LoadKubeconfig("/definitely/missing").status()));
  CHECK_FALSE(ParseKubeconfig("current-context: x\n", "/").ok());
}

TEST_CASE("in-cluster config reads the service account mount", "[kube][config]") {
  TempDir dir;
  dir.Write("token", "t1\n");
  dir.Write("ca.crt", "SA CA");
  dir.Write("namespace", "kubeflow-system\n");
  InClusterEnv env{"10.96.0.1", "443", dir.path.string()};
  auto cfg = LoadInClusterConfig(env);
  REQUIRE(cfg.ok());
  CHECK(cfg->server == "https://10.96.0.1:443");
  CHECK(cfg->ca_pem == "SA CA");
  CHECK(cfg->default_namespace == "kubeflow-system");
  CHECK(OperatorNamespace(*cfg) == "kubeflow-system");
  CHECK(cfg->token_file == (dir.path / "token").string());
  InClusterEnv v6{"fd00::1", "6443", dir.path.string()};
  CHECK(LoadInClusterConfig(v6)->server == "https://[fd00::1]:6443");
  CHECK(IsNotFound(LoadInClusterConfig(InClusterEnv{"", "", dir.path.string()}).status()));
}

TEST_CASE("token files are re-read after invalidation or when old", "[kube][config]") {
  TempDir dir;
  const std::string path = dir.Write("token", "first\n");
  TokenFile tf(path, std::chrono::seconds(3600));
  CHECK(*tf.Token() == "first");
  dir.Write("token", "second");
  CHECK(*tf.Token() == "first");  // cached
  tf.Invalidate();
  CHECK(*tf.Token() == "second");
  TokenFile fresh(path, std::chrono::seconds(0));
  CHECK(*fresh.Token() == "second");
  dir.Write("token", "third");
  CHECK(*fresh.Token() == "third");
  fs::remove(path);
  CHECK(*fresh.Token() == "third");  // a missing file keeps the last token
}

}  // namespace
}  // namespace trainer::kube
