// Tests for common/yaml: scalar typing as sigs.k8s.io/yaml does it, errors with positions,
// anchors/merge keys, hostile input, and the ToYaml -> ParseYaml round trip.
#include "common/yaml/yaml.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>

namespace trainer::yaml {
namespace {

json::Value J(std::string_view text) {
  auto v = json::Parse(text);
  REQUIRE(v.ok());
  return std::move(v).value();
}

json::Value MustParse(std::string_view text) {
  auto v = ParseYaml(text);
  INFO(text);
  REQUIRE(v.status().ToString() == "OK");
  return std::move(v).value();
}

TEST_CASE("yaml scalars are typed like sigs.k8s.io/yaml", "[unit][yaml]") {
  struct Case {
    const char* name;
    const char* yaml;  // value of key `v`
    const char* json;  // expected JSON of that value
  };
  const Case cases[] = {
      {"true", "true", "true"},
      {"True", "True", "true"},
      {"yes is bool in YAML 1.1", "yes", "true"},
      {"on is bool", "On", "true"},
      {"y is bool", "y", "true"},
      {"no is bool", "NO", "false"},
      {"off is bool", "off", "false"},
      {"tRUE is a string", "tRUE", "\"tRUE\""},
      {"null", "null", "null"},
      {"tilde", "~", "null"},
      {"empty value", "", "null"},
      {"int", "42", "42"},
      {"negative int", "-7", "-7"},
      {"plus int", "+7", "7"},
      {"octal", "0755", "493"},
      {"0o octal", "0o17", "15"},
      {"hex", "0x1F", "31"},
      {"binary", "0b101", "5"},
      {"underscores", "1_000", "1000"},
      {"invalid octal is a float", "08", "8"},
      {"int64 min", "-9223372036854775808", "-9223372036854775808"},
      {"uint64 becomes float", "18446744073709551615", "18446744073709551615.0"},
      {"float", "1.5", "1.5"},
      {"leading dot float", ".5", "0.5"},
      {"negative dot float", "-.5", "-0.5"},
      {"exponent integral float is int", "1e3", "1000"},
      {"integral float is int", "2.0", "2"},
      {"small float", "12e-3", "0.012"},
      {"huge float stays float", "1e30", "1e30"},
      {"float overflow is a string", "1e999", "\"1e999\""},
      {"quoted true", "\"true\"", "\"true\""},
      {"single quoted int", "'1'", "\"1\""},
      {"quoted null", "'null'", "\"null\""},
      {"str tag", "!!str 123", "\"123\""},
      {"int tag on quoted", "!!int \"12\"", "12"},
      {"float tag on int", "!!float 3", "3"},
      {"local tag keeps text", "!foo 12", "\"12\""},
      {"binary tag", "!!binary aGVsbG8=", "\"hello\""},
      {"timestamp stays string", "2001-12-14", "\"2001-12-14\""},
      {"version string", "1.2.3", "\"1.2.3\""},
      {"quantity-ish", "500m", "\"500m\""},
      {"0x alone", "0x", "\"0x\""},
      {"dash word", "-foo", "\"-foo\""},
      {"merge outside key is text", "<<", "\"<<\""},
      {"literal block", "|\n  a\n  b\n", "\"a\\nb\\n\""},
      {"folded block", ">-\n  a\n  b\n", "\"a b\""},
      {"flow seq", "[1, a, true]", "[1,\"a\",true]"},
      {"flow map", "{a: 1, b: [x]}", "{\"a\":1,\"b\":[\"x\"]}"},
      {"unicode", "héllo", "\"héllo\""},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      json::Value v = MustParse(std::string("v: ") + c.yaml + "\n");
      CHECK(json::Write(v["v"]) == json::Write(J(c.json)));
      CHECK(v["v"].type() == J(c.json).type());
    }
  }
}

TEST_CASE("yaml keys become strings", "[unit][yaml]") {
  // yes and true both map to "true": that is a duplicate key.
  auto dup = ParseYaml("true: a\nyes: b\n");
  CHECK_FALSE(dup.ok());
  json::Value ok = MustParse("1: a\ntrue: b\n1.5: c\n0x10: e\n\"q\": f\n1e6: g\n");
  CHECK(json::Write(ok) == R"({"1":"a","true":"b","1.5":"c","16":"e","q":"f","1e+06":"g"})");
}

TEST_CASE("yaml keeps key order and nests", "[unit][yaml]") {
  json::Value v = MustParse(R"(
apiVersion: v1
kind: Pod
metadata:
  name: x
  labels: {b: "2", a: "1"}
spec:
  containers:
  - name: c
    image: busybox
    args: ["-c", "echo hi"]
    env:
    - {name: A, value: "1"}
)");
  CHECK(json::Write(v) ==
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","labels":{"b":"2","a":"1"}},)"
        R"("spec":{"containers":[{"name":"c","image":"busybox","args":["-c","echo hi"],)"
        R"("env":[{"name":"A","value":"1"}]}]}})");
}

TEST_CASE("yaml errors carry line and column", "[unit][yaml]") {
  struct Case {
    const char* name;
    const char* yaml;
    const char* want;  // expected message prefix / substring
  };
  const Case cases[] = {
      {"duplicate key", "a: 1\nb: 2\na: 3\n",
       "yaml: line 3, column 1: key \"a\" already set in map"},
      {"nested duplicate key", "x:\n  k: 1\n  k: 2\n",
       "yaml: line 3, column 3: key \"k\" already set in map"},
      {"bad indentation", "a:\n  b: 1\n c: 2\n", "yaml: line 3, column"},
      {"unclosed flow", "a: [1, 2\n", "yaml: line"},
      {"unclosed quote", "\"abc", "yaml: line 1, column 5: illegal EOF in scalar"},
      {"content after a document", "- a\nb: 1\n",
       "yaml: line 2, column 1: did not find expected key"},
      {"stray comma", ",", "yaml: line 1, column 1:"},
      {"tab indentation", "a:\n\tb: 1\n", "yaml: line"},
      {"nan", "a: .nan\n", "yaml: line 1, column 4: unsupported value .nan"},
      {"inf", "a: -.inf\n", "unsupported value -.inf"},
      {"null key", "~: 1\n", "yaml: line 1, column 1: unsupported map key: null"},
      {"map key", "? {a: 1}\n: 1\n", "yaml: line 1, column 3: unsupported map key: a mapping"},
      {"flow seq key", "{[a]: 1}", "yaml: line 1, column 2: unsupported map key"},
      {"empty key", "? \n: 1\n", "yaml: line 2, column 1: unsupported map key: null"},
      {"unclosed flow map", "{a: 1", "yaml: line 1, column 1: end of map flow not found"},
      {"bad int tag", "a: !!int abc\n", "cannot decode !!str `abc` as a !!int"},
      {"bad binary", "a: !!binary '***'\n", "!!binary value contains invalid base64 data"},
      {"unknown alias", "a: *nope\n", "yaml: line 1"},
      {"bad merge", "a: &x 1\nb:\n  <<: *x\n", "map merge requires map or sequence of maps"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      auto v = ParseYaml(c.yaml);
      REQUIRE_FALSE(v.ok());
      CHECK(v.status().code() == StatusCode::kInvalidArgument);
      INFO(v.status().message());
      CHECK(v.status().message().find(c.want) != std::string::npos);
    }
  }
}

TEST_CASE("ParseYamlKeepingLast: the later value wins and each key set again is listed",
          "[unit][yaml]") {
  std::vector<DuplicateKey> dups;
  auto v = ParseYamlKeepingLast("a: 1\nb:\n  k: 1\n  k: [2]\na:\n\n  x: 3\n1: 0\n1: 1\n", &dups);
  REQUIRE(v.ok());
  CHECK(*v == J(R"({"a":{"x":3},"b":{"k":[2]},"1":1})"));
  REQUIRE(dups.size() == 3);
  // The line where the later value starts, as go-yaml v2 reports it; a number key unquoted.
  CHECK(dups[0].line == 4);
  CHECK(dups[0].key == "\"k\"");
  CHECK(dups[1].line == 7);
  CHECK(dups[1].key == "\"a\"");
  CHECK(dups[2].line == 9);
  CHECK(dups[2].key == "1");
  // Without duplicates nothing is listed, and other errors still fail.
  dups.clear();
  CHECK(ParseYamlKeepingLast("a: 1\n", &dups).ok());
  CHECK(dups.empty());
  CHECK_FALSE(ParseYamlKeepingLast("a: [1\n", &dups).ok());
}

TEST_CASE("yaml rejects input go-yaml's reader rejects", "[unit][yaml]") {
  struct Case {
    const char* name;
    std::string yaml;
    const char* want;  // the whole message
  };
  const Case cases[] = {
      {"lone 0xff", "\xff", "yaml: line 1, column 1: invalid leading UTF-8 octet"},
      {"continuation byte first", "a: \x80\n",
       "yaml: line 1, column 4: invalid leading UTF-8 octet"},
      {"bad trailing octet", "a: 1\nb: \xC3(\n",
       "yaml: line 2, column 4: invalid trailing UTF-8 octet"},
      {"truncated sequence", "a: \xE2\x82",
       "yaml: line 1, column 4: incomplete UTF-8 octet sequence"},
      {"overlong slash", "a: \xC0\xAF\n",
       "yaml: line 1, column 4: invalid length of a UTF-8 sequence"},
      {"surrogate", "a: \xED\xA0\x80\n", "yaml: line 1, column 4: invalid Unicode character"},
      {"above U+10FFFF", "a: \xF4\x90\x80\x80\n",
       "yaml: line 1, column 4: invalid Unicode character"},
      {"in a comment", "# \xff\na: 1\n", "yaml: line 1, column 3: invalid leading UTF-8 octet"},
      {"in a key", "\xfe: 1\n", "yaml: line 1, column 1: invalid leading UTF-8 octet"},
      {"NUL", std::string("a: b\0", 5),
       "yaml: line 1, column 5: control characters are not allowed"},
      {"escape byte", "a: \x1b[0m\n", "yaml: line 1, column 4: control characters are not allowed"},
      {"U+FFFF", "a: \xEF\xBF\xBF\n", "yaml: line 1, column 4: control characters are not allowed"},
      {"columns count characters", "\xC3\xA9\xC3\xA9: \xff",
       "yaml: line 1, column 5: invalid leading UTF-8 octet"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      auto v = ParseYaml(c.yaml);
      REQUIRE_FALSE(v.ok());
      CHECK(v.status().code() == StatusCode::kInvalidArgument);
      CHECK(v.status().message() == c.want);
      CHECK_FALSE(ParseYamlDocuments(c.yaml).ok());
    }
  }
  SECTION("valid multi-byte text, a byte order mark, tabs and CRLF still parse") {
    CHECK(MustParse(
              "\xEF\xBB\xBFname: caf\xC3\xA9\r\nemoji: \"\xF0\x9F\x98\x80\"\r\nt: \"a\tb\"\n") ==
          J("{\"name\":\"caf\xC3\xA9\",\"emoji\":\"\xF0\x9F\x98\x80\",\"t\":\"a\\tb\"}"));
    CHECK(MustParse("a: \"\\uFFFF\"\n") == J("{\"a\":\"\xEF\xBF\xBF\"}"));
  }
  SECTION("the escapes \\N and \\_ are U+0085 and U+00A0, as go-yaml reads them") {
    // yaml-cpp alone gives the single bytes 0x85 and 0xA0 (not UTF-8); found by the fuzzer.
    CHECK(MustParse("a: \"\\N\\_\xC3\xA9\\N\"\n") == J("{\"a\":\"\\u0085\\u00a0\\u00e9\\u0085\"}"));
    CHECK(MustParse("\"\\_\": \"\\u0085x\"\n") == J("{\"\\u00a0\":\"\\u0085x\"}"));
  }
  SECTION("ToYaml escapes U+FFFE and U+FFFF, which ParseYaml would reject raw") {
    json::Value v = J("{\"a\":\"x\xEF\xBF\xBEy\xEF\xBF\xBF\"}");
    std::string text = ToYaml(v);
    CHECK(text == "a: \"x\\uFFFEy\\uFFFF\"\n");
    CHECK(MustParse(text) == v);
  }
}

TEST_CASE("yaml multi-document streams", "[unit][yaml]") {
  auto docs =
      ParseYamlDocuments("---\na: 1\n---\n# only a comment\n---\n- x\n...\n---\nnull\n---\nb: 2\n");
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 3);
  CHECK(json::Write((*docs)[0]) == R"({"a":1})");
  CHECK(json::Write((*docs)[1]) == R"(["x"])");
  CHECK(json::Write((*docs)[2]) == R"({"b":2})");

