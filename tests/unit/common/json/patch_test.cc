// Tests for common/json/patch: RFC 6902 apply (the RFC's appendix cases) and create (round trip
// on random documents), RFC 7386 merge patch (the RFC's appendix table), and Kubernetes strategic
// merge on pod and JobSet templates.
#include "common/json/patch.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>

namespace trainer::json {
namespace {

Value J(std::string_view text) {
  auto v = Parse(text);
  INFO(text);
  REQUIRE(v.ok());
  return std::move(v).value();
}

TEST_CASE("ApplyJsonPatch follows RFC 6902", "[unit][patch]") {
  struct Case {
    const char* name;
    const char* doc;
    const char* ops;
    const char* want;  // nullptr: error expected
  };
  const Case cases[] = {
      {"A.1 add object member", R"({"foo":"bar"})", R"([{"op":"add","path":"/baz","value":"qux"}])",
       R"({"foo":"bar","baz":"qux"})"},
      {"A.2 add array element", R"({"foo":["bar","baz"]})",
       R"([{"op":"add","path":"/foo/1","value":"qux"}])", R"({"foo":["bar","qux","baz"]})"},
      {"A.3 remove member", R"({"baz":"qux","foo":"bar"})", R"([{"op":"remove","path":"/baz"}])",
       R"({"foo":"bar"})"},
      {"A.4 remove element", R"({"foo":["bar","qux","baz"]})",
       R"([{"op":"remove","path":"/foo/1"}])", R"({"foo":["bar","baz"]})"},
      {"A.5 replace", R"({"baz":"qux","foo":"bar"})",
       R"([{"op":"replace","path":"/baz","value":"boo"}])", R"({"baz":"boo","foo":"bar"})"},
      {"A.6 move member", R"({"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}})",
       R"([{"op":"move","from":"/foo/waldo","path":"/qux/thud"}])",
       R"({"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}})"},
      {"A.7 move element", R"({"foo":["all","grass","cows","eat"]})",
       R"([{"op":"move","from":"/foo/1","path":"/foo/3"}])",
       R"({"foo":["all","cows","eat","grass"]})"},
      {"A.8 test success", R"({"baz":"qux","foo":["a",2,"c"]})",
       R"([{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}])",
       R"({"baz":"qux","foo":["a",2,"c"]})"},
      {"A.9 test failure", R"({"baz":"qux"})", R"([{"op":"test","path":"/baz","value":"bar"}])",
       nullptr},
      {"A.10 add nested member", R"({"foo":"bar"})",
       R"([{"op":"add","path":"/child","value":{"grandchild":{}}}])",
       R"({"foo":"bar","child":{"grandchild":{}}})"},
      {"A.11 ignore unknown members", R"({"foo":"bar"})",
       R"([{"op":"add","path":"/baz","value":"qux","xyz":123}])", R"({"foo":"bar","baz":"qux"})"},
      {"A.12 add to nonexistent target", R"({"foo":"bar"})",
       R"([{"op":"add","path":"/baz/bat","value":"qux"}])", nullptr},
      {"A.14 escape ordering", R"({"/":9,"~1":10})", R"([{"op":"test","path":"/~01","value":10}])",
       R"({"/":9,"~1":10})"},
      {"A.15 comparing strings and numbers", R"({"/":9,"~1":10})",
       R"([{"op":"test","path":"/~01","value":"10"}])", nullptr},
      {"A.16 add array value", R"({"foo":["bar"]})",
       R"([{"op":"add","path":"/foo/-","value":["abc","def"]}])",
       R"({"foo":["bar",["abc","def"]]})"},
      {"replace root", R"({"a":1})", R"([{"op":"replace","path":"","value":[1]}])", "[1]"},
      {"add root", R"({"a":1})", R"([{"op":"add","path":"","value":{"b":2}}])", R"({"b":2})"},
      {"escaped slash", R"({"a/b":1})", R"([{"op":"replace","path":"/a~1b","value":2}])",
       R"({"a/b":2})"},
      {"copy", R"({"a":{"x":1}})", R"([{"op":"copy","from":"/a","path":"/b"}])",
       R"({"a":{"x":1},"b":{"x":1}})"},
      {"add at end index", R"([1,2])", R"([{"op":"add","path":"/2","value":3}])", "[1,2,3]"},
      {"add past end", R"([1,2])", R"([{"op":"add","path":"/3","value":3}])", nullptr},
      {"leading zero index", R"([1,2])", R"([{"op":"remove","path":"/01"}])", nullptr},
      {"dash outside add", R"([1,2])", R"([{"op":"remove","path":"/-"}])", nullptr},
      {"negative index", R"([1,2])", R"([{"op":"remove","path":"/-1"}])", nullptr},
      {"replace missing", R"({})", R"([{"op":"replace","path":"/a","value":1}])", nullptr},
      {"remove missing", R"({})", R"([{"op":"remove","path":"/a"}])", nullptr},
      {"move into own child", R"({"a":{"b":1}})", R"([{"op":"move","from":"/a","path":"/a/c"}])",
       nullptr},
      {"move to itself", R"({"a":1})", R"([{"op":"move","from":"/a","path":"/a"}])", R"({"a":1})"},
      {"bad pointer", R"({})", R"([{"op":"add","path":"a","value":1}])", nullptr},
      {"bad escape", R"({})", R"([{"op":"add","path":"/~2","value":1}])", nullptr},
      {"unknown op", R"({})", R"([{"op":"frob","path":"/a"}])", nullptr},
      {"missing value", R"({})", R"([{"op":"add","path":"/a"}])", nullptr},
      {"missing from", R"({})", R"([{"op":"copy","path":"/a"}])", nullptr},
      {"not an array", R"({})", R"({"op":"add","path":"/a","value":1})", nullptr},
      {"op not an object", R"({})", R"([1])", nullptr},
      {"index into scalar", R"({"a":1})", R"([{"op":"add","path":"/a/b","value":1}])", nullptr},
      {"test numbers by value", R"({"a":1})", R"([{"op":"test","path":"/a","value":1.0}])",
       R"({"a":1})"},
      {"remove root", R"({"a":1})", R"([{"op":"remove","path":""}])", nullptr},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      Value doc = J(c.doc);
      Status s = ApplyJsonPatch(doc, J(c.ops));
      if (c.want == nullptr) {
        CHECK_FALSE(s.ok());
        CHECK(doc == J(c.doc));  // atomic: unchanged on error
      } else {
        INFO(s.ToString());
        REQUIRE(s.ok());
        CHECK(Write(doc) == Write(J(c.want)));
      }
    }
  }
}

