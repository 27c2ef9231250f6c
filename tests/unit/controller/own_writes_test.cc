// Tests of controller/own_writes.h: the watch event of our own apply is recognized once; other
// versions, other objects and other kinds of the same name are not.
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
  CHECK(w.IsEcho(Obj("v1", "ConfigMap", "tj-runtime-snapshot", "11")));
  CHECK_FALSE(w.IsEcho(Obj("v1", "ConfigMap", "tj-runtime-snapshot", "11")));  // consumed
  // Same name, other kind or group: not ours.
  CHECK_FALSE(w.IsEcho(Obj("v1", "ConfigMap", "tj", "10")));
  CHECK_FALSE(w.IsEcho(Obj("scheduling.x-k8s.io/v1alpha1", "PodGroup", "tj", "10")));
  CHECK(w.size() == 1);
  CHECK(w.IsEcho(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "10")));
  CHECK(w.size() == 0);
}

TEST_CASE("another version of a written object is not an echo and ends the entry",
          "[controller][own_writes]") {
  OwnWrites w;
  w.Record(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "10"));
  // Someone else (the JobSet controller's status) wrote after us, and we missed our echo.
  CHECK_FALSE(w.IsEcho(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "12")));
  CHECK(w.size() == 0);
  CHECK_FALSE(w.IsEcho(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "10")));
  // A later write of ours replaces the earlier version.
  w.Record(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "13"));
  w.Record(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "14"));
  CHECK_FALSE(w.IsEcho(Obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", "13")));
  // Objects never recorded and responses without a version are never echoes.
  w.Record(Obj("v1", "ConfigMap", "x", ""));
  CHECK(w.size() == 0);
  CHECK_FALSE(w.IsEcho(Obj("v1", "ConfigMap", "never", "1")));
}

TEST_CASE("left-over entries are bounded", "[controller][own_writes]") {
  OwnWrites w;
  for (size_t i = 0; i < OwnWrites::kMaxEntries + 5; ++i) {
    w.Record(Obj("v1", "ConfigMap", "cm-" + std::to_string(i), "1"));
  }
  CHECK(w.size() <= OwnWrites::kMaxEntries);
  CHECK(w.size() > 0);
}

}  // namespace
}  // namespace trainer::controller