  auto one = ParseYaml("a: 1\n---\nb: 2\n");
  REQUIRE_FALSE(one.ok());
  CHECK(one.status().message() == "yaml: expected a single document, found 2");

  CHECK(MustParse("").IsNull());
  CHECK(MustParse("# nothing\n").IsNull());
  CHECK(MustParse("---\n").IsNull());
  auto empty = ParseYamlDocuments("");
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  // Anchors do not leak between documents.
  CHECK_FALSE(ParseYamlDocuments("a: &x 1\n---\nb: *x\n").ok());
}

TEST_CASE("yaml anchors, aliases and merge keys", "[unit][yaml]") {
  json::Value v = MustParse(R"(
base: &base
  image: busybox
  env: &env [{name: A, value: "1"}]
first:
  <<: *base
  name: one
second:
  name: two
  image: override
  <<: *base
third:
  <<: [{a: 1, b: 1}, {b: 2, c: 2}]
  c: 3
envs: *env
key: &k kk
*k : aliased-key
)");
  CHECK(json::Write(v["first"]) ==
        R"({"image":"busybox","env":[{"name":"A","value":"1"}],"name":"one"})");
  CHECK(json::Write(v["second"]) ==
        R"({"name":"two","image":"override","env":[{"name":"A","value":"1"}]})");
  CHECK(json::Write(v["third"]) == R"({"a":1,"b":1,"c":3})");
  CHECK(json::Write(v["envs"]) == R"([{"name":"A","value":"1"}])");
  CHECK(json::Write(v["kk"]) == R"("aliased-key")");
  // An explicit key after the merged one replaces it in place; two explicit keys still clash.
  CHECK_FALSE(ParseYaml("m:\n  <<: {a: 1}\n  a: 2\n  a: 3\n").ok());
}