TEST_CASE("ApplyJsonPatch is atomic and names the failing operation", "[unit][patch]") {
  Value doc = J(R"({"a":1})");
  Status s =
      ApplyJsonPatch(doc, J(R"([{"op":"add","path":"/b","value":2},{"op":"remove","path":"/c"}])"));
  REQUIRE_FALSE(s.ok());
  CHECK(s.message() == "json patch operation 1 (remove /c): path not found");
  CHECK(Write(doc) == R"({"a":1})");
}

TEST_CASE("CreateJsonPatch emits minimal ops", "[unit][patch]") {
  struct Case {
    const char* name;
    const char* from;
    const char* to;
    const char* want;
  };
  const Case cases[] = {
      {"equal", R"({"a":[1,{"b":2}]})", R"({"a":[1,{"b":2}]})", "[]"},
      {"numbers by value", R"({"a":1})", R"({"a":1.0})", "[]"},
      {"add key", R"({"a":1})", R"({"a":1,"b":{"c":2}})",
       R"([{"op":"add","path":"/b","value":{"c":2}}])"},
      {"remove key", R"({"a":1,"b":2})", R"({"a":1})", R"([{"op":"remove","path":"/b"}])"},
      {"replace scalar", R"({"a":1})", R"({"a":"1"})",
       R"([{"op":"replace","path":"/a","value":"1"}])"},
      {"escape keys", R"({})", R"({"a/b~c":1})", R"([{"op":"add","path":"/a~1b~0c","value":1}])"},
      {"array append", R"([1])", R"([1,2,3])",
       R"([{"op":"add","path":"/1","value":2},{"op":"add","path":"/2","value":3}])"},
      {"array truncate from the end", R"([1,2,3])", R"([1])",
       R"([{"op":"remove","path":"/2"},{"op":"remove","path":"/1"}])"},
      {"array element edit", R"([{"n":"a","v":1}])", R"([{"n":"a","v":2}])",
       R"([{"op":"replace","path":"/0/v","value":2}])"},
      {"root type change", R"({"a":1})", R"([1])", R"([{"op":"replace","path":"","value":[1]}])"},
      {"empty key", R"({"":1})", R"({"":2})", R"([{"op":"replace","path":"/","value":2}])"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      auto ops = CreateJsonPatch(J(c.from), J(c.to));
      REQUIRE(ops.ok());
      CHECK(Write(*ops) == Write(J(c.want)));
      Value doc = J(c.from);
      REQUIRE(ApplyJsonPatch(doc, *ops).ok());
      CHECK(doc == J(c.to));
    }
  }
}

