// SyncingReader: a kind whose cache is still on its first list reads from the apiserver, shaped
// and with the cache's NotFound text; once synced, and for kinds it was not told of, the cache.
#include "controller/syncing_reader.h"

#include <catch2/catch.hpp>
#include <atomic>

#include "runtime/api/kinds.h"
#include "runtime/framework/map_reader.h"
#include "tests/unit/controller/reader_objects.h"

namespace trainer::controller {
namespace {

using testing::JobSet;
using testing::Rv;

TEST_CASE("an unsynced kind reads from the apiserver; a synced one from its cache") {
  framework::MapReader cache;
  REQUIRE(cache.Add(JobSet("cached", "1")).ok());
  REQUIRE(cache.Add(JobSet("both", "2")).ok());
  std::atomic<bool> synced{false};
  Status live_error = OkStatus();
  int live_reads = 0;
  SyncingReader reader(cache);
  reader.Add(api::kJobSetGVK,
             {.synced = [&] { return synced.load(); },
              .get = [&](std::string_view, std::string_view name) -> StatusOr<json::Value> {
                ++live_reads;
                if (!live_error.ok()) return live_error;
                if (name != "both" && name != "live") {
                  return NotFoundError("jobsets \"" + std::string(name) + "\" not found");
                }
                json::Value obj = JobSet(name, "9");  // as a list item: no apiVersion or kind
                obj.Erase("apiVersion");
                obj.Erase("kind");
                return obj;
              }});

  StatusOr<json::Value> live = reader.Get(api::kJobSetGVK, "ns", "live");
  REQUIRE(live.ok());
  CHECK(Rv(live) == "9");
  CHECK((*live)["kind"].AsString() == "JobSet");
  CHECK((*live)["apiVersion"].AsString() == "jobset.x-k8s.io/v1alpha2");
  CHECK(Rv(reader.Get(api::kJobSetGVK, "ns", "both")) == "9");
  // What the cache holds is not trusted either: the apiserver's answer is the truth.
  StatusOr<json::Value> gone = reader.Get(api::kJobSetGVK, "ns", "cached");
  REQUIRE(IsNotFound(gone.status()));
  CHECK(gone.status().message() == "jobsets.jobset.x-k8s.io \"cached\" not found");
  live_error = UnavailableError("connection refused");
  StatusOr<json::Value> failed = reader.Get(api::kJobSetGVK, "ns", "live");
  CHECK(failed.status().code() == StatusCode::kUnavailable);
  CHECK(failed.status().message().find("connection refused") != std::string::npos);
  CHECK(live_reads == 4);

  synced = true;
  CHECK(Rv(reader.Get(api::kJobSetGVK, "ns", "cached")) == "1");
  CHECK(Rv(reader.Get(api::kJobSetGVK, "ns", "both")) == "2");
  CHECK(IsNotFound(reader.Get(api::kJobSetGVK, "ns", "live").status()));
  CHECK(live_reads == 4);
}

TEST_CASE("kinds the reader was not told of read from the cache") {
  framework::MapReader cache;
  REQUIRE(cache.Add(JobSet("cached", "1")).ok());
  SyncingReader reader(cache);
  int live_reads = 0;
  reader.Add(api::kConfigMapGVK, {.synced = [] { return false; },
                                  .get = [&](std::string_view, std::string_view) {
                                    ++live_reads;
                                    return StatusOr<json::Value>(UnavailableError("not used"));
                                  }});
  CHECK(Rv(reader.Get(api::kJobSetGVK, "ns", "cached")) == "1");
  CHECK(live_reads == 0);
}

}  // namespace
}  // namespace trainer::controller
