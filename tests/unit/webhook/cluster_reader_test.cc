// Unit tests for the webhook's ClusterReaders: informer-backed runtimes (with a live GET on a
// miss) over an in-memory apiserver, and the static reader.
#include "webhook/cluster_reader.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "common/kube/rest_mapper.h"
#include "common/kube/testing/fake_client.h"
#include "runtime/api/codec.h"
#include "runtime/api/kinds.h"
#include "runtime/framework/reader.h"
#include "runtime/framework/testing/testing.h"
#include "webhook/decoded_runtimes.h"

namespace trainer::webhook {
namespace {

using namespace std::chrono_literals;

json::Value Runtime(std::string_view kind, std::string_view name, std::string_view ns = "",
                    int num_nodes = 1) {
  json::Value o = json::Value::Object();
  o.Set("apiVersion", json::Value("trainer.kubeflow.org/v1alpha1"));
  o.Set("kind", json::Value(kind));
  json::Value& md = o["metadata"];
  md.Set("name", json::Value(name));
  if (!ns.empty()) {
    md.Set("namespace", json::Value(ns));
  }
  o.Set("spec", testing::Yaml("{mlPolicy: {numNodes: " + std::to_string(num_nodes) + "}}"));
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
  auto ctr = reader->Get(api::kClusterTrainingRuntimeGVK, "", "torch");
  REQUIRE(ctr.ok());
  CHECK(ctr->Find("metadata")->Find("name")->AsString() == "torch");
  auto tr = reader->Get(api::kTrainingRuntimeGVK, "team-a", "team");
  REQUIRE(tr.ok());
  CHECK(client.Calls("get") == gets_before);  // both served from the caches

  // Created after the list: found by the watch, or at worst by the live GET on a miss.
  REQUIRE(
      client.Create(kube::kClusterTrainingRuntimes, "", Runtime("ClusterTrainingRuntime", "fresh"))
          .ok());
  CHECK(reader->Get(api::kClusterTrainingRuntimeGVK, "", "fresh").ok());

  auto missing = reader->Get(api::kTrainingRuntimeGVK, "team-b", "team");
  REQUIRE_FALSE(missing.ok());
  CHECK(IsNotFound(missing.status()));
  CHECK(missing.status().message() == "trainingruntimes.trainer.kubeflow.org \"team\" not found");

  // A JobSet is not cached: a live GET.
  const int gets = client.Calls("get");
  auto js = reader->Get(api::kJobSetGVK, "team-a", "job");
  CHECK(IsNotFound(js.status()));
  CHECK(client.Calls("get") == gets + 1);
}

int32_t NumNodes(const StatusOr<SharedRuntime>& rt) {
  return rt.ok() && *rt != nullptr && (*rt)->spec.ml_policy && (*rt)->spec.ml_policy->num_nodes
             ? *(*rt)->spec.ml_policy->num_nodes
             : -1;
}

TEST_CASE("informer reader: one decoded runtime per version, following updates and deletes") {
  kube::testing::FakeClient client;
  client.Seed(kube::kClusterTrainingRuntimes, Runtime("ClusterTrainingRuntime", "torch"));
  client.Seed(kube::kTrainingRuntimes, Runtime("TrainingRuntime", "team", "team-a", 2));
  auto reader = NewInformerClusterReader(&client);
  REQUIRE(WaitFor([&] { return reader->HasSynced(); }));
  const auto ctr_gvk = api::kClusterTrainingRuntimeGVK;

  auto first = reader->GetTrainingRuntime(ctr_gvk, "", "torch");
  auto second = reader->GetTrainingRuntime(ctr_gvk, "", "torch");
  REQUIRE(first.ok());
  CHECK(NumNodes(first) == 1);
  CHECK(first->get() == second->get());  // shared, not decoded again
  auto tr = reader->GetTrainingRuntime(api::kTrainingRuntimeGVK, "team-a", "team");
  CHECK(NumNodes(tr) == 2);
  CHECK(
      IsNotFound(reader->GetTrainingRuntime(api::kTrainingRuntimeGVK, "team-b", "team").status()));

  // An update is a new version: decoded again, never the stale copy once the cache has it.
  auto current = client.Get(kube::kClusterTrainingRuntimes, "", "torch");
  REQUIRE(current.ok());
  (*current)["spec"]["mlPolicy"].Set("numNodes", json::Value(4));
  REQUIRE(client.Update(kube::kClusterTrainingRuntimes, "", *current).ok());
  REQUIRE(WaitFor([&] { return NumNodes(reader->GetTrainingRuntime(ctr_gvk, "", "torch")) == 4; }));
  // Whatever the cache holds now decodes like the document Get() returns.
  auto doc = reader->Get(ctr_gvk, "", "torch");
  REQUIRE(doc.ok());
  auto decoded = api::DecodeTrainingRuntime(*doc);
  REQUIRE(decoded.ok());
  CHECK(decoded->spec.ml_policy->num_nodes == 4);

  REQUIRE(client.Delete(kube::kClusterTrainingRuntimes, "", "torch").ok());
  REQUIRE(WaitFor(
      [&] { return IsNotFound(reader->GetTrainingRuntime(ctr_gvk, "", "torch").status()); }));
  CHECK(reader->GetTrainingRuntime(ctr_gvk, "", "torch").status().message() ==
        "clustertrainingruntimes.trainer.kubeflow.org \"torch\" not found");
}

TEST_CASE("decoded runtimes: cached per uid and resourceVersion, errors too") {
  DecodedRuntimes decoded;
  const auto gvk = api::kClusterTrainingRuntimeGVK;
  json::Value v1 = Runtime("ClusterTrainingRuntime", "torch");
  v1["metadata"].Set("uid", json::Value("u1"));
  v1["metadata"].Set("resourceVersion", json::Value("10"));
  auto a = decoded.Decode(gvk, "", v1);
  auto b = decoded.Decode(gvk, "", v1);
  REQUIRE(a.ok());
  CHECK(a->get() == b->get());
  CHECK(decoded.decodes() == 1);

  json::Value v2 = Runtime("ClusterTrainingRuntime", "torch", "", 3);
  v2["metadata"].Set("uid", json::Value("u1"));
  v2["metadata"].Set("resourceVersion", json::Value("11"));
  CHECK(NumNodes(decoded.Decode(gvk, "", v2)) == 3);
  CHECK(decoded.decodes() == 2);
  // Recreated under the same name: another uid is another object.
  v2["metadata"].Set("uid", json::Value("u2"));
  CHECK(NumNodes(decoded.Decode(gvk, "", v2)) == 3);
  CHECK(decoded.decodes() == 3);
  CHECK(decoded.size() == 1);

  json::Value bad = Runtime("ClusterTrainingRuntime", "bad");
  bad["spec"]["mlPolicy"].Set("numNodes", json::Value("two"));
  bad["metadata"].Set("resourceVersion", json::Value("12"));
  auto want = api::DecodeTrainingRuntime(bad);
  REQUIRE_FALSE(want.ok());
  auto got = decoded.Decode(gvk, "", bad);
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().message() == want.status().message());
  CHECK(decoded.Decode(gvk, "", bad).status().message() == want.status().message());
  CHECK(decoded.decodes() == 4);

