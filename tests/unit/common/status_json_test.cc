// Unit tests for common/status and the json::Value core.
#include <catch2/catch.hpp>

#include "common/json/json.h"
#include "common/status/status.h"

namespace trainer {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgumentError("odd");
  return x / 2;
}

Status UseHalf(int x, int* out) {
  ASSIGN_OR_RETURN(*out, Half(x));
  RETURN_IF_ERROR(OkStatus());
  return OkStatus();
}

TEST_CASE("status macros propagate errors with context", "[status]") {
  int out = 0;
  REQUIRE(UseHalf(4, &out).ok());
  CHECK(out == 2);
  Status s = UseHalf(3, &out);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.WithContext("spec").ToString() == "InvalidArgument: spec: odd");
  CHECK(NotFoundError("x").set_http_code(404).http_code() == 404);
}

TEST_CASE("json round trip keeps insertion order and canonical sorts", "[json]") {
  auto v = json::Parse(R"({"b":1,"a":{"y":[1,2.5,"s",null,true],"x":{}}})");
  REQUIRE(v.ok());
  CHECK(json::Write(*v) == R"({"b":1,"a":{"y":[1,2.5,"s",null,true],"x":{}}})");
  CHECK(json::WriteCanonical(*v) == R"({"a":{"x":{},"y":[1,2.5,"s",null,true]},"b":1})");
  json::Value c = v->Clone();
  CHECK(c == *v);
  c["a"]["x"]["new"] = json::Value("v");
  CHECK(c != *v);
  CHECK(json::Hash(*v) ==
        json::Hash(*json::Parse(R"({"a":{"x":{},"y":[1,2.5,"s",null,true]},"b":1})")));
}

TEST_CASE("json parse errors name the offset", "[json]") {
  auto v = json::Parse(R"({"a":)");
  REQUIRE_FALSE(v.ok());
  CHECK(v.status().message().find("offset") != std::string::npos);
  // Invalid UTF-8 in a string reads as U+FFFD, as Go's encoding/json reads it (json_utf8_test.cc).
  CHECK(json::Parse("\"\xff\"")->AsString() == "\xEF\xBF\xBD");
}

TEST_CASE("json parse reads exactly the text it is given", "[json]") {
  // Parse reads a NUL-terminated copy in place, 16 bytes at a time: a view into a larger buffer
  // ends where the view ends, and strings of every length and escape position read back whole.
  std::string buffer = R"([1,"two"]garbage)";
  auto v = json::Parse(std::string_view(buffer).substr(0, 9));
  REQUIRE(v.ok());
  CHECK(json::Write(*v) == R"([1,"two"])");
  CHECK(buffer == R"([1,"two"]garbage)");  // the caller's text is not touched
  CHECK_FALSE(json::Parse(std::string_view(buffer).substr(0, 8)).ok());
  for (size_t n = 0; n < 70; ++n) {
    std::string plain(n, 'x');
    std::string escaped = plain + "\\\"\\n" + plain;
    auto p = json::Parse("{\"k" + plain + "\":\"" + plain + "\",\"e\":\"" + escaped + "\"}");
    REQUIRE(p.ok());
    CHECK(p->Find("k" + plain)->AsString() == plain);
    CHECK(p->Find("e")->AsString() == plain + "\"\n" + plain);
    CHECK(json::Parse(json::Write(*p)).value() == *p);
  }
  // An embedded NUL ends the document, as it always did for RapidJSON's bounded stream.
  CHECK(json::Parse(std::string_view("[1]\0[2]", 7)).value() == json::Parse("[1]").value());
  CHECK_FALSE(json::Parse(std::string_view("[\"a\0b\"]", 7)).ok());
}

