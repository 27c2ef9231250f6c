// OverlayReader: within a pass (a Scope on the worker's thread) the objects it applied read back
// before their watch events reach the cache; other threads and later passes read the cache; and
// the writes are announced to OwnWrites so their echoes are recognized.
#include "controller/overlay_reader.h"

#include <catch2/catch.hpp>
#include <thread>

#include "runtime/api/kinds.h"
#include "runtime/framework/map_reader.h"
#include "tests/unit/controller/reader_objects.h"

namespace trainer::controller {
namespace {

using testing::JobSet;
using testing::Rv;

TEST_CASE("a pass reads what it applied; others read the cache") {
  framework::MapReader cache;
  REQUIRE(cache.Add(JobSet("old", "1")).ok());
  OverlayReader reader(cache);
  const kube::GroupVersionKind js = api::kJobSetGVK;

  reader.Remember(JobSet("new", "2"));  // outside a pass: nothing to remember it for
  CHECK(Rv(reader.Get(js, "ns", "new")) == "<none>");
  {
    OverlayReader::Scope pass(reader);
    reader.Remember(JobSet("new", "2"));
    reader.Remember(JobSet("old", "3"));
    CHECK(Rv(reader.Get(js, "ns", "new")) == "2");
    CHECK(Rv(reader.Get(js, "ns", "old")) == "3");  // the overlay wins over the cache
    std::string other_thread;
    std::thread([&] { other_thread = Rv(reader.Get(js, "ns", "old")); }).join();
    CHECK(other_thread == "1");
  }
  // The pass ended: back to the cache.
  CHECK(Rv(reader.Get(js, "ns", "new")) == "<none>");
  CHECK(Rv(reader.Get(js, "ns", "old")) == "1");
}

TEST_CASE("remembered objects are shaped as the cache shapes them") {
  framework::MapReader cache;
  OverlayReader reader(cache, nullptr, [](json::Value& obj) { obj.Erase("spec"); });
  const kube::GroupVersionKind js = api::kJobSetGVK;
  OverlayReader::Scope pass(reader);
  json::Value applied = JobSet("a", "5");
  applied["spec"].Set("suspend", false);
  reader.Remember(std::move(applied));
  StatusOr<json::Value> got = reader.Get(js, "ns", "a");
  REQUIRE(got.ok());
  CHECK(Rv(got) == "5");
  CHECK_FALSE(got->Has("spec"));
}

TEST_CASE("writes are announced to OwnWrites, so the echo is absorbed") {
  framework::MapReader cache;
  std::vector<std::string> requeued;
  OwnWrites own([&](const std::string& key) { requeued.push_back(key); });
  OverlayReader reader(cache, &own);
  json::Value desired = JobSet("a", "");
  reader.BeginWrite(desired);
  CHECK(own.in_flight() == 1);
  StatusOr<json::Value> applied = JobSet("a", "7");
  reader.EndWrite(desired, applied);
  CHECK(own.in_flight() == 0);
  CHECK(own.Absorb(JobSet("a", "7"), {"ns/a"}));        // our own write's watch event
  CHECK_FALSE(own.Absorb(JobSet("a", "8"), {"ns/a"}));  // someone else's later change
  CHECK(requeued.empty());
}

}  // namespace
}  // namespace trainer::controller
