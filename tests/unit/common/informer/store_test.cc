// Tests of common/informer/store.h: keyed reads, namespaces, indexes kept in step with updates.
#include "common/informer/store.h"

#include <catch2/catch.hpp>

namespace trainer::informer {
namespace {

json::Value Obj(std::string_view ns, std::string_view name, std::string_view runtime) {
  json::Value v = json::Value::Object();
  v["metadata"].Set("namespace", ns);
  v["metadata"].Set("name", name);
  v["spec"]["runtimeRef"].Set("name", runtime);
  return v;
}

std::string RuntimeOf(const json::Value& o) {
  const json::Value* spec = o.Find("spec");
  const json::Value* ref = spec ? spec->Find("runtimeRef") : nullptr;
  const json::Value* name = ref ? ref->Find("name") : nullptr;
  return name != nullptr && name->IsString() ? name->AsString() : "";
}

std::string Key(std::string_view ns, std::string_view name) {
  return std::string(ns) + "/" + std::string(name);
}

std::vector<std::string> RuntimeIndex(const json::Value& o) {
  const json::Value* spec = o.Find("spec");
  const json::Value* ref = spec ? spec->Find("runtimeRef") : nullptr;
  const json::Value* name = ref ? ref->Find("name") : nullptr;
  if (name == nullptr || !name->IsString()) return {};
  return {name->AsString()};
}

TEST_CASE("store reads, namespaces and indexes", "[informer][store]") {
  for (StoreMode mode : {StoreMode::kCompact, StoreMode::kShared}) {
    Store s(mode);
    REQUIRE(s.AddIndexer("runtime", RuntimeIndex).ok());
    CHECK(IsAlreadyExists(s.AddIndexer("runtime", RuntimeIndex)));
    CHECK(s.Upsert(Key("a", "j1"), Obj("a", "j1", "torch"), true) == nullptr);
    s.Upsert(Key("a", "j2"), Obj("a", "j2", "mpi"), false);
    s.Upsert(Key("b", "j3"), Obj("b", "j3", "torch"), false);
    s.Upsert("cluster-scoped", Obj("", "cluster-scoped", ""), false);

    auto j1 = s.Get("a", "j1");
    REQUIRE(j1 != nullptr);
    CHECK(RuntimeOf(*j1) == "torch");
    CHECK(s.Get("a", "missing") == nullptr);
    CHECK(s.Get("", "cluster-scoped") != nullptr);
    // GetCopy: an owned copy equal to what Get shares; editing it leaves the cache alone.
    std::optional<json::Value> copy = s.GetCopy("a", "j1");
    REQUIRE(copy.has_value());
    CHECK(*copy == *j1);
    copy->Erase("spec");
    CHECK(RuntimeOf(*s.Get("a", "j1")) == "torch");
    CHECK_FALSE(s.GetCopy("a", "missing").has_value());
    CHECK(s.GetCopy("", "cluster-scoped").has_value());
    CHECK(s.size() == 4);
    CHECK(s.ListNamespace("a").size() == 2);
    CHECK(s.ListNamespace("b").size() == 1);
    CHECK(s.KeysByIndex("runtime", "torch") == std::vector<std::string>{"a/j1", "b/j3"});

    // An update moves the object between index values and returns the old object.
    auto old = s.Upsert(Key("a", "j1"), Obj("a", "j1", "mpi"), true);
    REQUIRE(old != nullptr);
    CHECK(RuntimeOf(*old) == "torch");
    CHECK(RuntimeOf(*j1) == "torch");  // readers keep theirs
    CHECK(s.KeysByIndex("runtime", "torch") == std::vector<std::string>{"b/j3"});
    CHECK(s.KeysByIndex("runtime", "mpi") == std::vector<std::string>{"a/j1", "a/j2"});

    // An update that keeps the value keeps one entry; one that changes it moves it.
    s.Upsert(Key("a", "j2"), Obj("a", "j2", "mpi"), false);
    CHECK(s.KeysByIndex("runtime", "mpi") == std::vector<std::string>{"a/j1", "a/j2"});
    s.Upsert(Key("a", "j2"), Obj("a", "j2", "jax"), false);
    CHECK(s.KeysByIndex("runtime", "mpi") == std::vector<std::string>{"a/j1"});
    s.Upsert(Key("a", "j2"), Obj("a", "j2", "mpi"), false);
    CHECK(s.KeysByIndex("runtime", "jax").empty());

    auto gone = s.Delete("b/j3");
    REQUIRE(gone != nullptr);
    CHECK(s.KeysByIndex("runtime", "torch").empty());
    CHECK(s.Delete("b/j3") == nullptr);
    CHECK(s.ByIndex("runtime", "mpi").size() == 2);
    CHECK(s.ByIndex("nope", "x").empty());
    CHECK(s.payload_bytes() > 0);
  }
}

TEST_CASE("an indexer added late indexes existing objects", "[informer][store]") {
  Store s;
  s.Upsert("a/j1", Obj("a", "j1", "torch"), false);
  REQUIRE(s.AddIndexer("runtime", RuntimeIndex).ok());
  CHECK(s.KeysByIndex("runtime", "torch") == std::vector<std::string>{"a/j1"});
}

}  // namespace
}  // namespace trainer::informer
