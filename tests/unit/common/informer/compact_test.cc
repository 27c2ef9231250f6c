// Tests of common/informer/compact.h: round trips of every JSON shape, order kept, keys shared.
#include "common/informer/compact.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

namespace trainer::informer {
namespace {

json::Value ParseOrDie(std::string_view text) {
  auto v = json::Parse(text);
  REQUIRE(v.ok());
  return std::move(*v);
}

TEST_CASE("compact objects round-trip every value kind", "[informer][compact]") {
  const char* docs[] = {
      "null", "true", "false", "0", "-1", "9223372036854775807", "-9223372036854775808", "1.5",
      "-0.25", "\"\"", "\"h\\u00e9llo\"", "[]", "{}", "[1,[2,[3,{}]],null]",
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
  std::ifstream in("tests/unit/common/informer/testdata/jobset.json");
  std::stringstream ss;
  ss << in.rdbuf();
  json::Value js = ParseOrDie(ss.str());
  const size_t json_size = json::Write(js).size();
  CompactObject c = CompactObject::Encode(js);
  CHECK(c.Decode() == js);
  CHECK(json::Write(c.Decode()) == json::Write(js));
  CHECK(c.size() < json_size * 3 / 4);
}

}  // namespace
}  // namespace trainer::informer