Value RandomValue(std::mt19937& rng, int depth) {
  static const char* kKeys[] = {"a", "b", "c", "a/b", "~", "~1", "", "-", "0", "spec"};
  int pick = static_cast<int>(rng() % (depth > 3 ? 5 : 7));
  switch (pick) {
    case 0:
      return Value();
    case 1:
      return Value(rng() % 2 == 0);
    case 2:
      return Value(static_cast<int64_t>(rng() % 5));
    case 3:
      return Value(std::string(kKeys[rng() % std::size(kKeys)]));
    case 4:
      return Value(0.5 * static_cast<double>(rng() % 4));
    case 5: {
      Value a = Value::Array();
      for (size_t i = 0, n = rng() % 5; i < n; ++i) a.PushBack(RandomValue(rng, depth + 1));
      return a;
    }
    default: {
      Value o = Value::Object();
      for (size_t i = 0, n = rng() % 5; i < n; ++i) {
        o.Set(kKeys[rng() % std::size(kKeys)], RandomValue(rng, depth + 1));
      }
      return o;
    }
  }
}

// Nudges a document: the `to` side of a diff shares most of its structure with `from`.
void Mutate(std::mt19937& rng, Value& v, int depth) {
  if (v.IsObject() && !v.empty() && rng() % 3 != 0) {
    Member& m = v.members()[rng() % v.size()];
    switch (rng() % 3) {
      case 0:
        Mutate(rng, m.second, depth + 1);
        return;
      case 1:
        v.Erase(std::string(m.first));
        return;
      default:
        v.Set("new" + std::to_string(rng() % 3), RandomValue(rng, depth + 1));
        return;
    }
  }
  if (v.IsArray() && !v.empty() && rng() % 3 != 0) {
    switch (rng() % 3) {
      case 0:
        Mutate(rng, v.at(rng() % v.size()), depth + 1);
        return;
      case 1:
        v.elements().pop_back();
        return;
      default:
        v.PushBack(RandomValue(rng, depth + 1));
        return;
    }
  }
  v = RandomValue(rng, depth);
}

TEST_CASE("ApplyJsonPatch(from, CreateJsonPatch(from, to)) == to", "[unit][patch]") {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 3000; ++iter) {
    Value from = RandomValue(rng, 0);
    Value to = from.Clone();
    for (int k = 0, n = static_cast<int>(rng() % 4); k <= n; ++k) Mutate(rng, to, 0);
    if (iter % 5 == 0) to = RandomValue(rng, 0);  // unrelated documents too
    auto ops = CreateJsonPatch(from, to);
    REQUIRE(ops.ok());
    Value doc = from.Clone();
    Status s = ApplyJsonPatch(doc, *ops);
    INFO(Write(from) << " -> " << Write(to) << "\nops: " << Write(*ops));
    REQUIRE(s.ok());
    REQUIRE(doc == to);
    // The ops survive a JSON round trip (what the apiserver receives).
    auto reparsed = Parse(Write(*ops));
    REQUIRE(reparsed.ok());
    Value doc2 = from.Clone();
    REQUIRE(ApplyJsonPatch(doc2, *reparsed).ok());
    REQUIRE(doc2 == to);
  }
}

