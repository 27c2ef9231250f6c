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

TEST_CASE("ParseTime reads RFC 3339 times", "[kube]") {
  using namespace std::chrono;
  const system_clock::time_point t = system_clock::from_time_t(1700000000);
  CHECK(ParseTime("2023-11-14T22:13:20Z") == t);
  CHECK(ParseTime("2023-11-14T22:13:20z") == t);
  CHECK(ParseTime("2023-11-14T16:43:20-05:30") == t);
  CHECK(ParseTime("2023-11-14T22:13:20.1Z") == t + milliseconds(100));
  // Digits beyond microseconds are dropped.
  CHECK(ParseTime("2023-11-14T22:13:20.123456789Z") == t + microseconds(123456));
  CHECK(ParseTime("2024-02-29T00:00:00Z") == system_clock::from_time_t(1709164800));
  CHECK(ParseTime("1969-12-31T23:59:59.5Z") == system_clock::from_time_t(0) - milliseconds(500));
  CHECK(ParseTime("1970-01-01T00:00:00Z") == system_clock::from_time_t(0));
}

TEST_CASE("ParseTime rejects malformed times", "[kube]") {
  for (const char* bad : {
           "",
           "2023-11-14",
           "2023-11-14T22:13:20",         // no zone
           "2023-11-14 22:13:20Z",        // space for T
           "2023-1-14T22:13:20Z",         // short field
           "2023-11-14T22:13:2Z",         // short field
           "+023-11-14T22:13:20Z",        // sign
           "2023-11-14T22:13: 0Z",        // space in a field
           "2023-13-14T22:13:20Z",        // month
           "2023-00-14T22:13:20Z",        // month
           "2023-11-00T22:13:20Z",        // day
           "2023-04-31T22:13:20Z",        // day of April
           "2023-02-29T22:13:20Z",        // not a leap year
           "2023-11-14T24:00:00Z",        // hour
           "2023-11-14T22:60:00Z",        // minute
           "2023-11-14T22:13:60Z",        // second
           "2023-11-14T22:13:20.Z",       // fraction without digits
           "2023-11-14T22:13:20.12a3Z",   // junk in the fraction
           "2023-11-14T22:13:20ZZ",       // trailing junk
           "2023-11-14T22:13:20+1:00",    // short offset
           "2023-11-14T22:13:20+01:0x",   // offset digits
           "2023-11-14T22:13:20+24:00",   // offset hours
           "2023-11-14T22:13:20+01:60",   // offset minutes
           "2023-11-14T22:13:20 +01:00",  // space before the offset
       }) {
    INFO(bad);
    CHECK_FALSE(ParseTime(bad).has_value());
  }
}

}  // namespace
}  // namespace trainer::kube
