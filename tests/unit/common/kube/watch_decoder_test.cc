// Tests of common/kube/watch_decoder.h: framing survives any split, large objects, bad input.
#include "common/kube/watch_decoder.h"

#include <catch2/catch.hpp>
#include <vector>

namespace trainer::kube {
namespace {

const char* kStream =
    "{\"type\":\"ADDED\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\","
    "\"resourceVersion\":\"1\"},\"data\":{\"k\":\"brace } and \\\" quote {\"}}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"2\"},"
    "\"data\":{\"list\":[1,[2,{\"x\":\"]\"}]]}}}\n"
    "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"3\"}}}"
    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"4\"}}}\n";

struct Seen {
  WatchEventType type;
  std::string rv;
};

std::vector<Seen> Collect(WatchDecoder& d, std::string_view data, Status* status) {
  std::vector<Seen> out;
  *status = d.Feed(data, [&](WatchEvent& e) {
    const json::Value* rv = e.object["metadata"].Find("resourceVersion");
    out.push_back({e.type, rv != nullptr ? rv->AsString() : ""});
    return true;
  });
  return out;
}

TEST_CASE("a decoder given skip paths leaves them out of each event's object", "[kube][watch]") {
  const json::SkipPaths skip({{"data"}, {"metadata", "resourceVersion"}});
  WatchDecoder d(&skip);
  std::vector<std::string> objects;
  std::vector<WatchEventType> types;
  REQUIRE(d.Feed(kStream, [&](WatchEvent& e) {
             types.push_back(e.type);
             objects.push_back(json::Write(e.object));
             return true;
           }).ok());
  CHECK(types == std::vector<WatchEventType>{WatchEventType::kAdded, WatchEventType::kModified,
                                             WatchEventType::kBookmark, WatchEventType::kDeleted});
  CHECK(objects[0] == R"({"kind":"ConfigMap","metadata":{"name":"a"}})");
  CHECK(objects[1] == R"({"metadata":{"name":"a"}})");
  CHECK(objects[2] == R"({"metadata":{}})");
}

TEST_CASE("events decode whatever byte offset splits the stream", "[kube][watch]") {
  const std::string stream = kStream;
  for (size_t split = 0; split <= stream.size(); ++split) {
    WatchDecoder d;
    Status s1, s2;
    std::vector<Seen> seen = Collect(d, std::string_view(stream).substr(0, split), &s1);
    std::vector<Seen> rest = Collect(d, std::string_view(stream).substr(split), &s2);
    seen.insert(seen.end(), rest.begin(), rest.end());
    INFO("split at " << split);
    REQUIRE(s1.ok());
    REQUIRE(s2.ok());
    REQUIRE(seen.size() == 4);
    CHECK(seen[0].type == WatchEventType::kAdded);
    CHECK(seen[1].type == WatchEventType::kModified);
    CHECK(seen[2].type == WatchEventType::kBookmark);
    CHECK(seen[3].type == WatchEventType::kDeleted);
    CHECK(seen[3].rv == "4");
    CHECK(d.buffered() == 0);
  }
}

TEST_CASE("events decode when fed one byte at a time", "[kube][watch]") {
  WatchDecoder d;
  int count = 0;
  for (char c : std::string(kStream)) {
    REQUIRE(d.Feed(std::string_view(&c, 1), [&](WatchEvent&) { return ++count, true; }).ok());
  }
  CHECK(count == 4);
}

TEST_CASE("a multi-megabyte object decodes from small pieces", "[kube][watch]") {
  std::string big(8 << 20, 'x');
  std::string event =
      "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"big\"},\"data\":{\"v\":\"" + big +
      "\"}}}";
  WatchDecoder d;
  size_t got = 0;
  for (size_t i = 0; i < event.size(); i += 16384) {
    REQUIRE(d.Feed(std::string_view(event).substr(i, 16384), [&](WatchEvent& e) {
               got = e.object["data"]["v"].AsString().size();
               return true;
             }).ok());
  }
  CHECK(got == big.size());
}

TEST_CASE("malformed streams are errors", "[kube][watch]") {
  auto feed = [](std::string_view s) {
    WatchDecoder d;
    return d.Feed(s, [](WatchEvent&) { return true; });
  };
  CHECK_FALSE(feed("garbage").ok());
  CHECK_FALSE(feed("{\"type\":\"WHAT\",\"object\":{}}").ok());
  CHECK_FALSE(feed("{\"object\":{}}").ok());
  CHECK_FALSE(feed("{\"type\":\"ADDED\"}").ok());
  WatchDecoder small(64);
  CHECK_FALSE(
      small
          .Feed(std::string("{\"type\":\"ADDED\",\"object\":{\"x\":\"") + std::string(100, 'a'),
                [](WatchEvent&) { return true; })
          .ok());
}

TEST_CASE("a handler returning false stops decoding", "[kube][watch]") {
  WatchDecoder d;
  int count = 0;
  Status s = d.Feed(kStream, [&](WatchEvent&) { return ++count < 2; });
  CHECK(s.code() == StatusCode::kCancelled);
  CHECK(count == 2);
}

}  // namespace
}  // namespace trainer::kube
