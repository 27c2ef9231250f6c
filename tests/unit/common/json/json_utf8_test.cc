// Tests for common/json's UTF-8 handling: Parse reads invalid UTF-8 and unpaired surrogate
// escapes as U+FFFD (Go's encoding/json does, and AdmissionReview bodies come from Go), and the
// writers never emit invalid UTF-8.
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "common/json/json.h"

namespace trainer::json {
namespace {

const std::string kFFFD = "\xEF\xBF\xBD";

std::string ParsedString(const std::string& json_text) {
  auto v = Parse(json_text);
  INFO(json_text);
  REQUIRE(v.status().ToString() == "OK");
  REQUIRE(v->IsString());
  return v->AsString();
}

// Valid UTF-8 per Go's utf8.Valid, written independently of the code under test.
bool ValidUtf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (size_t k = 1; k < n; ++k) {
      auto t = static_cast<unsigned char>(s[i + k]);
      if ((t & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (t & 0x3F);
    }
    static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n;
  }
  return true;
}

TEST_CASE("json::Parse reads invalid UTF-8 in strings as U+FFFD, byte by byte", "[unit][json]") {
  struct Case {
    const char* name;
    std::string in;    // the string's bytes inside the quotes
    std::string want;  // the decoded value
  };
  const Case cases[] = {
      {"lone 0xff", "\xff", kFFFD},
      {"continuation byte", "a\x80z", "a" + kFFFD + "z"},
      {"truncated 3-byte sequence",
       "\xE2\x82"
       "A",
       kFFFD + kFFFD + "A"},
      {"overlong slash", "\xC0\xAF", kFFFD + kFFFD},
      {"encoded surrogate", "\xED\xA0\x80", kFFFD + kFFFD + kFFFD},
      {"above U+10FFFF", "\xF4\x90\x80\x80", kFFFD + kFFFD + kFFFD + kFFFD},
      {"truncated at the end", "ok\xF0\x9F\x98", "ok" + kFFFD + kFFFD + kFFFD},
      {"valid text is untouched", "caf\xC3\xA9 \xF0\x9F\x98\x80 \xEF\xBF\xBF",
       "caf\xC3\xA9 \xF0\x9F\x98\x80 \xEF\xBF\xBF"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) { CHECK(ParsedString("\"" + c.in + "\"") == c.want); }
  }
  SECTION("in keys too") {
    auto v = Parse("{\"k\xff\":1}");
    REQUIRE(v.ok());
    CHECK(v->Find("k" + kFFFD) != nullptr);
  }
  SECTION("outside a string it is still a syntax error") {
    auto v = Parse("{\"a\":1}\xff");
    REQUIRE_FALSE(v.ok());
    CHECK(v.status().message().find("invalid JSON at offset") == 0);
    CHECK_FALSE(Parse("\xff").ok());
  }
}

TEST_CASE("json::Parse reads unpaired surrogate escapes as U+FFFD", "[unit][json]") {
  CHECK(ParsedString(R"("\ud83d\ude00")") == "\xF0\x9F\x98\x80");  // a pair stays one rune
  CHECK(ParsedString(R"("\uD83D\uDE00")") == "\xF0\x9F\x98\x80");
  CHECK(ParsedString(R"("\ud800")") == kFFFD);
  CHECK(ParsedString(R"("\udc00")") == kFFFD);
  CHECK(ParsedString(R"("a\ud800b")") == "a" + kFFFD + "b");
  CHECK(ParsedString(R"("\ud800\ud800\udc00")") == kFFFD + "\xF0\x90\x80\x80");
  CHECK(ParsedString(R"("\ud800\n")") == kFFFD + "\n");
  CHECK(ParsedString(R"("\\ud800")") == "\\ud800");  // an escaped backslash, not an escape
  CHECK(ParsedString(R"("\"\ud800")") == "\"" + kFFFD);
  CHECK_FALSE(Parse(R"("\ud80")").ok());  // a short escape stays an error
}

TEST_CASE("json writers never emit invalid UTF-8", "[unit][json]") {
  Value obj = Value::Object();
  obj.Set("k\xff", Value(std::string("v\xC0\xAF\xED\xA0\x80ok")));
  obj.Set("valid", Value(std::string("caf\xC3\xA9")));
  for (const std::string& text : {Write(obj), WriteCanonical(obj), WritePretty(obj)}) {
    INFO(text);
    CHECK(ValidUtf8(text));
    auto back = Parse(text);
    REQUIRE(back.ok());
    const Value* v = back->Find("k" + kFFFD);
    REQUIRE(v != nullptr);
    CHECK(v->AsString() == "v" + kFFFD + kFFFD + kFFFD + kFFFD + kFFFD + "ok");
    CHECK(back->Find("valid")->AsString() == "caf\xC3\xA9");
  }
  CHECK(Write(Value(std::string("\xff"))) == "\"" + kFFFD + "\"");
}

TEST_CASE("json round trip of parsed invalid UTF-8 is stable", "[unit][json]") {
  // The fuzzing property (tests/fuzz/yaml_to_json.cc): Parse(Write(v)) == v and the text is fixed.
  for (const char* in : {"[\"\xff\"]", "{\"\xC3\":\"\\udfff\"}", "\"\xE2\x82\\ud800\""}) {
    auto v = Parse(in);
    INFO(in);
    REQUIRE(v.ok());
    std::string once = Write(*v);
    CHECK(ValidUtf8(once));
    auto again = Parse(once);
    REQUIRE(again.ok());
    CHECK(*again == *v);
    CHECK(Write(*again) == once);
  }
}

TEST_CASE("json::AppendString writes a string as Write does", "[unit][json]") {
  // AppendString has a shortcut for strings that need no escaping; every byte value, alone and
  // inside random strings, must come out as the writer writes it.
  std::vector<std::string> cases = {
      "",          "plain",       "with \"quote\"", "back\\slash",
      "tab\tnl\n", "caf\xC3\xA9", "\xff",           std::string("nul\0x", 5),
      "\x7f"};
  for (int b = 0; b < 256; ++b) {
    cases.push_back(std::string(1, static_cast<char>(b)));
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string s(rng() % 12, ' ');
    for (char& c : s) c = static_cast<char>(rng() % 2 == 0 ? 'a' + rng() % 26 : rng() % 256);
    cases.push_back(s);
  }
  for (const std::string& s : cases) {
    INFO(s);
    std::string out = "prefix";
    AppendString(out, s);
    CHECK(out == "prefix" + Write(Value(s)));
  }
}

}  // namespace
}  // namespace trainer::json