  decoded.Forget(gvk, "", bad);
  CHECK(decoded.size() == 1);
}

TEST_CASE("static reader keys objects and answers NotFound like the apiserver") {
  std::vector<json::Value> objs;
  objs.push_back(Runtime("ClusterTrainingRuntime", "torch"));
  auto reader = NewStaticClusterReader(std::move(objs));
  REQUIRE(reader.ok());
  CHECK((*reader)->HasSynced());
  CHECK((*reader)->Get(api::kClusterTrainingRuntimeGVK, "", "torch").ok());
  auto missing = (*reader)->Get(api::kClusterTrainingRuntimeGVK, "", "x");
  CHECK(missing.status().message() ==
        "clustertrainingruntimes.trainer.kubeflow.org \"x\" not found");

  // Runtimes are decoded once and shared; misses read as Get's.
  auto a = (*reader)->GetTrainingRuntime(api::kClusterTrainingRuntimeGVK, "", "torch");
  auto b = (*reader)->GetTrainingRuntime(api::kClusterTrainingRuntimeGVK, "", "torch");
  REQUIRE(a.ok());
  CHECK(a->get() == b->get());
  CHECK(NumNodes(a) == 1);
  CHECK(
      (*reader)->GetTrainingRuntime(api::kClusterTrainingRuntimeGVK, "", "x").status().message() ==
      missing.status().message());
}

}  // namespace
}  // namespace trainer::webhook
