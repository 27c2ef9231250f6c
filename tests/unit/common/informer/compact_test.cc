// Tests of common/informer/compact.h: round trips of every JSON shape, order kept, keys shared.
#include "common/informer/compact.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "common/files/files.h"

namespace trainer::informer {
namespace {

json::Value ParseOrDie(std::string_view text) {
  auto v = json::Parse(text);
  REQUIRE(v.ok());
  return std::move(*v);
}

TEST_CASE("compact objects round-trip every value kind", "[informer][compact]") {
  const char* docs[] = {
      "null",
      "true",
      "false",
      "0",
      "-1",
      "9223372036854775807",
      "-9223372036854775808",
      "1.5",
      "-0.25",
      "\"\"",
      "\"h\\u00e9llo\"",
      "[]",
      "{}",
      "[1,[2,[3,{}]],null]",
      R"({"z":1,"a":{"y":[true,false,null,"s",2.5]},"m":{}})",
  };
  for (const char* d : docs) {
    json::Value v = ParseOrDie(d);
    CompactObject c = CompactObject::Encode(v);
    json::Value back = c.Decode();
    INFO(d);
    CHECK(back == v);
    CHECK(json::Write(back) == json::Write(v));  // member order kept
  }
}

TEST_CASE("long and many keys fall back to inline keys and still round-trip",
          "[informer][compact]") {
  json::Value v = json::Value::Object();
  const std::string long_key(500, 'k');
  v.Set(long_key, 1);
  CompactObject c = CompactObject::Encode(v);
  CHECK(c.Decode() == v);
}

TEST_CASE("a JobSet round-trips and is far smaller than its JSON", "[informer][compact]") {
  StatusOr<std::string> text = files::ReadFile("tests/unit/common/informer/testdata/jobset.json");
  REQUIRE(text.ok());
  json::Value js = ParseOrDie(*text);
  const size_t json_size = json::Write(js).size();
  CompactObject c = CompactObject::Encode(js);
  CHECK(c.Decode() == js);
  CHECK(json::Write(c.Decode()) == json::Write(js));
  CHECK(c.size() < json_size * 3 / 4);
}

TEST_CASE("long strings are stored once for every object holding them", "[informer][compact]") {
  const size_t count_before = PooledStringCount();
  const size_t bytes_before = PooledStringBytes();
  const std::string yaml(4096, 'y');  // a runtime snapshot's YAML, say
  auto snapshot = [&](std::string_view name) {
    json::Value cm = json::Value::Object();
    cm["metadata"].Set("name", name);
    cm["data"].Set("runtime", yaml);
    cm["data"].Set("short", "kept inline");
    return cm;
  };
  {
    std::vector<CompactObject> objs;
    for (int i = 0; i < 100; ++i) {
      objs.push_back(CompactObject::Encode(snapshot("s" + std::to_string(i))));
    }
    CHECK(PooledStringCount() == count_before + 1);
    CHECK(PooledStringBytes() == bytes_before + yaml.size());
    for (int i = 0; i < 100; ++i) {
      CHECK(objs[i].size() < 64);  // the 4 kB text is not in the object
      CHECK(objs[i].Decode() == snapshot("s" + std::to_string(i)));
    }
    // A different text gets its own entry; dropping its only holder frees it.
    json::Value other = snapshot("o");
    other["data"].Set("runtime", std::string(600, 'z'));
    {
      CompactObject o = CompactObject::Encode(other);
      CHECK(PooledStringCount() == count_before + 2);
      CHECK(o.Decode() == other);
    }
    CHECK(PooledStringCount() == count_before + 1);
    // Strings below the threshold stay inline.
    json::Value small = snapshot("small");
    small["data"].Set("runtime", std::string(CompactObject::kPooledStringMin - 1, 'a'));
    CompactObject s = CompactObject::Encode(small);
    CHECK(s.size() > CompactObject::kPooledStringMin - 1);
    CHECK(PooledStringCount() == count_before + 1);
  }
  // The last holder gone, the text is freed.
  CHECK(PooledStringCount() == count_before);
  CHECK(PooledStringBytes() == bytes_before);
}

}  // namespace
}  // namespace trainer::informer