TEST_CASE("yaml hostile inputs fail cleanly", "[unit][yaml]") {
  SECTION("deep flow nesting") {
    std::string deep(200000, '[');
    auto v = ParseYaml(deep);
    REQUIRE_FALSE(v.ok());
    CHECK(v.status().message().find("exceeded max depth of") != std::string::npos);
  }
  SECTION("nesting within the bound parses") {
    auto v = ParseYaml(std::string(400, '[') + std::string(400, ']'));
    REQUIRE(v.ok());
    const json::Value* cur = &*v;
    int depth = 0;
    while (cur->IsArray() && !cur->empty()) {
      cur = &cur->at(0);
      ++depth;
    }
    CHECK(depth == 399);
  }
  SECTION("deep block nesting over the bound") {
    std::string text;
    for (int i = 0; i < 12000; ++i) text += std::string(static_cast<size_t>(i), ' ') + "a:\n";
    auto v = ParseYaml(text);
    CHECK_FALSE(v.ok());
  }
  SECTION("billion laughs") {
    std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (int i = 1; i < 10; ++i) {
      text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
      for (int k = 0; k < 10; ++k)
        text += std::string(k ? ", " : "") + "*a" + std::to_string(i - 1);
      text += "]\n";
    }
    auto v = ParseYaml(text);
    REQUIRE_FALSE(v.ok());
    CHECK(v.status().message().find("excessive aliasing") != std::string::npos);
  }
  SECTION("recursive alias") {
    auto v = ParseYaml("a: &x [*x]\n");
    CHECK_FALSE(v.ok());
  }
  SECTION("random bytes never crash") {
    std::mt19937 rng(42);
    const std::string alphabet = "ab:- \n\t[]{},&*!|>'\"#%@`?<~0.\\\x01\xff";
    for (int iter = 0; iter < 3000; ++iter) {
      std::string s;
      size_t n = rng() % 60;
      for (size_t i = 0; i < n; ++i) s.push_back(alphabet[rng() % alphabet.size()]);
      auto docs = ParseYamlDocuments(s);
      if (docs.ok()) {
        for (const auto& d : *docs) {
          auto again = ParseYaml(ToYaml(d));
          INFO(s);
          REQUIRE(again.ok());
          CHECK(*again == d);
        }
      }
    }
  }
}

