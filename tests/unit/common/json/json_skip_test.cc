// Tests for Parse with SkipPaths: the document parsed with skips equals the document parsed
// whole with those paths erased afterwards (same members, same order), and a parse fails the
// same way with or without skips.
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "common/json/json.h"

namespace trainer::json {
namespace {

// The reference: erases `path` from a whole document, written independently of the parser.
void ErasePath(Value& v, const std::vector<std::string>& path, size_t i = 0) {
  if (i == path.size()) return;
  const std::string& key = path[i];
  const bool last = i + 1 == path.size();
  if (v.IsObject()) {
    Members& m = v.members();
    if (last) {
      std::erase_if(m, [&](const Member& e) { return key == "*" || e.first == key; });
      return;
    }
    for (Member& e : m) {
      if (key == "*" || e.first == key) ErasePath(e.second, path, i + 1);
    }
  } else if (v.IsArray() && key == "*") {
    if (last) {
      v.elements().clear();
      return;
    }
    for (Value& e : v.elements()) ErasePath(e, path, i + 1);
  }
}

std::string Skipping(const std::string& text, const SkipPaths& skip) {
  StatusOr<Value> v = Parse(text, skip);
  REQUIRE(v.ok());
  return Write(*v);
}

std::string Erased(const std::string& text, const SkipPaths& skip) {
  StatusOr<Value> v = Parse(text);
  REQUIRE(v.ok());
  for (const auto& p : skip.paths()) ErasePath(*v, p);
  return Write(*v);
}

const char* kJobSet = R"({"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet",
  "metadata":{"name":"tj","namespace":"ns","resourceVersion":"7",
    "managedFields":[{"manager":"trainer","operation":"Apply","apiVersion":"v1",
      "fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicatedJobs":{}}},"time":"t"},
      {"manager":"jobset","operation":"Update","subresource":"status","fieldsV1":{"f:status":{}}}]},
  "spec":{"suspend":false,"replicatedJobs":[
    {"name":"node","replicas":2,"template":{"spec":{"parallelism":1,"template":{"spec":{
      "containers":[{"name":"c","image":"i","command":["a","b"],"resources":{"limits":{"cpu":1.5}}}]}}}}},
    {"name":"init","replicas":1,"template":{"x":[1,2,[3,{"y":null}]]}}]},
  "status":{"conditions":[]}})";

TEST_CASE("SkipPaths leaves out exactly what erasing afterwards removes") {
  const std::vector<SkipPaths> cases = {
      SkipPaths({{"metadata", "managedFields"}}),
      SkipPaths({{"metadata", "managedFields", "*", "fieldsV1"},
                 {"metadata", "managedFields", "*", "time"}}),
      SkipPaths({{"spec", "replicatedJobs", "*", "template"}}),
      SkipPaths({{"spec", "*"}}),
      SkipPaths({{"*", "resourceVersion"}, {"metadata", "name"}}),
      SkipPaths({{"spec", "replicatedJobs", "*"}}),
      SkipPaths({{"status"}, {"kind"}, {"apiVersion"}}),
      SkipPaths({{"spec", "replicatedJobs", "*", "template", "spec", "template"},
                 {"spec", "replicatedJobs", "*", "template"}}),
      SkipPaths({{"spec", "replicatedJobs", "*", "name"}, {"spec", "*", "*", "replicas"}}),
      SkipPaths({{"nope"}, {"metadata", "nope", "deeper"}}),
  };
  for (const SkipPaths& skip : cases) {
    INFO(Write(Value::StringArray(skip.paths().front())));
    CHECK(Skipping(kJobSet, skip) == Erased(kJobSet, skip));
  }
  CHECK(Skipping(kJobSet, SkipPaths()) == Write(*Parse(kJobSet)));
}

