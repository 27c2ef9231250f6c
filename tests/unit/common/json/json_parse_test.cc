// json::Parse against RapidJSON's iterative reader, the parser it used alone before it read with
// the recursive one first: every error (code and offset) reads as that reader reports it, for
// truncated and corrupted documents, shallow and deeper than the recursive parser goes; and a
// hostile nesting depth cannot overflow a thread's stack.
#include <pthread.h>
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "common/json/json.h"

namespace trainer {
namespace {

// What Parse answered before: RapidJSON's iterative reader with Parse's flags, on the same
// NUL-terminated, padded copy, every event accepted ("" when the text is valid JSON).
std::string IterativeError(std::string_view text) {
  std::string buf(text);
  buf.append(16, '\0');
  rapidjson::Reader reader;
  rapidjson::BaseReaderHandler<> accept_all;
  rapidjson::InsituStringStream is(buf.data());
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag |
                              rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseInsituFlag;
  rapidjson::ParseResult r = reader.Parse<kFlags>(is, accept_all);
  if (r) return "";
  return "invalid JSON at offset " + std::to_string(r.Offset()) + ": " +
         rapidjson::GetParseError_En(r.Code());
}

std::string ParseError(std::string_view text) {
  StatusOr<json::Value> v = json::Parse(text);
  return v.ok() ? "" : v.status().message();
}

std::string Nested(size_t depth, std::string_view inner) {
  return std::string(depth, '[') + std::string(inner) + std::string(depth, ']');
}

// Documents with every kind of token, whitespace, escapes and empty containers; one nesting
// deeper than the recursive parser goes (so read by the iterative one), one just below.
const std::vector<std::string>& Documents() {
  static const std::vector<std::string> docs = {
      R"({"apiVersion":"v1","kind":"AdmissionReview","request":{"uid":"u-1","object":)"
      R"({"metadata":{"name":"a","labels":{}},"spec":{"n":2,"f":-1.5e3,"ok":true,)"
      R"("no":false,"none":null,"cmd":["a","b\"c\\d\n"],"e":[],"o":[{},[1,[2]]]}}}})",
      " { \"a\" : [ 1 , 2 ] ,\n\t\"b\" : { } , \"c\" : \"x\" } ",
      "[\"s\",0,-0,1e5,{\"k\":[true,null]}]",
      "\"just a string\"",
      "-12.5",
      Nested(600, R"({"a":[1,"x"]})"),
      Nested(511, R"({"a":1})"),
  };
  return docs;
}

TEST_CASE("parse errors read as RapidJSON's iterative reader reports them", "[json]") {
  for (const std::string& doc : Documents()) {
    INFO(doc.substr(0, 80));
    REQUIRE(ParseError(doc).empty());
    REQUIRE(IterativeError(doc).empty());
    // Every truncation.
    for (size_t n = 0; n < doc.size(); ++n) {
      std::string_view prefix = std::string_view(doc).substr(0, n);
      INFO("prefix of " << n << " bytes");
      CHECK(ParseError(prefix) == IterativeError(prefix));
    }
    // Every byte replaced by each structural character and a few others.
    for (size_t i = 0; i < doc.size(); ++i) {
      for (char c : std::string_view("[]{},:\" x1-.e\\tn")) {
        if (doc[i] == c) {
          continue;
        }
        std::string bad = doc;
        bad[i] = c;
        INFO("byte " << i << " replaced by '" << c << "'");
        CHECK(ParseError(bad) == IterativeError(bad));
      }
    }
  }
}

TEST_CASE("texts starting where no value can are empty documents, as before", "[json]") {
  for (std::string_view text : {"]", "}", ",", ":", "  ]", "\n\t,1", "}{"}) {
    INFO(text);
    CHECK(ParseError(text) == IterativeError(text));
    CHECK(ParseError(text).find("The document is empty.") != std::string::npos);
  }
  CHECK(ParseError("x") == "invalid JSON at offset 0: Invalid value.");
}

TEST_CASE("documents deeper than the recursive parser goes read whole and the same", "[json]") {
  for (size_t depth : {510, 511, 512, 513, 514, 2000, 9999}) {
    INFO(depth);
    const std::string array = Nested(depth, "1");
    StatusOr<json::Value> v = json::Parse(array);
    REQUIRE(v.ok());
    CHECK(json::Write(*v) == array);
    // Nested objects, some of their members left out by a skip.
    std::string object;
    for (size_t i = 0; i < depth; ++i) object += R"({"s":"x","k":)";
    object += "0" + std::string(depth, '}');
    json::SkipPaths skip({{"k", "k", "s"}});
    StatusOr<json::Value> o = json::Parse(object, skip);
    REQUIRE(o.ok());
    CHECK(o->Find("k")->Find("k")->Find("s") == nullptr);
    CHECK(o->Find("k")->Find("k")->Find("k")->Find("s")->AsString() == "x");
  }
  // The depth limit counts skipped containers too, in either parser.
  json::SkipPaths skip_all({{"a"}});
  CHECK(json::Parse(R"({"a":)" + Nested(9999, "") + "}", skip_all).ok());
  CHECK(json::Parse(R"({"a":)" + Nested(10000, "") + "}", skip_all).status().message() ==
        "invalid JSON at offset 10004: nesting deeper than 10000 levels");
  CHECK(ParseError(Nested(10001, "")) ==
        "invalid JSON at offset 10000: nesting deeper than 10000 levels");
  // An error after the recursive parser's depth reads as before.
  const std::string bad = Nested(700, "1,");
  CHECK(ParseError(bad) == IterativeError(bad));
  CHECK(ParseError(bad) == "invalid JSON at offset 702: Invalid value.");
}

// Runs fn on a thread with a 1 MiB stack (an eighth of a server thread's default).
void OnSmallStack(void (*fn)()) {
  pthread_attr_t attr;
  REQUIRE(pthread_attr_init(&attr) == 0);
  REQUIRE(pthread_attr_setstacksize(&attr, 1 << 20) == 0);
  pthread_t thread;
  auto run = [](void* arg) -> void* {
    (*static_cast<void (**)()>(arg))();
    return nullptr;
  };
  REQUIRE(pthread_create(&thread, &attr, run, &fn) == 0);
  REQUIRE(pthread_join(thread, nullptr) == 0);
  pthread_attr_destroy(&attr);
}

std::string small_stack_error;  // what the thread saw
bool small_stack_ok = false;

TEST_CASE("deep nesting cannot overflow a small thread stack", "[json]") {
  // A recursive parser allowed 10000 levels needs megabytes of stack here; Parse recurses at most
  // a few hundred levels and reads the rest iteratively.
  OnSmallStack([] {
    small_stack_error = ParseError(Nested(100000, ""));
    StatusOr<json::Value> v = json::Parse(Nested(1000, "1"));
    small_stack_ok = v.ok() && v->IsArray();
  });
  CHECK(small_stack_error == "invalid JSON at offset 10000: nesting deeper than 10000 levels");
  CHECK(small_stack_ok);
}

}  // namespace
}  // namespace trainer