TEST_CASE("CreateJsonPatchAt equals CreateJsonPatch when only that member differs",
          "[unit][patch]") {
  std::mt19937 rng(12);
  for (int iter = 0; iter < 2000; ++iter) {
    Value doc = J(R"({"metadata":{"name":"a/b~c"},"spec":{"x":1}})");
    Value member = RandomValue(rng, 1);
    bool present = iter % 3 != 0;
    if (present) doc["spec"].Set("a/b~c", member.Clone());
    Value to = RandomValue(rng, 1);
    if (iter % 4 == 0 && present) {
      to = member.Clone();
      Mutate(rng, to, 1);
    }
    Value modified = doc.Clone();
    modified["spec"].Set("a/b~c", to.Clone());
    auto whole = CreateJsonPatch(doc, modified);
    auto part = CreateJsonPatchAt("/spec/a~1b~0c", present ? &member : nullptr, to);
    REQUIRE(whole.ok());
    REQUIRE(part.ok());
    INFO(Write(doc) << " -> " << Write(modified));
    CHECK(Write(*part) == Write(*whole));
  }
}

TEST_CASE("MergePatch follows RFC 7386 appendix A", "[unit][patch]") {
  const char* cases[][3] = {
      {R"({"a":"b"})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"b"})", R"({"b":"c"})", R"({"a":"b","b":"c"})"},
      {R"({"a":"b"})", R"({"a":null})", R"({})"},
      {R"({"a":"b","b":"c"})", R"({"a":null})", R"({"b":"c"})"},
      {R"({"a":["b"]})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"c"})", R"({"a":["b"]})", R"({"a":["b"]})"},
      {R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})", R"({"a":{"b":"d"}})"},
      {R"({"a":[{"b":"c"}]})", R"({"a":[1]})", R"({"a":[1]})"},
      {R"(["a","b"])", R"(["c","d"])", R"(["c","d"])"},
      {R"({"a":"b"})", R"(["c"])", R"(["c"])"},
      {R"({"a":"foo"})", "null", "null"},
      {R"({"a":"foo"})", R"("bar")", R"("bar")"},
      {R"({"e":null})", R"({"a":1})", R"({"e":null,"a":1})"},
      {R"([1,2])", R"({"a":"b","c":null})", R"({"a":"b"})"},
      {R"({})", R"({"a":{"bb":{"ccc":null}}})", R"({"a":{"bb":{}}})"},
  };
  for (const auto& c : cases) {
    Value target = J(c[0]);
    INFO(c[0] << " + " << c[1]);
    REQUIRE(MergePatch(target, J(c[1])).ok());
    CHECK(Write(target) == Write(J(c[2])));
  }
}

