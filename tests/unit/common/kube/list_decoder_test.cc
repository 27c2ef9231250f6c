// Tests for ListDecoder: a List decoded as it arrives, in pieces of any size, yields the items
// and the List head that parsing the whole document yields.
#include "common/kube/list_decoder.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace trainer::kube {
namespace {

struct Decoded {
  Status status;
  std::vector<std::string> items;
  std::string head;
};

Decoded Decode(const std::string& text, size_t piece, const json::SkipPaths* skip = nullptr) {
  ListDecoder d(skip);
  Decoded out;
  for (size_t i = 0; i < text.size() && out.status.ok(); i += piece) {
    out.status = d.Feed(std::string_view(text).substr(i, piece), [&](json::Value& item) {
      out.items.push_back(json::Write(item));
      return OkStatus();
    });
  }
  if (!out.status.ok()) return out;
  StatusOr<json::Value> head = d.Finish();
  out.status = head.status();
  if (head.ok()) out.head = json::Write(*head);
  return out;
}

// The reference: the whole document parsed, its items written one by one and then emptied.
Decoded Whole(const std::string& text) {
  Decoded out;
  StatusOr<json::Value> v = json::Parse(text);
  REQUIRE(v.ok());
  for (const json::Value& item : v->Find("items")->elements()) {
    out.items.push_back(json::Write(item));
  }
  v->Set("items", json::Value::Array());
  out.head = json::Write(*v);
  return out;
}

const std::string kList =
    R"({"kind":"JobSetList","apiVersion":"jobset.x-k8s.io/v1alpha2",)"
    R"("metadata":{"resourceVersion":"42","continue":"abc"},"items":[)"
    R"({"metadata":{"name":"a","annotations":{"x":"}]{[\"\\"}},"spec":{"l":[1,{"k":[]}]}},)"
    "\n "
    R"({"metadata":{"name":"b","items":[{"not":"these"}]},"s":"items"}, {"metadata":{"name":"c"}}]})";

TEST_CASE("ListDecoder yields the items and head of the whole document, in any pieces") {
  const Decoded want = Whole(kList);
  REQUIRE(want.items.size() == 3);
  for (size_t piece : {1u, 2u, 3u, 7u, 64u, 100000u}) {
    INFO(piece);
    Decoded got = Decode(kList, piece);
    REQUIRE(got.status.ok());
    CHECK(got.items == want.items);
    CHECK(got.head == want.head);
  }
}

// Escapes, quotes and brackets inside strings, an escaped backslash before a closing quote, and
// nesting: split in two at every byte, so every state is crossed at a chunk boundary.
TEST_CASE("ListDecoder yields the same items wherever a chunk ends") {
  const std::string list = R"({"metadata":{"resourceVersion":"9"},"items":[)"
                           R"({"a":"x\\","b":"\"}]{[","c":[[{"d":"\\\""}],[]],"e":{}},)"
                           R"({"f":"]"},{"g":[1,2,{"h":"{"}]},{})"
                           R"(],"kind":"List"})";
  const Decoded want = Whole(list);
  REQUIRE(want.items.size() == 4);
  for (size_t cut = 0; cut <= list.size(); ++cut) {
    INFO(cut);
    ListDecoder d;
    std::vector<std::string> items;
    auto on_item = [&](json::Value& item) {
      items.push_back(json::Write(item));
      return OkStatus();
    };
    REQUIRE(d.Feed(std::string_view(list).substr(0, cut), on_item).ok());
    REQUIRE(d.Feed(std::string_view(list).substr(cut), on_item).ok());
    StatusOr<json::Value> head = d.Finish();
    REQUIRE(head.ok());
    CHECK(items == want.items);
    CHECK(json::Write(*head) == want.head);
  }
}

TEST_CASE("ListDecoder: member order, empty and absent items") {
  const std::string items_first =
      R"({"items":[{"a":1},{"b":2}],"metadata":{"resourceVersion":"7"},"kind":"List"})";
  Decoded got = Decode(items_first, 5);
  REQUIRE(got.status.ok());
  CHECK(got.items == std::vector<std::string>{R"({"a":1})", R"({"b":2})"});
  CHECK(got.head == R"({"items":[],"metadata":{"resourceVersion":"7"},"kind":"List"})");
  // A string value "items" followed by an array elsewhere is not the items array.
  got = Decode(R"({"kind":"items","x":[{"a":1}],"items":[]})", 3);
  REQUIRE(got.status.ok());
  CHECK(got.items.empty());
  CHECK(got.head == R"({"kind":"items","x":[{"a":1}],"items":[]})");
  got = Decode(R"({"metadata":{}})", 1);
  REQUIRE(got.status.ok());
  CHECK(got.items.empty());
}

TEST_CASE("ListDecoder leaves out each item's skipped parts") {
  const json::SkipPaths skip({{"spec"}});
  Decoded got = Decode(kList, 4, &skip);
  REQUIRE(got.status.ok());
  REQUIRE(got.items.size() == 3);
  CHECK(got.items[0] == R"({"metadata":{"name":"a","annotations":{"x":"}]{[\"\\"}}})");
}

TEST_CASE("ListDecoder reports malformed lists and handler errors") {
  for (const std::string bad :
       {R"({"items":[{"a":1}])", R"({"items":[1,2]})", R"([{"a":1}])", R"({"items":[{"a":}]})",
        R"({"items":[]}})", R"({"items":[]} x)", ""}) {
    INFO(bad);
    CHECK_FALSE(Decode(bad, 3).status.ok());
  }
  ListDecoder d;
  int calls = 0;
  Status s = d.Feed(kList, [&](json::Value&) {
    ++calls;
    return CancelledError("stop");
  });
  CHECK(s.code() == StatusCode::kCancelled);
  CHECK(calls == 1);
  CHECK_FALSE(d.Finish().ok());
}

}  // namespace
}  // namespace trainer::kube
