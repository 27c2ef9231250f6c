// Helpers for the kube client's integration tests: a CurlClient on the test bed's kubeconfig,
// throwaway namespaces, and polling with a deadline.
#pragma once

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "common/kube/curl/client.h"
#include "common/kube/rest_mapper.h"

namespace trainer::kube::testbed {

inline std::string Kubeconfig() {
  const char* dir = std::getenv("TESTBED_DIR");
  REQUIRE(dir != nullptr);
  return std::string(dir) + "/kubeconfig";
}

inline std::unique_ptr<CurlClient> NewClient(ClientOptions options = {}) {
  auto cfg = LoadKubeconfig(Kubeconfig());
  REQUIRE(cfg.ok());
  auto client = CurlClient::New(std::move(*cfg), std::move(options));
  REQUIRE(client.ok());
  return std::move(*client);
}

// Creates a namespace for one test and deletes it when the guard goes away.
class TempNamespace {
 public:
  TempNamespace(Client& client, std::string_view prefix) : client_(client) {
    static int counter = 0;
    name_ =
        std::string(prefix) + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
    json::Value ns = json::Value::Object();
    ns.Set("apiVersion", "v1");
    ns.Set("kind", "Namespace");
    ns["metadata"].Set("name", name_);
    auto created = client_.Create(kNamespaces, "", ns);
    REQUIRE(created.ok());
  }
  ~TempNamespace() { client_.Delete(kNamespaces, "", name_).IgnoreError(); }
  const std::string& name() const { return name_; }

 private:
  Client& client_;
  std::string name_;
};

template <typename Pred>
bool Eventually(Pred pred, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
}

inline json::Value ConfigMap(std::string_view ns, std::string_view name,
                             std::initializer_list<std::pair<std::string, std::string>> data) {
  json::Value cm = json::Value::Object();
  cm.Set("apiVersion", "v1");
  cm.Set("kind", "ConfigMap");
  cm["metadata"].Set("name", name);
  cm["metadata"].Set("namespace", ns);
  json::Value& d = cm["data"];
  d = json::Value::Object();
  for (const auto& [k, v] : data) d.Set(k, v);
  return cm;
}

inline std::string Str(const json::Value& obj, std::initializer_list<std::string_view> path) {
  const json::Value* v = &obj;
  for (std::string_view p : path) {
    v = v->Find(p);
    if (v == nullptr) return "<absent>";
  }
  return v->IsString() ? v->AsString() : json::Write(*v);
}

}  // namespace trainer::kube::testbed
