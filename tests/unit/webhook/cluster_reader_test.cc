// Unit tests for the webhook's ClusterReaders: informer-backed runtimes (with a live GET on a
// miss) over an in-memory apiserver, and the static reader.
#include "webhook/cluster_reader.h"

#include <chrono>
#include <thread>

#include <catch2/catch.hpp>

#include "common/kube/rest_mapper.h"
#include "common/kube/testing/fake_client.h"
#include "runtime/framework/reader.h"
#include "runtime/framework/testing/testing.h"

namespace trainer::webhook {
namespace {

using namespace std::chrono_literals;

json::Value Runtime(std::string_view kind, std::string_view name, std::string_view ns = "") {
  json::Value o = json::Value::Object();
  o.Set("apiVersion", json::Value("trainer.kubeflow.org/v1alpha1"));
  o.Set("kind", json::Value(kind));
  json::Value& md = o["metadata"];
  md.Set("name", json::Value(name));
  if (!ns.empty()) {
    md.Set("namespace", json::Value(ns));
  }
  o.Set("spec", testing::Yaml("{mlPolicy: {numNodes: 1}}"));
  return o;
}

template <typename Pred>
bool WaitFor(Pred pred) {
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!pred() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  return pred();
}

TEST_CASE("informer reader: runtimes from the caches, misses and other kinds live") {
  kube::testing::FakeClient client;
  client.Seed(kube::kClusterTrainingRuntimes, Runtime("ClusterTrainingRuntime", "torch"));
  client.Seed(kube::kTrainingRuntimes, Runtime("TrainingRuntime", "team", "team-a"));
  auto reader = NewInformerClusterReader(&client);
  REQUIRE(WaitFor([&] { return reader->HasSynced(); }));

  const int gets_before = client.Calls("get");
  auto ctr = reader->Get(framework::ClusterTrainingRuntimeGVK(), "", "torch");
  REQUIRE(ctr.ok());
  CHECK(ctr->Find("metadata")->Find("name")->AsString() == "torch");
  auto tr = reader->Get(framework::TrainingRuntimeGVK(), "team-a", "team");
  REQUIRE(tr.ok());
  CHECK(client.Calls("get") == gets_before);  // both served from the caches

  // Created after the list: found by the watch, or at worst by the live GET on a miss.
  REQUIRE(client.Create(kube::kClusterTrainingRuntimes, "",
                        Runtime("ClusterTrainingRuntime", "fresh")).ok());
  CHECK(reader->Get(framework::ClusterTrainingRuntimeGVK(), "", "fresh").ok());

  auto missing = reader->Get(framework::TrainingRuntimeGVK(), "team-b", "team");
  REQUIRE_FALSE(missing.ok());
  CHECK(IsNotFound(missing.status()));
  CHECK(missing.status().message() == "trainingruntimes.trainer.kubeflow.org \"team\" not found");

  // A JobSet is not cached: a live GET.
  const int gets = client.Calls("get");
  auto js = reader->Get(framework::JobSetGVK(), "team-a", "job");
  CHECK(IsNotFound(js.status()));
  CHECK(client.Calls("get") == gets + 1);
}

TEST_CASE("static reader keys objects and answers NotFound like the apiserver") {
  std::vector<json::Value> objs;
  objs.push_back(Runtime("ClusterTrainingRuntime", "torch"));
  auto reader = NewStaticClusterReader(std::move(objs));
  REQUIRE(reader.ok());
  CHECK((*reader)->HasSynced());
  CHECK((*reader)->Get(framework::ClusterTrainingRuntimeGVK(), "", "torch").ok());
  auto missing = (*reader)->Get(framework::ClusterTrainingRuntimeGVK(), "", "x");
  CHECK(missing.status().message() ==
        "clustertrainingruntimes.trainer.kubeflow.org \"x\" not found");
}

}  // namespace
}  // namespace trainer::webhook
