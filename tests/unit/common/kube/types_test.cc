// Tests of common/kube types, paths, the kind table, metadata and time helpers.
#include "common/kube/types.h"

#include <catch2/catch.hpp>

#include "common/kube/curl/client.h"
#include "common/kube/meta.h"
#include "common/kube/rest_mapper.h"

namespace trainer::kube {
namespace {

TEST_CASE("resource paths follow the apiserver layout", "[kube]") {
  CHECK(ResourcePath(kConfigMaps, "ns", "cm") == "/api/v1/namespaces/ns/configmaps/cm");
  CHECK(ResourcePath(kConfigMaps, "", "") == "/api/v1/configmaps");
  CHECK(ResourcePath(kTrainJobs, "team-a", "job", "status") ==
        "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/job/status");
  CHECK(ResourcePath(kClusterTrainingRuntimes, "", "torch") ==
        "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/torch");
  CHECK(UrlEncode("app in (a,b)") == "app%20in%20%28a%2Cb%29");
  CHECK(UrlEncode("a-b_c.d~e/f=g&h") == "a-b_c.d~e%2Ff%3Dg%26h");
  CHECK(UrlEncode("\xc3\xa9") == "%C3%A9");
  CHECK(UrlEncode("") == "");
}

TEST_CASE("the kind table maps kinds and resources", "[kube]") {
  auto jobset = MappingFor(kJobSetKind);
  REQUIRE(jobset.ok());
  CHECK((*jobset)->gvr == kJobSets);
  CHECK((*jobset)->namespaced);
  auto volcano = MappingFor(kVolcanoPodGroupKind);
  REQUIRE(volcano.ok());
  CHECK((*volcano)->gvr == kVolcanoPodGroups);
  auto ctr = MappingForResource(kClusterTrainingRuntimes);
  REQUIRE(ctr.ok());
  CHECK((*ctr)->gvk.kind == "ClusterTrainingRuntime");
  CHECK_FALSE((*ctr)->namespaced);
  CHECK(IsNotFound(MappingFor({"apps", "v1", "Deployment"}).status()));
  auto obj = json::Parse(R"({"apiVersion":"events.k8s.io/v1","kind":"Event"})");
  REQUIRE(obj.ok());
  auto ev = MappingFor(GroupVersionKind::Of(*obj));
  REQUIRE(ev.ok());
  CHECK((*ev)->gvr == kEvents);
  CHECK(GroupVersionKind::FromApiVersion("v1", "ConfigMap").ApiVersion() == "v1");
}

TEST_CASE("object keys and managedFields stripping", "[kube]") {
  auto obj = json::Parse(
      R"({"metadata":{"namespace":"ns","name":"n","resourceVersion":"7","managedFields":[{"manager":"x"}]}})");
  REQUIRE(obj.ok());
  CHECK(ObjectKeyOf(*obj) == "ns/n");
  CHECK(ResourceVersion(*obj) == "7");
  StripManagedFields(*obj);
  CHECK_FALSE((*obj)["metadata"].Has("managedFields"));
  CHECK(SplitObjectKey("ns/n") == std::pair<std::string, std::string>{"ns", "n"});
  CHECK(SplitObjectKey("n") == std::pair<std::string, std::string>{"", "n"});
}

TEST_CASE("times round-trip in metav1 formats", "[kube]") {
  using namespace std::chrono;
  const system_clock::time_point t = system_clock::from_time_t(1700000000) + microseconds(123456);
  CHECK(FormatMicroTime(t) == "2023-11-14T22:13:20.123456Z");
  CHECK(FormatTime(t) == "2023-11-14T22:13:20Z");
  CHECK(ParseTime("2023-11-14T22:13:20.123456Z") == t);
  CHECK(ParseTime("2023-11-14T23:13:20.123456+01:00") == t);
  CHECK_FALSE(ParseTime("yesterday").has_value());
}

}  // namespace
}  // namespace trainer::kube
