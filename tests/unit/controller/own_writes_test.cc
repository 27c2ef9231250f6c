// Tests of controller/own_writes.h: the watch event of our own apply is recognized once; other
// versions, other objects and other kinds of the same name are not; events that arrive while
// the apply is in flight wait for its answer.
#include "controller/own_writes.h"

#include <catch2/catch.hpp>

namespace trainer::controller {
namespace {

json::Value Obj(std::string_view api_version, std::string_view kind, std::string_view name,
                std::string_view rv) {
  json::Value o = json::Value::Object();
  o.Set("apiVersion", api_version);
  o.Set("kind", kind);
  o["metadata"].Set("namespace", "ns");
  o["metadata"].Set("name", name);
  o["metadata"].Set("resourceVersion", rv);
  return o;
}

TEST_CASE("the event of our own apply is an echo, once", "[controller][own_writes]") {
  OwnWrites w;
  w.Record(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "10"));
  w.Record(Obj("v1", "ConfigMap", "tj-runtime-snapshot", "11"));
  CHECK(w.size() == 2);
  CHECK(w.Absorb(Obj("v1", "ConfigMap", "tj-runtime-snapshot", "11"), {}));
  CHECK_FALSE(w.Absorb(Obj("v1", "ConfigMap", "tj-runtime-snapshot", "11"), {}));  // consumed
  // Same name, other kind or group: not ours.
  CHECK_FALSE(w.Absorb(Obj("v1", "ConfigMap", "tj", "10"), {}));
  CHECK_FALSE(w.Absorb(Obj("scheduling.x-k8s.io/v1alpha1", "PodGroup", "tj", "10"), {}));
  CHECK(w.size() == 1);
  CHECK(w.Absorb(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "10"), {}));
  CHECK(w.size() == 0);
}

TEST_CASE("another version of a written object is not an echo and ends the entry",
          "[controller][own_writes]") {
  OwnWrites w;
  w.Record(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "10"));
  // Someone else (the JobSet controller's status) wrote after us, and we missed our echo.
  CHECK_FALSE(w.Absorb(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "12"), {}));
  CHECK(w.size() == 0);
  CHECK_FALSE(w.Absorb(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "10"), {}));
  // A later write of ours replaces the earlier version.
  w.Record(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "13"));
  w.Record(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "14"));
  CHECK_FALSE(w.Absorb(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "13"), {}));
  // Objects never recorded and responses without a version are never echoes.
  w.Record(Obj("v1", "ConfigMap", "x", ""));
  CHECK(w.size() == 0);
  CHECK_FALSE(w.Absorb(Obj("v1", "ConfigMap", "never", "1"), {}));
}

TEST_CASE("left-over entries are bounded", "[controller][own_writes]") {
  OwnWrites w;
  for (size_t i = 0; i < OwnWrites::kMaxEntries + 5; ++i) {
    w.Record(Obj("v1", "ConfigMap", "cm-" + std::to_string(i), "1"));
  }
  CHECK(w.size() <= OwnWrites::kMaxEntries);
  CHECK(w.size() > 0);
}

TEST_CASE("an echo that beats the apply's response is held, then dropped",
          "[controller][own_writes]") {
  std::vector<std::string> requeued;
  OwnWrites w([&](const std::string& key) { requeued.push_back(key); });
  json::Value cm = Obj("v1", "ConfigMap", "tj-runtime-snapshot", "");
  w.Begin(cm);
  CHECK(w.in_flight() == 1);
  // The watch delivers our write before the response reaches us.
  CHECK(w.Absorb(Obj("v1", "ConfigMap", "tj-runtime-snapshot", "11"), {"ns/tj"}));
  json::Value response = Obj("v1", "ConfigMap", "tj-runtime-snapshot", "11");
  w.Finish(cm, &response);
  CHECK(requeued.empty());
  CHECK(w.in_flight() == 0);
  CHECK(w.size() == 0);  // the echo is consumed: nothing left to match
  CHECK_FALSE(w.Absorb(Obj("v1", "ConfigMap", "tj-runtime-snapshot", "12"), {"ns/tj"}));
}

TEST_CASE("a response that beats the echo records it as before", "[controller][own_writes]") {
  std::vector<std::string> requeued;
  OwnWrites w([&](const std::string& key) { requeued.push_back(key); });
  json::Value js = Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "");
  w.Begin(js);
  json::Value response = Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "20");
  w.Finish(js, &response);
  CHECK(w.in_flight() == 0);
  CHECK(w.size() == 1);
  CHECK(w.Absorb(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "20"), {"ns/tj"}));
  CHECK(requeued.empty());
}

TEST_CASE("held events of someone else's version requeue their owners",
          "[controller][own_writes]") {
  std::vector<std::string> requeued;
  OwnWrites w([&](const std::string& key) { requeued.push_back(key); });
  json::Value js = Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "");

  SECTION("another writer's version before ours") {
    w.Begin(js);
    CHECK(w.Absorb(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "30"), {"ns/tj", "ns/old"}));
    CHECK(w.Absorb(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "31"), {"ns/tj"}));
    json::Value response = Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "31");
    w.Finish(js, &response);
    CHECK(requeued == std::vector<std::string>{"ns/tj", "ns/old"});
    CHECK(w.size() == 0);
  }
  SECTION("the apply failed") {
    w.Begin(js);
    CHECK(w.Absorb(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "30"), {"ns/tj"}));
    w.Finish(js, nullptr);
    CHECK(requeued == std::vector<std::string>{"ns/tj"});
    CHECK(w.size() == 0);
    CHECK(w.in_flight() == 0);
  }
  SECTION("an event after the response is judged at once") {
    w.Begin(js);
    json::Value response = Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "40");
    w.Finish(js, &response);
    CHECK_FALSE(w.Absorb(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "41"), {"ns/tj"}));
    CHECK(requeued.empty());
  }
  SECTION("two writes of one object in flight: held until the last ends") {
    w.Begin(js);
    w.Begin(js);
    CHECK(w.Absorb(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "50"), {"ns/tj"}));
    CHECK(w.Absorb(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "51"), {"ns/tj"}));
    json::Value first = Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "50");
    w.Finish(js, &first);
    CHECK(requeued.empty());
    json::Value second = Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "51");
    w.Finish(js, &second);
    CHECK(requeued.empty());
    CHECK(w.in_flight() == 0);
  }
}

}  // namespace
}  // namespace trainer::controller