TEST_CASE("json numbers read as Go's strconv reads them", "[json]") {
  auto num = [](std::string_view text) {
    auto v = json::Parse(text);
    REQUIRE(v.ok());
    return std::move(v).value();
  };
  SECTION("integers that fit int64 stay integers; the rest are doubles") {
    CHECK(num("9223372036854775807").AsInt() == INT64_MAX);
    CHECK(num("-9223372036854775808").AsInt() == INT64_MIN);
    CHECK(num("-0").AsInt() == 0);
    CHECK(num("9223372036854775808").IsDouble());
    CHECK(num("9223372036854775808").AsDouble() == 9223372036854775808.0);
    CHECK(num("-18446744073709551617").AsDouble() == -18446744073709551616.0);
    CHECK(num("2.0").IsDouble());
    // AsInt truncates doubles and saturates beyond int64 (a plain cast is undefined there).
    CHECK(num("2.9").AsInt() == 2);
    CHECK(num("88888888888888888888").AsInt() == INT64_MAX);
    CHECK(num("-1e300").AsInt() == INT64_MIN);
  }
  SECTION("doubles are correctly rounded, so a written value reads back the same") {
    // RapidJSON's own conversion read 5e31 as 4.9999999999999994e31 (found by tests/fuzz).
    for (double d : {5e31, 1e23, 8.41e21, 0.1, 2.2250738585072014e-308, 4.9e-324,
                     1.7976931348623157e308, 123456.789e-12}) {
      INFO(d);
      CHECK(num(json::Write(json::Value(d))).AsDouble() == d);
    }
    CHECK(num("5e31").AsDouble() == 5e31);
    CHECK(num("1e-400").AsDouble() == 0.0);
    CHECK(num("2.4703282292062328e-324").AsDouble() == 4.9406564584124654e-324);
  }
  SECTION("a number beyond the double range is an error, not infinity") {
    for (std::string_view text : {"1e309", "[1, 9e308]", "-1.8e308"}) {
      auto v = json::Parse(text);
      INFO(text);
      REQUIRE_FALSE(v.ok());
      CHECK(v.status().message().find("Number too big to be stored in double.") !=
            std::string::npos);
    }
    CHECK(json::Parse("[1, 9e308]").status().message() ==
          "invalid JSON at offset 4: Number too big to be stored in double.");
  }
}

TEST_CASE("json deep nesting does not overflow the stack", "[json]") {
  std::string deep(100000, '[');
  deep += std::string(100000, ']');
  auto v = json::Parse(deep);
  REQUIRE_FALSE(v.ok());
  CHECK(v.status().message().find("nesting deeper than 10000") != std::string::npos);
  std::string ok_depth = std::string(5000, '[') + std::string(5000, ']');
  CHECK(json::Parse(ok_depth).ok());
}

TEST_CASE("json parse carries nothing over from an earlier parse", "[json]") {
  // Parse reuses its buffers on a thread: a parse that failed half way (open objects and arrays,
  // a pending key), a large document or a deep one must leave nothing that shows in the next.
  const std::string small = R"({"a":[1,{"b":"c"}],"d":"e"})";
  const std::string large = "[" + std::string(200000, '1') + "]";
  std::string wide = "{";
  for (int i = 0; i < 5000; ++i) wide += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":[" + "0]";
  wide += "}";
  for (const std::string& before :
       {std::string(R"({"x":[1,2,{"y":)"), std::string(R"({"x":{"y":[{"z":1},)"),
        std::string(R"([[[{"k":"v","k2":)"), large, wide, std::string(20000, '['),
        std::string(R"({"a":1,"a":)")}) {
    INFO(before.substr(0, 40));
    (void)json::Parse(before);
    auto v = json::Parse(small);
    REQUIRE(v.ok());
    CHECK(json::Write(*v) == small);
    auto e = json::Parse(R"({"only":true})");
    REQUIRE(e.ok());
    CHECK(json::Write(*e) == R"({"only":true})");
  }
}

TEST_CASE("typed getters name the path on a wrong type", "[json]") {
  auto v = json::Parse(R"({"n":"3","m":2.0,"f":2.5})");
  REQUIRE(v.ok());
  int64_t n = 0;
  Status s = json::GetInt(*v, "n", "spec.trainer.numNodes", &n);
  CHECK(s.message() == "spec.trainer.numNodes: expected integer, got string");
  CHECK(json::GetInt(*v, "m", "m", &n).ok());
  CHECK(n == 2);
  CHECK_FALSE(json::GetInt(*v, "f", "f", &n).ok());
  CHECK(json::GetInt(*v, "absent", "absent", &n).ok());
}

TEST_CASE("keyed upsert replaces in place or appends", "[json]") {
  json::Value env = *json::Parse(R"([{"name":"A","value":"1"},{"name":"B","value":"2"}])");
  json::UpsertByKey(env, "name", *json::Parse(R"({"name":"A","value":"x"})"));
  json::UpsertByKey(env, "name", *json::Parse(R"({"name":"C","value":"3"})"));
  CHECK(json::Write(env) ==
        R"([{"name":"A","value":"x"},{"name":"B","value":"2"},{"name":"C","value":"3"}])");
  CHECK(json::FindByKey(env, "name", "B") != nullptr);
}

TEST_CASE("self move assignment out of a child is safe", "[json]") {
  json::Value v = *json::Parse(R"({"a":{"b":1}})");
  v = std::move(v["a"]);
  CHECK(json::Write(v) == R"({"b":1})");
}

}  // namespace
}  // namespace trainer