TEST_CASE("SkipPaths: a skipped root, scalars, arrays and duplicate keys") {
  CHECK(Skipping(R"({"a":1})", SkipPaths({{}})) == "null");
  CHECK(Skipping(R"([1,[2],{"a":3}])", SkipPaths({{"*"}})) == "[]");
  CHECK(Skipping(R"([{"a":1,"b":2},{"b":3}])", SkipPaths({{"*", "b"}})) == R"([{"a":1},{}])");
  CHECK(Skipping(R"({"a":"x","a":"y","b":true})", SkipPaths({{"a"}})) == R"({"b":true})");
  CHECK(Skipping(R"({"a":{"b":1},"a":{"c":2}})", SkipPaths({{"a", "b"}})) == R"({"a":{"c":2}})");
  // A scalar where an object was expected is kept: only the named path goes.
  CHECK(Skipping(R"({"a":5})", SkipPaths({{"a", "b"}})) == R"({"a":5})");
}

TEST_CASE("SkipPaths::Under prefixes every path") {
  SkipPaths skip = SkipPaths({{"metadata", "managedFields"}}).Under({"items", "*"});
  REQUIRE(skip.paths().size() == 1);
  CHECK(skip.paths()[0] == std::vector<std::string>{"items", "*", "metadata", "managedFields"});
  const std::string list =
      R"({"metadata":{"managedFields":1},"items":[{"metadata":{"name":"a","managedFields":[]}}]})";
  CHECK(Skipping(list, skip) ==
        R"({"metadata":{"managedFields":1},"items":[{"metadata":{"name":"a"}}]})");
}

TEST_CASE("A parse fails the same with or without skips") {
  const SkipPaths skip({{"a"}});
  for (const std::string text : {R"({"a":{"b":[1,2}})", R"({"a":1e999})", R"({"a":[tru]})",
                                 R"({"a":"\x"})", R"({"a":{}})", R"({"a":{},})"}) {
    INFO(text);
    StatusOr<Value> whole = Parse(text);
    StatusOr<Value> skipped = Parse(text, skip);
    CHECK(whole.status().ToString() == skipped.status().ToString());
  }
  std::string deep = R"({"a":)" + std::string(20000, '[') + std::string(20000, ']') + "}";
  StatusOr<Value> whole = Parse(deep);
  StatusOr<Value> skipped = Parse(deep, skip);
  REQUIRE_FALSE(whole.ok());
  CHECK(whole.status().ToString() == skipped.status().ToString());
}

// Random documents and random paths drawn from their own keys.
std::string RandomDoc(std::mt19937& rng, int depth) {
  const char* keys[] = {"a", "b", "c", "*x"};
  std::uniform_int_distribution<int> kind(0, depth > 3 ? 2 : 4);
  switch (kind(rng)) {
    case 0:
      return std::to_string(rng() % 100);
    case 1:
      return "\"s" + std::to_string(rng() % 10) + "\"";
    case 2:
      return rng() % 2 ? "null" : "true";
    case 3: {
      std::string out = "[";
      for (int i = 0, n = static_cast<int>(rng() % 4); i < n; ++i) {
        out += (i ? "," : "") + RandomDoc(rng, depth + 1);
      }
      return out + "]";
    }
    default: {
      std::string out = "{";
      for (int i = 0, n = static_cast<int>(rng() % 4); i < n; ++i) {
        out +=
            std::string(i ? "," : "") + "\"" + keys[rng() % 4] + "\":" + RandomDoc(rng, depth + 1);
      }
      return out + "}";
    }
  }
}

TEST_CASE("SkipPaths on random documents matches erasing afterwards") {
  std::mt19937 rng(20);
  const char* steps[] = {"a", "b", "c", "*", "*x"};
  for (int round = 0; round < 2000; ++round) {
    const std::string doc = RandomDoc(rng, 0);
    SkipPaths skip;
    for (int p = 0, n = 1 + static_cast<int>(rng() % 3); p < n; ++p) {
      std::vector<std::string> path;
      for (int i = 0, len = 1 + static_cast<int>(rng() % 3); i < len; ++i) {
        path.push_back(steps[rng() % 5]);
      }
      skip.Add(path);
    }
    INFO(doc);
    REQUIRE(Skipping(doc, skip) == Erased(doc, skip));
  }
}

}  // namespace
}  // namespace trainer::json
