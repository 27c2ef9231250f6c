// Tests for the controller's cache shapes (controller/caches.h): what a list leaves out while
// decoding (InformerOptions::skip) never changes what is cached.
#include "controller/caches.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "common/informer/informer.h"
#include "common/kube/rest_mapper.h"
#include "common/kube/testing/fake_client.h"
#include "common/kube/watch_decoder.h"
#include "runtime/api/kinds.h"

namespace trainer::controller {
namespace {

const char* kManagedFields = R"([
  {"manager":"trainer","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1",
   "fieldsV1":{"f:metadata":{"f:labels":{"f:a":{}}},"f:spec":{".":{}}},"time":"2026-11-27T00:00:00Z"},
  {"manager":"kube-controller-manager","operation":"Update","subresource":"status",
   "apiVersion":"v1","time":"2026-11-27T00:00:01Z","fieldsType":"FieldsV1",
   "fieldsV1":{"f:status":{}}}])";

const char* kOwner = R"([{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob",
   "name":"tj","uid":"u1","controller":true,"blockOwnerDeletion":true}])";

std::string Object(const std::string& api_version, const std::string& kind, bool owned,
                   const std::string& rest) {
  return R"({"apiVersion":")" + api_version + R"(","kind":")" + kind +
         R"(","metadata":{"name":"tj","namespace":"ns","resourceVersion":"5","labels":{"a":"b"},)" +
         (owned ? std::string(R"("ownerReferences":)") + kOwner + "," : "") +
         R"("managedFields":)" + kManagedFields + "}," + rest + "}";
}

struct Case {
  kube::GroupVersionKind gvk;
  bool owned_watch;
  std::string object;
};

TEST_CASE("Cached objects are the same whether or not lists leave out the skipped parts") {
  const std::string jobset_rest = R"("spec":{"suspend":true,"network":{"enableDNSHostnames":true},
    "replicatedJobs":[{"name":"node","replicas":2,"template":{"spec":{"parallelism":1,
      "template":{"spec":{"containers":[{"name":"node","image":"i","command":["a"]}]}}}}},
      {"name":"init","replicas":1,"template":{}}]},
    "status":{"conditions":[{"type":"Completed","status":"True"}],
      "replicatedJobsStatus":[{"name":"node","ready":2}]})";
  const std::vector<Case> cases = {
      {api::kJobSetGVK, true, Object("jobset.x-k8s.io/v1alpha2", "JobSet", true, jobset_rest)},
      {api::kJobSetGVK, true, Object("jobset.x-k8s.io/v1alpha2", "JobSet", false, jobset_rest)},
      {api::kConfigMapGVK, true, Object("v1", "ConfigMap", true, R"("data":{"k":"v"})")},
      {api::kConfigMapGVK, true, Object("v1", "ConfigMap", false, R"("data":{"k":"v"})")},
      {api::kSecretGVK, true, Object("v1", "Secret", true, R"("data":{"ca.crt":"eA=="})")},
      {api::kSchedulerPluginsPodGroupGVK, true,
       Object("scheduling.x-k8s.io/v1alpha1", "PodGroup", true, R"("spec":{"minMember":3})")},
      {api::kLimitRangeGVK, false, Object("v1", "LimitRange", false, R"("spec":{"limits":[]})")},
  };
  kube::testing::FakeClient client;
  for (const Case& c : cases) {
    INFO(c.object);
    framework::Watch watch{.gvk = c.gvk, .owned_by_trainjob = c.owned_watch};
    informer::Informer inf(client, CacheOptions(watch, kube::GroupVersionResource{}));
    const std::string list = R"({"kind":"List","metadata":{},"items":[)" + c.object + "]}";
    auto whole = json::Parse(list);
    auto skipped = json::Parse(list, inf.list_skip().Under({"items", "*"}));
    REQUIRE(whole.ok());
    REQUIRE(skipped.ok());
    // The skips do leave something out here (managedFields' field sets at least)...
    CHECK(json::Write(*whole).size() > json::Write(*skipped).size() + 100);
    json::Value& a = whole->members()[2].second.elements()[0];
    json::Value& b = skipped->members()[2].second.elements()[0];
    inf.Prepare(a);
    inf.Prepare(b);
    // ...that the cache would have dropped anyway.
    CHECK(json::Write(a) == json::Write(b));
    // Watch events leave out the same parts of their object, again only what the cache drops.
    json::Value watched;
    kube::WatchDecoder decoder(&inf.list_skip());
    REQUIRE(decoder
                .Feed(R"({"type":"MODIFIED","object":)" + c.object + "}",
                      [&](kube::WatchEvent& e) {
                        watched = std::move(e.object);
                        return true;
                      })
                .ok());
    CHECK(json::Write(watched).size() < c.object.size());
    inf.Prepare(watched);
    CHECK(json::Write(watched) == json::Write(a));
  }
}