TEST_CASE("ToYaml output shape", "[unit][yaml]") {
  json::Value v = J(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","labels":{}},
      "data":{"script":"set -e\necho hi\n","flag":"true","num":"1","empty":"","nul":"null",
      "colon":"a: b","list":[]},"items":[{"name":"a","ports":[{"containerPort":80}]},["n",1],{}],
      "f":0.5,"b":false,"n":null})");
  CHECK(ToYaml(v) == R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: x
  labels: {}
data:
  script: |
    set -e
    echo hi
  flag: "true"
  num: "1"
  empty: ""
  nul: "null"
  colon: "a: b"
  list: []
items:
- name: a
  ports:
  - containerPort: 80
- - "n"
  - 1
- {}
f: 0.5
b: false
"n": null
)");
  CHECK(ToYaml(J("{}")) == "{}\n");
  CHECK(ToYaml(J("[]")) == "[]\n");
  CHECK(ToYaml(J("\"yes\"")) == "\"yes\"\n");
  CHECK(ToYaml(J("1e21")) == "1e+21\n");
  CHECK(ToYaml(J("[\"no trailing\\nnewline\"]")) == "- |-\n  no trailing\n  newline\n");
  CHECK(ToYaml(J("{\"k\":\"  indented\\nx\\n\\n\"}")) == "k: |2+\n    indented\n  x\n\n");
  // Keys past YAML's 1024-character implicit-key limit use the explicit form.
  std::string long_key(1500, 'k');
  json::Value doc = json::Value::Object();
  doc.Set(long_key, json::Value(1));
  CHECK(ToYaml(doc) == "? " + long_key + "\n: 1\n");
  json::Value list = json::Value::Array();
  list.PushBack(doc.Clone());
  CHECK(ToYaml(list) == "- ? " + long_key + "\n  : 1\n");
  CHECK(ParseYaml(ToYaml(list)).value() == list);
}

