// Tests of runtime/field: paths, error rendering as apimachinery's, aggregation.
#include "runtime/field/field.h"

#include <catch2/catch.hpp>
#include <random>
#include <regex>
#include <string>
#include <vector>

namespace trainer::field {
namespace {

TEST_CASE("Path", "[field]") {
  CHECK(NewPath("spec").Child("runtimePatches").Index(0).String() == "spec.runtimePatches[0]");
  CHECK(NewPath("spec", "trainer", "env").String() == "spec.trainer.env");
  CHECK(NewPath("spec").Child("annotations").Key("scheduling.volcano.sh/queue-name").String() ==
        "spec.annotations[scheduling.volcano.sh/queue-name]");
}

TEST_CASE("Error rendering", "[field]") {
  SECTION("invalid with a string value") {
    Error e = Invalid(NewPath("spec", "trainer", "args").Index(1), String("output_dir=/x"),
                      "must not set immutable config \"output_dir\"");
    CHECK(e.ToString() ==
          "spec.trainer.args[1]: Invalid value: \"output_dir=/x\": must not set immutable config "
          "\"output_dir\"");
  }
  SECTION("invalid with an int value") {
    CHECK(Invalid(NewPath("spec", "trainer", "numNodes"), Int(2), "must be 1").ToString() ==
          "spec.trainer.numNodes: Invalid value: 2: must be 1");
  }
  SECTION("invalid with a string list") {
    CHECK(Invalid(NewPath("a"), StringList({"x", "y"}), "bad").ToString() ==
          "a: Invalid value: []string{\"x\", \"y\"}: bad");
  }
  SECTION("invalid with null") {
    CHECK(Invalid(NewPath("a"), BadValue::Json(json::Value()), "bad").ToString() ==
          "a: Invalid value: null: bad");
  }
  SECTION("forbidden prints no value") {
    CHECK(Forbidden(NewPath("spec", "runtimePatches"), "RuntimePatches can only be modified")
              .ToString() == "spec.runtimePatches: Forbidden: RuntimePatches can only be modified");
  }
  SECTION("required") {
    CHECK(Required(NewPath("spec", "x")).ToString() == "spec.x: Required value");
  }
  SECTION("internal") {
    CHECK(InternalError(NewPath("spec", "runtimePatches"), "boom").ToString() ==
          "spec.runtimePatches: Internal error: boom");
  }
  SECTION("not supported") {
    CHECK(NotSupported(NewPath("k"), String("b"), {"a", "c"}).ToString() ==
          "k: Unsupported value: \"b\": supported values: \"a\", \"c\"");
  }
  SECTION("quoting") { CHECK(GoQuote("a\"b\\c\n") == "\"a\\\"b\\\\c\\n\""); }
}

TEST_CASE("Aggregate", "[field]") {
  CHECK(AggregateMessages({}) == "");
  CHECK(AggregateMessages({"a"}) == "a");
  CHECK(AggregateMessages({"a", "b"}) == "[a, b]");
  CHECK(AggregateMessages({"a", "a"}) == "a");
  CHECK(AggregateMessages({"a", "b", "a"}) == "[a, b]");
  ErrorList errs;
  errs.push_back(Required(NewPath("x")));
  errs.push_back(Forbidden(NewPath("y"), "no"));
  CHECK(Aggregate(errs) == "[x: Required value, y: Forbidden: no]");
}

TEST_CASE("IsDomainPrefixedPath", "[field]") {
  Path p = NewPath("spec", "runtimePatches", "manager");
  CHECK(IsDomainPrefixedPath(p, "trainer.kubeflow.org/kueue").empty());
  REQUIRE(IsDomainPrefixedPath(p, "").size() == 1);
  CHECK(IsDomainPrefixedPath(p, "")[0].ToString() == "spec.runtimePatches.manager: Required value");
  ErrorList no_slash = IsDomainPrefixedPath(p, "kueue");
  REQUIRE(no_slash.size() == 1);
  CHECK(no_slash[0].ToString() ==
        "spec.runtimePatches.manager: Invalid value: \"kueue\": must be a domain-prefixed path "
        "(such as \"acme.io/foo\")");
  ErrorList bad_host = IsDomainPrefixedPath(p, "Acme_io/foo");
  REQUIRE(bad_host.size() == 1);
  CHECK(bad_host[0].detail.find("a lowercase RFC 1123 subdomain must consist of") == 0);
  ErrorList bad_path = IsDomainPrefixedPath(p, "acme.io/fo o");
  REQUIRE(bad_path.size() == 1);
  CHECK(bad_path[0].ToString() ==
        "spec.runtimePatches.manager: Invalid value: \"fo o\": Invalid path (regex used for "
        "validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')");
}

// The matchers stand in for apimachinery's regexes: they must accept exactly what the regexes
// accept. Compared on hand-picked edge cases and on random strings over the characters that
// matter (letters of both cases, digits, '-', '.', '/', punctuation, space, NUL).
TEST_CASE("IsDNS1123Subdomain and IsDomainPrefixedPath match their regexes", "[field]") {
  const std::regex subdomain("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$");
  const std::regex http_path("^[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+$");
  std::vector<std::string> cases = {"",
                                    "a",
                                    "-",
                                    ".",
                                    "a.",
                                    ".a",
                                    "a..b",
                                    "a-b",
                                    "-a",
                                    "a-",
                                    "a.b-c.d",
                                    "A",
                                    "a_b",
                                    "0",
                                    "0.0",
                                    "a.-b",
                                    "a-.b",
                                    "ab--cd",
                                    std::string("a\0b", 3),
                                    "a b",
                                    "x/y",
                                    "%41",
                                    "~",
                                    "a:b"};
  const std::string alphabet = std::string("aZ09-./_~%!$&'()*+,;=: #\"") + '\0';
  std::mt19937 rng(20);
  for (int i = 0; i < 20000; ++i) {
    std::string s(rng() % 7, ' ');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    cases.push_back(s);
  }
  const Path p = NewPath("spec", "runtimePatches", "manager");
  for (const std::string& s : cases) {
    INFO("value \"" << s << "\"");
    CHECK(IsDNS1123Subdomain(s).empty() == std::regex_match(s, subdomain));
    // Host "a.io" is valid, so the only error left is the path's.
    CHECK(IsDomainPrefixedPath(p, "a.io/" + s).empty() ==
          (!s.empty() && std::regex_match(s, http_path)));
  }
}

}  // namespace
}  // namespace trainer::field
