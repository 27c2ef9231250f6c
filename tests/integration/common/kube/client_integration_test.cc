// Integration tests of the kube client on the real test bed apiserver: CRUD with typed errors,
// server-side apply conflicts between field managers (and force), a paginated list of 2,000
// objects, events.k8s.io/v1 events, discovery, and the informer against real watches.
#include <catch2/catch.hpp>
#include <set>
#include <thread>

#include "common/informer/informer.h"
#include "common/kube/events.h"
#include "common/kube/meta.h"
#include "tests/integration/common/kube/testbed_client.h"

namespace trainer::kube {
namespace {

using namespace std::chrono_literals;
using testbed::ConfigMap;
using testbed::Str;

TEST_CASE("CRUD with typed errors", "[integration]") {
  auto client = testbed::NewClient();
  testbed::TempNamespace ns(*client, "kube-crud");
  const std::string& n = ns.name();

  auto created = client->Create(kConfigMaps, n, ConfigMap(n, "cm", {{"a", "1"}}));
  REQUIRE(created.ok());
  CHECK_FALSE(ResourceVersion(*created).empty());
  auto dup = client->Create(kConfigMaps, n, ConfigMap(n, "cm", {{"a", "1"}}));
  CHECK(dup.status().code() == StatusCode::kAlreadyExists);
  CHECK(dup.status().http_code() == 409);
  CHECK(dup.status().message() == "configmaps \"cm\" already exists");

  auto got = client->Get(kConfigMaps, n, "cm");
  REQUIRE(got.ok());
  CHECK(Str(*got, {"data", "a"}) == "1");

  // Update with the current resourceVersion works; with the old one it conflicts.
  json::Value v1 = got->Clone();
  v1["data"].Set("a", "2");
  auto updated = client->Update(kConfigMaps, n, v1);
  REQUIRE(updated.ok());
  v1["data"].Set("a", "3");
  auto stale = client->Update(kConfigMaps, n, v1);
  CHECK(IsConflict(stale.status()));
  CHECK(stale.status().message().find("the object has been modified") != std::string::npos);

  json::Value merge = json::Value::Object();
  merge["data"].Set("b", "x");
  auto merged = client->Patch(kConfigMaps, n, "cm", PatchType::kMerge, merge);
  REQUIRE(merged.ok());
  CHECK(Str(*merged, {"data", "a"}) == "2");
  CHECK(Str(*merged, {"data", "b"}) == "x");
  auto ops = json::Parse(
      R"([{"op":"replace","path":"/data/b","value":"y"},{"op":"test","path":"/data/a","value":"2"}])");
  auto jp = client->Patch(kConfigMaps, n, "cm", PatchType::kJson, *ops);
  REQUIRE(jp.ok());
  CHECK(Str(*jp, {"data", "b"}) == "y");
  auto smp = client->Patch(kConfigMaps, n, "cm", PatchType::kStrategicMerge, merge);
  CHECK(smp.ok());

  // Invalid: the apiserver's message, verbatim, with the field causes.
  auto bad = client->Create(kConfigMaps, n, ConfigMap(n, "Bad_Name", {}));
  CHECK(bad.status().code() == StatusCode::kInvalid);
  CHECK(bad.status().http_code() == 422);
  CHECK(bad.status().message().starts_with(
      "ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\""));

  // Delete preconditions.
  Status wrong_uid = client->Delete(kConfigMaps, n, "cm", {.precondition_uid = "not-the-uid"});
  CHECK(IsConflict(wrong_uid));
  REQUIRE(
      client
          ->Delete(kConfigMaps, n, "cm",
                   {.propagation_policy = "Background", .precondition_uid = std::string(Uid(*got))})
          .ok());
  CHECK(IsNotFound(client->Get(kConfigMaps, n, "cm").status()));
  // Foreground deletion leaves the object with the foregroundDeletion finalizer until the
  // garbage collector has removed its dependents (none here).
  REQUIRE(client->Create(kConfigMaps, n, ConfigMap(n, "fg", {})).ok());
  REQUIRE(client->Delete(kConfigMaps, n, "fg", {.propagation_policy = "Foreground"}).ok());
  CHECK(testbed::Eventually([&] { return IsNotFound(client->Get(kConfigMaps, n, "fg").status()); },
                            30s));
  Status again = client->Delete(kConfigMaps, n, "cm");
  CHECK(IsNotFound(again));
  CHECK(again.message() == "configmaps \"cm\" not found");

  // Forbidden needs another identity; a 404 for an unknown resource is typed too.
  auto unknown = client->Get({"example.com", "v1", "widgets"}, n, "w");
  CHECK(IsNotFound(unknown.status()));
}

TEST_CASE("server-side apply: conflicts between managers, force takes ownership", "[integration]") {
  auto client = testbed::NewClient();
  testbed::TempNamespace ns(*client, "kube-ssa");
  const std::string& n = ns.name();

  auto a = client->Apply(kConfigMaps, n, ConfigMap(n, "shared", {{"k", "from-a"}, {"only-a", "1"}}),
                         {.field_manager = "manager-a"});
  REQUIRE(a.ok());
  auto b = client->Apply(kConfigMaps, n, ConfigMap(n, "shared", {{"k", "from-b"}}),
                         {.field_manager = "manager-b"});
  REQUIRE(b.status().code() == StatusCode::kConflict);
  CHECK(b.status().http_code() == 409);
  CHECK(b.status().message().find("conflict with \"manager-a\"") != std::string::npos);
  CHECK(b.status().message().find(".data.k") != std::string::npos);

  // Dry run does not change anything.
  auto dry = client->Apply(kConfigMaps, n, ConfigMap(n, "shared", {{"k", "dry"}}),
                           {.field_manager = "manager-b", .force = true, .dry_run = true});
  REQUIRE(dry.ok());
  CHECK(Str(*client->Get(kConfigMaps, n, "shared"), {"data", "k"}) == "from-a");

  auto forced = client->Apply(kConfigMaps, n, ConfigMap(n, "shared", {{"k", "from-b"}}),
                              {.field_manager = "manager-b", .force = true});
  REQUIRE(forced.ok());
  CHECK(Str(*forced, {"data", "k"}) == "from-b");
  CHECK(Str(*forced, {"data", "only-a"}) == "1");  // still a's
  // Ownership moved: a re-applying without the field no longer removes it, b owns it now.
  auto a2 = client->Apply(kConfigMaps, n, ConfigMap(n, "shared", {{"only-a", "1"}}),
                          {.field_manager = "manager-a"});
  REQUIRE(a2.ok());
  CHECK(Str(*a2, {"data", "k"}) == "from-b");
  // a dropping only-a from its applied config removes the field it alone owned.
  auto a3 =
      client->Apply(kConfigMaps, n, ConfigMap(n, "shared", {}), {.field_manager = "manager-a"});
  REQUIRE(a3.ok());
  CHECK(Str(*a3, {"data", "only-a"}) == "<absent>");
  CHECK_FALSE(client->Apply(kConfigMaps, n, ConfigMap(n, "shared", {}), {}).ok());  // no manager
}

TEST_CASE("status subresource patch and apply", "[integration]") {
  auto client = testbed::NewClient();
  testbed::TempNamespace ns(*client, "kube-status");
  const std::string& n = ns.name();
  json::Value q = json::Value::Object();
  q.Set("apiVersion", "v1");
  q.Set("kind", "ResourceQuota");
  q["metadata"].Set("name", "q");
  q["spec"]["hard"].Set("pods", "10");
  const GroupVersionResource quotas{"", "v1", "resourcequotas"};
  REQUIRE(client->Create(quotas, n, q).ok());
  json::Value patch = json::Value::Object();
  patch["status"]["hard"].Set("pods", "10");
  patch["status"]["used"].Set("pods", "3");
  auto patched = client->PatchStatus(quotas, n, "q", PatchType::kMerge, patch);
  REQUIRE(patched.ok());
  CHECK(Str(*patched, {"status", "used", "pods"}) == "3");
  json::Value applied = json::Value::Object();
  applied.Set("apiVersion", "v1");
  applied.Set("kind", "ResourceQuota");
  applied["metadata"].Set("name", "q");
  applied["status"]["used"].Set("pods", "4");
  auto ssa =
      client->ApplyStatus(quotas, n, applied, {.field_manager = "quota-test", .force = true});
  REQUIRE(ssa.ok());
  CHECK(Str(*ssa, {"status", "used", "pods"}) == "4");
}

TEST_CASE("a paginated list of 2,000 objects", "[integration]") {
  auto client = testbed::NewClient();
  testbed::TempNamespace ns(*client, "kube-page");
  const std::string& n = ns.name();
  constexpr int kObjects = 2000, kThreads = 4;
  std::atomic<int> failures{0};
  std::vector<std::thread> creators;
  for (int t = 0; t < kThreads; ++t) {
    creators.emplace_back([&, t] {
      for (int i = t; i < kObjects; i += kThreads) {
        json::Value cm = ConfigMap(n, "cm-" + std::to_string(i), {{"i", std::to_string(i)}});
        cm["metadata"]["labels"].Set("page-test", "yes");
        if (!client->Create(kConfigMaps, n, cm).ok()) ++failures;
      }
    });
  }
  for (auto& t : creators) t.join();
  REQUIRE(failures == 0);
  const uint64_t before = client->requests_sent();
  auto all = ListAll(*client, kConfigMaps, n, {.label_selector = "page-test=yes", .limit = 300});
  REQUIRE(all.ok());
  const json::Value* items = all->Find("items");
  REQUIRE(items->size() == kObjects);
  CHECK(client->requests_sent() - before == 7);  // ceil(2000 / 300) pages
  std::set<std::string> names;
  for (const json::Value& item : items->elements()) names.insert(std::string(Name(item)));
  CHECK(names.size() == kObjects);
  // One page by hand carries a continue token.
  auto page = client->List(kConfigMaps, n, {.limit = 10});
  REQUIRE(page.ok());
  CHECK(page->Find("items")->size() == 10);
  CHECK(Str(*page, {"metadata", "continue"}) != "<absent>");
  // The informer pages its initial list the same way.
  informer::Informer inf(
      *client, {.gvr = kConfigMaps, .ns = n, .label_selector = "page-test=yes", .page_size = 500});
  inf.Start();
  REQUIRE(inf.WaitForSync(60s));
  CHECK(inf.store().size() == kObjects);
  std::printf("informer cache: %zu ConfigMaps, %zu payload bytes\n", inf.store().size(),
              inf.store().payload_bytes());
}

TEST_CASE("events.k8s.io/v1 events and discovery", "[integration]") {
  auto client = testbed::NewClient();
  testbed::TempNamespace ns(*client, "kube-events");
  const std::string& n = ns.name();
  auto cm = client->Create(kConfigMaps, n, ConfigMap(n, "regarding", {}));
  REQUIRE(cm.ok());
  EventRecorder recorder(*client, "trainer-controller", "test-instance");
  REQUIRE(recorder.Event(*cm, "Normal", "Created", "Create", "created something").ok());
  REQUIRE(recorder.Event(*cm, "Warning", "Failed", "Reconcile", std::string(2000, 'x')).ok());
  auto events = client->List(kEvents, n, {});
  REQUIRE(events.ok());
  REQUIRE(events->Find("items")->size() == 2);
  const json::Value& first = events->Find("items")->at(0);
  CHECK(Str(first, {"regarding", "name"}) == "regarding");
  CHECK(Str(first, {"regarding", "kind"}) == "ConfigMap");
  CHECK(Str(first, {"reportingController"}) == "trainer-controller");

  auto cm_installed = IsInstalled(*client, {"", "v1", "ConfigMap"});
  REQUIRE(cm_installed.ok());
  CHECK(*cm_installed);
  auto lease_installed = IsInstalled(*client, {"coordination.k8s.io", "v1", "Lease"});
  CHECK(lease_installed.value_or(false));
  auto bogus = IsInstalled(*client, {"nothing.example.com", "v1", "Thing"});
  REQUIRE(bogus.ok());
  CHECK_FALSE(*bogus);
  auto wrong_kind = IsInstalled(*client, {"coordination.k8s.io", "v1", "NotALease"});
  REQUIRE(wrong_kind.ok());
  CHECK_FALSE(*wrong_kind);
}

TEST_CASE("connections are reused against the real apiserver", "[integration]") {
  auto client = testbed::NewClient();
  for (int i = 0; i < 50; ++i) REQUIRE(client->GetPath("/version").ok());
  CHECK(client->connections_opened() == 1);
}

}  // namespace
}  // namespace trainer::kube