TEST_CASE("ToYaml quotes strings that would read back differently", "[unit][yaml]") {
  const char* strings[] = {
      "true",     "True",       "yes",        "no",     "on",       "off",          "y",
      "N",        "null",       "~",          "",       "1",        "-1",           "0755",
      "0x10",     "1e3",        ".5",         "1.5",    ".inf",     "-.inf",        ".nan",
      "<<",       "a: b",       "a #b",       "a:",     ":a",       "- a",          "-",
      "? a",      "[a]",        "{a}",        "*a",     "&a",       "!a",           "|",
      ">",        "'a'",        "\"a\"",      "%a",     "@a",       "`a",           "#a",
      " a",       "a ",         "a\tb",       "a\rb",   "---",      "...",          "--- a",
      "12:30",    "2001-12-14", "1_000",      "a\\b",   "\x01",     "\x7f",         "line\nbreak",
      "\n",       "\n\n",       " \n",        "a\n ",   "\xc2\x85", "\xe2\x80\xa8", "\xef\xbb\xbfx",
      "x,y",      "a[0]",       "k=v",        "-Xmx1g", "500m",     "héllo",        "\ttab",
      "a\n\tb\n", "\n  lead",   "trail  \nx",
  };
  for (const char* s : strings) {
    json::Value doc = json::Value::Object();
    doc.Set(s, json::Value(s));
    json::Value arr = json::Value::Array();
    arr.PushBack(json::Value(s));
    doc.Set("list", std::move(arr));
    std::string text = ToYaml(doc);
    INFO("string: [" << s << "]\n" << text);
    auto back = ParseYaml(text);
    REQUIRE(back.ok());
    CHECK(*back == doc);
    CHECK(ParseYaml(ToYaml(json::Value(s))).value() == json::Value(s));
  }
}