TEST_CASE("StrategicMerge on pod and JobSet templates", "[unit][patch]") {
  struct Case {
    const char* name;
    const char* target;
    const char* patch;
    const char* want;  // nullptr: error expected
  };
  const Case cases[] = {
      {"maps merge, scalars replace", R"({"metadata":{"labels":{"a":"1"}},"spec":{"x":1}})",
       R"({"metadata":{"labels":{"b":"2"}},"spec":{"x":2}})",
       R"({"metadata":{"labels":{"a":"1","b":"2"}},"spec":{"x":2}})"},
      {"null deletes", R"({"a":1,"b":{"c":1,"d":2}})", R"({"a":null,"b":{"c":null}})",
       R"({"b":{"d":2}})"},
      // Order as apimachinery's normalizeElementOrder: patch items in patch order, the target's
      // other items keep their order and go first only ahead of later target items.
      {"containers merge by name in upstream order",
       R"({"containers":[{"name":"a","image":"x"},{"name":"b","image":"y"}]})",
       R"({"containers":[{"name":"c","image":"z"},{"name":"a","image":"x2"}]})",
       R"({"containers":[{"name":"c","image":"z"},{"name":"a","image":"x2"},{"name":"b","image":"y"}]})"},
      {"a new item goes before the target's untouched items",
       R"({"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]})",
       R"({"env":[{"name":"C","value":"3"}]})",
       R"({"env":[{"name":"C","value":"3"},{"name":"A","value":"1"},{"name":"B","value":"2"}]})"},
      {"a changed item keeps its place", R"({"env":[{"name":"A"},{"name":"B"},{"name":"C"}]})",
       R"({"env":[{"name":"B","value":"x"}]})",
       R"({"env":[{"name":"A"},{"name":"B","value":"x"},{"name":"C"}]})"},
      {"patch order wins over target order", R"({"env":[{"name":"A"},{"name":"B"},{"name":"C"}]})",
       R"({"env":[{"name":"C","value":"c"},{"name":"A","value":"a"}]})",
       R"({"env":[{"name":"B"},{"name":"C","value":"c"},{"name":"A","value":"a"}]})"},
      {"changed then new items", R"({"env":[{"name":"A"},{"name":"B"}]})",
       R"({"env":[{"name":"B","value":"b"},{"name":"N"}]})",
       R"({"env":[{"name":"A"},{"name":"B","value":"b"},{"name":"N"}]})"},
      {"into an empty list", R"({"env":[]})", R"({"env":[{"name":"A"},{"name":"B"}]})",
       R"({"env":[{"name":"A"},{"name":"B"}]})"},
      {"delete and add in one patch", R"({"volumes":[{"name":"a"},{"name":"b"},{"name":"c"}]})",
       R"({"volumes":[{"name":"b","$patch":"delete"},{"name":"d","emptyDir":{}}]})",
       R"({"volumes":[{"name":"d","emptyDir":{}},{"name":"a"},{"name":"c"}]})"},
      {"topologySpreadConstraints merge by topologyKey",
       R"({"topologySpreadConstraints":[{"topologyKey":"zone","maxSkew":1}]})",
       R"({"topologySpreadConstraints":[{"topologyKey":"zone","maxSkew":2}]})",
       R"({"topologySpreadConstraints":[{"topologyKey":"zone","maxSkew":2}]})"},
      {"env merges by name, nested in containers",
       R"({"containers":[{"name":"node","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]}]})",
       R"({"containers":[{"name":"node","env":[{"name":"B","value":"3"},{"name":"C","value":"4"}]}]})",
       R"({"containers":[{"name":"node","env":[{"name":"A","value":"1"},{"name":"B","value":"3"},{"name":"C","value":"4"}]}]})"},
      {"env valueFrom replaces value via null", R"({"env":[{"name":"A","value":"1"}]})",
       R"({"env":[{"name":"A","value":null,"valueFrom":{"fieldRef":{"fieldPath":"x"}}}]})",
       R"({"env":[{"name":"A","valueFrom":{"fieldRef":{"fieldPath":"x"}}}]})"},
      {"volumeMounts merge by mountPath", R"({"volumeMounts":[{"name":"a","mountPath":"/a"}]})",
       R"({"volumeMounts":[{"name":"b","mountPath":"/a"},{"name":"c","mountPath":"/c"}]})",
       R"({"volumeMounts":[{"name":"b","mountPath":"/a"},{"name":"c","mountPath":"/c"}]})"},
      {"ports merge by containerPort and protocol",
       R"({"ports":[{"containerPort":53,"name":"dns"},{"containerPort":80}]})",
       R"({"ports":[{"containerPort":53,"protocol":"UDP","name":"dns-udp"},{"containerPort":53,"protocol":"TCP","name":"dns-tcp"}]})",
       R"({"ports":[{"containerPort":53,"protocol":"UDP","name":"dns-udp"},{"containerPort":53,"name":"dns-tcp","protocol":"TCP"},{"containerPort":80}]})"},
      {"hostAliases merge by ip", R"({"hostAliases":[{"ip":"1.1.1.1","hostnames":["a"]}]})",
       R"({"hostAliases":[{"ip":"1.1.1.1","hostnames":["b"]}]})",
       R"({"hostAliases":[{"ip":"1.1.1.1","hostnames":["b"]}]})"},
      {"replicatedJobs merge by name",
       R"({"replicatedJobs":[{"name":"node","replicas":1,"template":{"spec":{"parallelism":1}}},{"name":"init","replicas":1}]})",
       R"({"replicatedJobs":[{"name":"node","template":{"spec":{"parallelism":4}}}]})",
       R"({"replicatedJobs":[{"name":"node","replicas":1,"template":{"spec":{"parallelism":4}}},{"name":"init","replicas":1}]})"},
      {"other lists are replaced",
       R"({"tolerations":[{"key":"a"}],"args":["x","y"],"command":["sh"]})",
       R"({"tolerations":[{"key":"b"}],"args":["z"]})",
       R"({"tolerations":[{"key":"b"}],"args":["z"],"command":["sh"]})"},
      {"new keys are added without nulls or directives", R"({})",
       R"({"nodeSelector":{"a":"1","b":null},"volumes":[{"name":"v","emptyDir":{}},{"name":"w","$patch":"delete"}]})",
       R"({"nodeSelector":{"a":"1"},"volumes":[{"name":"v","emptyDir":{}}]})"},
      {"$patch: delete removes a list item", R"({"containers":[{"name":"a"},{"name":"b"}]})",
       R"({"containers":[{"name":"a","$patch":"delete"}]})", R"({"containers":[{"name":"b"}]})"},
      {"$patch: replace on a list", R"({"volumes":[{"name":"a"},{"name":"b"}]})",
       R"({"volumes":[{"name":"c"},{"$patch":"replace"}]})", R"({"volumes":[{"name":"c"}]})"},
      {"$patch: replace on a map", R"({"nodeSelector":{"a":"1","b":"2"}})",
       R"({"nodeSelector":{"$patch":"replace","c":"3"}})", R"({"nodeSelector":{"c":"3"}})"},
      {"$patch: delete on a map empties it (upstream returns an empty map)",
       R"({"affinity":{"nodeAffinity":{}},"x":1})", R"({"affinity":{"$patch":"delete"}})",
       R"({"affinity":{},"x":1})"},
      {"$patch: merge on a map is an error, as upstream", R"({"a":{}})",
       R"({"a":{"$patch":"merge"}})", nullptr},
      {"$patch: merge in a list is an error", R"({"env":[]})",
       R"({"env":[{"name":"A","$patch":"merge"}]})", nullptr},
      {"$retainKeys must list every key the patch sets",
       R"({"volumes":[{"name":"v","emptyDir":{}}]})",
       R"({"volumes":[{"name":"v","hostPath":{"path":"/y"},"$retainKeys":["name"]}]})", nullptr},
      {"non-object items in a keyed list are an error", R"({"env":[{"name":"A"}]})",
       R"({"env":["A"]})", nullptr},
      {"$retainKeys keeps only listed keys",
       R"({"volumes":[{"name":"v","emptyDir":{},"hostPath":{"path":"/x"}}]})",
       R"({"volumes":[{"name":"v","hostPath":{"path":"/y"},"$retainKeys":["name","hostPath"]}]})",
       R"({"volumes":[{"name":"v","hostPath":{"path":"/y"}}]})"},
      {"$setElementOrder is ignored", R"({"containers":[{"name":"a"},{"name":"b"}]})",
       R"({"$setElementOrder/containers":[{"name":"b"},{"name":"a"}],"containers":[{"name":"b","image":"i"}]})",
       R"({"containers":[{"name":"a"},{"name":"b","image":"i"}]})"},
      {"$deleteFromPrimitiveList", R"({"finalizers":["a","b","c"]})",
       R"({"$deleteFromPrimitiveList/finalizers":["b"]})", R"({"finalizers":["a","c"]})"},
      {"merge key missing is an error", R"({"containers":[{"name":"a"}]})",
       R"({"containers":[{"image":"x"}]})", nullptr},
      {"unknown $patch is an error", R"({"a":{}})", R"({"a":{"$patch":"frob"}})", nullptr},
      {"keyed list over a non-list replaces", R"({"env":"oops"})",
       R"({"env":[{"name":"A","value":"1"}]})", R"({"env":[{"name":"A","value":"1"}]})"},
      {"map over a scalar", R"({"resources":5})", R"({"resources":{"limits":{"cpu":"1"}}})",
       R"({"resources":{"limits":{"cpu":"1"}}})"},
      {"pod template override shape",
       R"({"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"node","image":"torch","resources":{"limits":{"nvidia.com/gpu":1}}}],"initContainers":[{"name":"init"}]}})",
       R"({"spec":{"nodeSelector":{"pool":"gpu"},"containers":[{"name":"node","resources":{"limits":{"cpu":"4"}},"volumeMounts":[{"name":"d","mountPath":"/data"}]}],"volumes":[{"name":"d","persistentVolumeClaim":{"claimName":"c"}}]}})",
       R"({"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"node","image":"torch","resources":{"limits":{"nvidia.com/gpu":1,"cpu":"4"}},"volumeMounts":[{"name":"d","mountPath":"/data"}]}],"initContainers":[{"name":"init"}],"nodeSelector":{"pool":"gpu"},"volumes":[{"name":"d","persistentVolumeClaim":{"claimName":"c"}}]}})"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      Value target = J(c.target);
      Status s = StrategicMerge(target, J(c.patch));
      // The non-atomic form merges the same (and fails alike, leaving its target partly merged).
      Value in_place = J(c.target);
      Status s_in_place = StrategicMergeNonAtomic(in_place, J(c.patch));
      CHECK(s_in_place.ToString() == s.ToString());
      if (c.want == nullptr) {
        CHECK_FALSE(s.ok());
        CHECK(target == J(c.target));
      } else {
        INFO(s.ToString());
        REQUIRE(s.ok());
        CHECK(Write(target) == Write(J(c.want)));
        CHECK(Write(in_place) == Write(J(c.want)));
      }
    }
  }
}