TEST_CASE("JobSet lists leave out pod templates and managedFields' field sets") {
  kube::testing::FakeClient client;
  informer::Informer inf(client, CacheOptions({.gvk = api::kJobSetGVK}, {}));
  const auto& paths = inf.list_skip().paths();
  auto has = [&](std::vector<std::string> p) {
    return std::find(paths.begin(), paths.end(), p) != paths.end();
  };
  CHECK(has({"spec", "replicatedJobs", "*", "template"}));
  CHECK(has({"metadata", "managedFields", "*", "fieldsV1"}));
  CHECK_FALSE(has({"metadata", "managedFields"}));  // the managers stay
}

TEST_CASE("Informers of resources with the same name in two groups have different names") {
  kube::testing::FakeClient client;
  auto name = [&](const kube::GroupVersionKind& gvk) {
    StatusOr<const kube::ResourceMapping*> m = kube::MappingFor(gvk);
    REQUIRE(m.ok());
    return informer::Informer(client,
                              CacheOptions({.gvk = gvk, .owned_by_trainjob = true}, (*m)->gvr))
        .Name();
  };
  // What `informer synced` logs and the readiness probe lists while a cache waits.
  CHECK(name(api::kVolcanoPodGroupGVK) == "podgroups.scheduling.volcano.sh");
  CHECK(name(api::kSchedulerPluginsPodGroupGVK) == "podgroups.scheduling.x-k8s.io");
  CHECK(name(api::kJobSetGVK) == "jobsets.jobset.x-k8s.io");
  CHECK(name(api::kConfigMapGVK) == "configmaps");
}

}  // namespace
}  // namespace trainer::controller

namespace trainer::controller {
namespace {

TEST_CASE("The webhook Secret is cached with its CAs only, and a bundle change is a CA change") {
  StatusOr<json::Value> secret = json::Parse(
      R"({"kind":"Secret","metadata":{"name":"s","managedFields":[{"manager":"m"}]},)"
      R"("data":{"ca.crt":"QQ==","ca-bundle.crt":"QUI=","ca.key":"a2V5","tls.key":"a2V5",)"
      R"("tls.crt":"eA=="},"stringData":{"x":"y"}})");
  REQUIRE(secret.ok());
  json::Value cached = secret->Clone();
  KeepCACertOnly(cached);
  CHECK(json::Write(cached) ==
        R"({"kind":"Secret","metadata":{"name":"s"},"data":{"ca.crt":"QQ==","ca-bundle.crt":"QUI="}})");
  // TrustNext adds the next CA to the bundle while ca.crt stays: the pods' ConfigMaps must follow.
  json::Value next = cached.Clone();
  next["data"].Set("ca-bundle.crt", "QUJD");
  CHECK(PublishedCAsOf(next) != PublishedCAsOf(cached));
  CHECK(PublishedCAsOf(cached.Clone()) == PublishedCAsOf(cached));
}

}  // namespace
}  // namespace trainer::controller