json::Value RandomValue(std::mt19937& rng, int depth) {
  static const char* kWords[] = {
      "a",      "true",          "1",    "",  "x y", "a: b", "#",   "-",    "null",
      "\n",     "multi\nline\n", "  sp", "é", "0x1", "1.5",  "key", "-- x", "tab\there",
      "\"q\"",  "'s'",           "{",    "]", "*",   "&",    "!",   "%",    "\tlead\ntab\n",
      "a\n\tb", "- x\ny: z\n"};
  int pick = static_cast<int>(rng() % (depth > 4 ? 6 : 8));
  switch (pick) {
    case 0:
      return json::Value();
    case 1:
      return json::Value(rng() % 2 == 0);
    case 2:
      return json::Value(static_cast<int64_t>(rng()) - (int64_t{1} << 31));
    case 3:
      return json::Value(static_cast<double>(static_cast<int>(rng() % 20000) - 10000) / 64.0);
    case 4:
    case 5:
      return json::Value(kWords[rng() % std::size(kWords)]);
    case 6: {
      json::Value a = json::Value::Array();
      size_t n = rng() % 4;
      for (size_t i = 0; i < n; ++i) a.PushBack(RandomValue(rng, depth + 1));
      return a;
    }
    default: {
      json::Value o = json::Value::Object();
      size_t n = rng() % 4;
      for (size_t i = 0; i < n; ++i) {
        std::string key = std::string(kWords[rng() % std::size(kWords)]) + std::to_string(i);
        if (rng() % 50 == 0) key += std::string(1100, 'k');  // beyond YAML's implicit-key limit
        o.Set(key, RandomValue(rng, depth + 1));
      }
      return o;
    }
  }
}

TEST_CASE("ParseYaml(ToYaml(v)) == v for random documents", "[unit][yaml]") {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 2000; ++iter) {
    json::Value v = RandomValue(rng, 0);
    std::string text = ToYaml(v);
    INFO(json::Write(v) << "\n---\n" << text);
    auto back = ParseYaml(text);
    REQUIRE(back.ok());
    REQUIRE(*back == v);
    // Emitting is stable.
    CHECK(ToYaml(*back) == text);
  }
}

TEST_CASE("ParseYaml agrees with json::Parse on JSON input", "[unit][yaml]") {
  const char* docs[] = {
      R"({"a":[1,2,{"b":null}],"c":"d","e":1.25,"f":true})",
      R"([])",
      R"({"nested":{"deep":{"x":-3}}})",
  };
  for (const char* d : docs) {
    CHECK(MustParse(d) == J(d));
  }
}

}  // namespace
}  // namespace trainer::yaml