TEST_CASE("StrategicMerge properties", "[unit][patch]") {
  Value tmpl = J(R"({"spec":{"containers":[{"name":"a","env":[{"name":"X","value":"1"}]}]}})");
  SECTION("merging the same patch twice is idempotent") {
    Value patch = J(
        R"({"spec":{"containers":[{"name":"a","env":[{"name":"Y","value":"2"}]},{"name":"b"}]}})");
    Value once = tmpl.Clone();
    REQUIRE(StrategicMerge(once, patch).ok());
    Value twice = once.Clone();
    REQUIRE(StrategicMerge(twice, patch).ok());
    CHECK(once == twice);
  }
  SECTION("an empty patch changes nothing") {
    Value t = tmpl.Clone();
    REQUIRE(StrategicMerge(t, Value::Object()).ok());
    CHECK(t == tmpl);
  }
  SECTION("a non-object patch is an error") {
    Value t = tmpl.Clone();
    CHECK_FALSE(StrategicMerge(t, J("[1]")).ok());
  }
  SECTION("directives never reach the output") {
    std::mt19937 rng(3);
    const char* patches[] = {
        R"({"spec":{"$retainKeys":["containers"],"containers":[{"name":"a","$patch":"replace"}]}})",
        R"({"spec":{"$setElementOrder/containers":[{"name":"a"}],"containers":[{"name":"z","env":[{"name":"Q","$patch":"delete"}]}]}})",
        R"({"spec":{"volumes":[{"$patch":"replace"},{"name":"v","secret":{"$patch":"replace","secretName":"s"}}]}})",
    };
    for (const char* p : patches) {
      Value t = tmpl.Clone();
      REQUIRE(StrategicMerge(t, J(p)).ok());
      CHECK(Write(t).find('$') == std::string::npos);
    }
  }
}

}  // namespace
}  // namespace trainer::json
