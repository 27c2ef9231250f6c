// Tests of common/informer/informer.h against the in-memory FakeClient: list then watch,
// handlers, indexers, relist after 410 with deletes for what vanished, resync, stripping.
#include "common/informer/informer.h"

#include <catch2/catch.hpp>
#include <thread>

#include "common/kube/meta.h"
#include "common/kube/rest_mapper.h"
#include "common/kube/testing/fake_client.h"

namespace trainer::informer {
namespace {

using namespace std::chrono_literals;
using kube::testing::FakeClient;

json::Value Job(std::string_view ns, std::string_view name, std::string_view runtime) {
  json::Value v = json::Value::Object();
  v.Set("apiVersion", "trainer.kubeflow.org/v1alpha1");
  v.Set("kind", "TrainJob");
  v["metadata"].Set("namespace", ns);
  v["metadata"].Set("name", name);
  v["metadata"]["labels"].Set("team", "a");
  json::Value mf = json::Value::Array();
  mf.PushBack(json::Value::Object())["manager"] = json::Value("kubectl");
  v["metadata"].Set("managedFields", std::move(mf));
  v["spec"]["runtimeRef"].Set("name", runtime);
  return v;
}

template <typename Pred>
bool Eventually(Pred pred, std::chrono::milliseconds timeout = 5s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return pred();
}

struct Recorder {
  std::mutex mu;
  std::vector<std::string> events;  // "add ns/name", "update ns/name", "delete ns/name"
  EventHandler Handler() {
    return {.on_add = [this](const json::Value& o) { Push("add " + kube::ObjectKeyOf(o)); },
            .on_update = [this](const json::Value&,
                                const json::Value& o) { Push("update " + kube::ObjectKeyOf(o)); },
            .on_delete = [this](const json::Value& o) { Push("delete " + kube::ObjectKeyOf(o)); }};
  }
  void Push(std::string e) {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back(std::move(e));
  }
  bool Has(const std::string& e) {
    std::lock_guard<std::mutex> lock(mu);
    return std::find(events.begin(), events.end(), e) != events.end();
  }
  size_t Count() {
    std::lock_guard<std::mutex> lock(mu);
    return events.size();
  }
};

InformerOptions Options() {
  InformerOptions o;
  o.gvr = kube::kTrainJobs;
  o.backoff = {10ms, 50ms, 2.0, 0.5, 0ms};
  o.page_size = 2;  // exercise pagination
  return o;
}

TEST_CASE("informer lists in one request unless paging is asked for", "[informer]") {
  FakeClient client;
  for (int i = 0; i < 5; ++i) {
    client.Seed(kube::kTrainJobs, Job("a", "j" + std::to_string(i), "torch"));
  }
  InformerOptions one = Options();
  one.page_size = 0;
  Informer whole(client, one);
  whole.Start();
  REQUIRE(whole.WaitForSync(5s));
  CHECK(whole.store().size() == 5);
  CHECK(client.Calls("list") == 1);
  whole.Stop();
  CHECK(InformerOptions().page_size == 0);
  Informer paged(client, Options());  // 2 per page
  paged.Start();
  REQUIRE(paged.WaitForSync(5s));
  CHECK(paged.store().size() == 5);
  CHECK(client.Calls("list") == 1 + 3);
  paged.Stop();
}

TEST_CASE("informer lists, then follows the watch into its cache and handlers", "[informer]") {
  FakeClient client;
  client.Seed(kube::kTrainJobs, Job("a", "j1", "torch"));
  client.Seed(kube::kTrainJobs, Job("a", "j2", "mpi"));
  client.Seed(kube::kTrainJobs, Job("b", "j3", "torch"));
  Recorder rec;  // outlives the informer, whose thread calls into it
  Informer inf(client, Options());
  REQUIRE(inf.AddIndexer("runtime",
                         [](const json::Value& o) {
                           return std::vector<std::string>{
                               o.Find("spec")->Find("runtimeRef")->Find("name")->AsString()};
                         })
              .ok());
  inf.AddEventHandler(rec.Handler());
  CHECK_FALSE(inf.HasSynced());
  inf.Start();
  REQUIRE(inf.WaitForSync(5s));
  CHECK(inf.store().size() == 3);
  CHECK(rec.Has("add a/j1"));
  CHECK(inf.store().KeysByIndex("runtime", "torch") == std::vector<std::string>{"a/j1", "b/j3"});
  auto j1 = inf.store().Get("a", "j1");
  REQUIRE(j1 != nullptr);
  CHECK_FALSE(j1->Find("metadata")->Has("managedFields"));  // stripped

  REQUIRE(client.Create(kube::kTrainJobs, "b", Job("b", "j4", "mpi")).ok());
  json::Value patch = json::Value::Object();
  patch["spec"]["runtimeRef"].Set("name", "mpi");
  REQUIRE(client.Patch(kube::kTrainJobs, "a", "j1", kube::PatchType::kMerge, patch).ok());
  REQUIRE(client.Delete(kube::kTrainJobs, "a", "j2").ok());
  REQUIRE(Eventually([&] { return rec.Has("delete a/j2"); }));
  CHECK(rec.Has("add b/j4"));
  CHECK(rec.Has("update a/j1"));
  CHECK(inf.store().KeysByIndex("runtime", "mpi") == std::vector<std::string>{"a/j1", "b/j4"});
  CHECK(inf.store().Get("a", "j2") == nullptr);
  CHECK(inf.LastSyncResourceVersion() == client.CurrentResourceVersion());
  inf.Stop();
}

TEST_CASE("after 410 the informer relists and deletes what vanished meanwhile", "[informer]") {
  FakeClient client;
  client.Seed(kube::kTrainJobs, Job("a", "keep", "torch"));
  client.Seed(kube::kTrainJobs, Job("a", "vanish", "torch"));
  Recorder rec;  // outlives the informer, whose thread calls into it
  Informer inf(client, Options());
  inf.AddEventHandler(rec.Handler());
  inf.Start();
  REQUIRE(inf.WaitForSync(5s));
  const int lists_before = inf.lists();
  // History is compacted and the object deleted while the watch is down: the informer's
  // resourceVersion is now too old, so only a relist can learn about the delete.
  client.SetWatchesDown(true);
  REQUIRE(client.Delete(kube::kTrainJobs, "a", "vanish").ok());
  client.Compact();
  client.SetWatchesDown(false);
  REQUIRE(Eventually([&] { return rec.Has("delete a/vanish"); }));
  CHECK(inf.lists() > lists_before);
  CHECK(inf.store().size() == 1);
  // And it keeps watching after the relist.
  REQUIRE(client.Create(kube::kTrainJobs, "a", Job("a", "new", "mpi")).ok());
  REQUIRE(Eventually([&] { return inf.store().Get("a", "new") != nullptr; }));
}

TEST_CASE("watch errors are retried from the last resource version", "[informer]") {
  FakeClient client;
  client.Seed(kube::kTrainJobs, Job("a", "j1", "torch"));
  // Queued before Start so that no watch can slip in between them.
  client.FailNext("watch", UnavailableError("connection refused"));
  client.FailNext("watch", UnavailableError("connection refused"));
  Informer inf(client, Options());
  inf.Start();
  REQUIRE(inf.WaitForSync(5s));
  REQUIRE(client.Create(kube::kTrainJobs, "a", Job("a", "j2", "torch")).ok());
  REQUIRE(Eventually([&] { return inf.store().Get("a", "j2") != nullptr; }));
  CHECK(inf.lists() == 1);  // no relist needed
  CHECK(inf.watches() >= 3);
  CHECK(client.Calls("watch") >= 3);
}

TEST_CASE("a list failure is retried with backoff", "[informer]") {
  FakeClient client;
  client.Seed(kube::kTrainJobs, Job("a", "j1", "torch"));
  client.FailNext("list", UnavailableError("apiserver starting"));
  Informer inf(client, Options());
  inf.Start();
  REQUIRE(inf.WaitForSync(5s));
  CHECK(client.Calls("list") >= 2);
}

TEST_CASE("LastError says why the cache is not synced, and is OK once a list succeeds",
          "[informer]") {
  FakeClient client;
  client.Seed(kube::kTrainJobs, Job("a", "j1", "torch"));
  for (int i = 0; i < 20; ++i) {  // about a second of failures at the test's backoff
    client.FailNext("list", NotFoundError("the server could not find the requested resource"));
  }
  Informer inf(client, Options());
  CHECK(inf.LastError().ok());
  inf.Start();
  REQUIRE(Eventually([&] { return IsNotFound(inf.LastError()) && !inf.HasSynced(); }));
  REQUIRE(inf.WaitForSync(5s));
  CHECK(inf.LastError().ok());
}

TEST_CASE("the first list is cached page by page, each page before the next is asked for",
          "[informer]") {
  FakeClient client;
  for (int i = 0; i < 5; ++i) client.Seed(kube::kTrainJobs, Job("a", "j" + std::to_string(i), "t"));
  // The second page fails: what the first page held is already cached and delivered, and the
  // cache is not synced. A long backoff keeps the informer from retrying during the checks.
  client.FailNext("list-continue", UnavailableError("connection reset"));
  InformerOptions o = Options();
  o.backoff = {10s, 10s, 1.0, 0.0, 0ms};
  Recorder rec;  // outlives the informer, whose thread calls into it
  Informer inf(client, std::move(o));
  inf.AddEventHandler(rec.Handler());
  inf.Start();
  REQUIRE(Eventually([&] { return client.Calls("list") == 2; }));
  REQUIRE(Eventually([&] { return rec.Count() == 2; }));
  CHECK(inf.store().Keys() == std::vector<std::string>{"a/j0", "a/j1"});
  CHECK(rec.Has("add a/j0"));
  CHECK(rec.Has("add a/j1"));
  CHECK_FALSE(inf.HasSynced());
  CHECK(inf.lists() == 0);
  inf.Stop();
}

TEST_CASE("a paged list syncs after the last page; later relists page the same way", "[informer]") {
  FakeClient client;
  for (int i = 0; i < 5; ++i) client.Seed(kube::kTrainJobs, Job("a", "j" + std::to_string(i), "t"));
  Recorder rec;  // outlives the informer, whose thread calls into it
  Informer inf(client, Options());
  inf.AddEventHandler(rec.Handler());
  inf.Start();
  REQUIRE(inf.WaitForSync(5s));
  CHECK(inf.store().size() == 5);
  CHECK(client.Calls("list") == 3);  // pages of 2, 2, 1
  CHECK(client.Calls("list-continue") == 2);
  CHECK(inf.lists() == 1);
  CHECK(inf.LastSyncResourceVersion() == client.CurrentResourceVersion());
  // A relist after 410 pages too, and deletes what vanished from any page.
  client.SetWatchesDown(true);
  REQUIRE(client.Delete(kube::kTrainJobs, "a", "j3").ok());
  REQUIRE(client.Delete(kube::kTrainJobs, "a", "j0").ok());
  client.Compact();
  client.SetWatchesDown(false);
  REQUIRE(Eventually([&] { return rec.Has("delete a/j3") && rec.Has("delete a/j0"); }));
  CHECK(inf.store().Keys() == std::vector<std::string>{"a/j1", "a/j2", "a/j4"});
  CHECK(client.Calls("list") == 5);  // pages of 2, 1
  CHECK(inf.lists() == 2);
}

TEST_CASE("an expired continue token falls back to one full list", "[informer]") {
  FakeClient client;
  for (int i = 0; i < 5; ++i) client.Seed(kube::kTrainJobs, Job("a", "j" + std::to_string(i), "t"));
  client.FailNext("list-continue",
                  GoneError("The provided continue parameter is too old to display a consistent "
                            "list result. You can start a new list without the continue "
                            "parameter."));
  Recorder rec;  // outlives the informer, whose thread calls into it
  Informer inf(client, Options());
  inf.AddEventHandler(rec.Handler());
  inf.Start();
  REQUIRE(inf.WaitForSync(5s));
  // Page 1, the expired page 2, then everything in one request (client-go's pager fallback),
  // not a backoff and a new paged list.
  CHECK(client.Calls("list") == 3);
  CHECK(client.Calls("list-continue") == 1);
  CHECK(inf.lists() == 1);
  CHECK(inf.store().size() == 5);
  for (int i = 0; i < 5; ++i) CHECK(rec.Has("add a/j" + std::to_string(i)));
  CHECK(inf.LastSyncResourceVersion() == client.CurrentResourceVersion());
  // And it watches from the full list's version.
  REQUIRE(client.Create(kube::kTrainJobs, "a", Job("a", "j5", "t")).ok());
  REQUIRE(Eventually([&] { return rec.Has("add a/j5"); }));
}

// A first list skips tracking what it saw (the cache was empty): once the fallback re-lists,
// what the earlier pages cached and the full list lacks must still be deleted.
TEST_CASE("an object deleted between an expired page and the full list leaves the cache",
          "[informer]") {
  FakeClient client;
  for (int i = 0; i < 5; ++i) client.Seed(kube::kTrainJobs, Job("a", "j" + std::to_string(i), "t"));
  client.FailNext("list-continue", GoneError("The provided continue parameter is too old"));
  Recorder rec;  // outlives the informer, whose thread calls into it
  Informer inf(client, Options());
  inf.AddEventHandler(rec.Handler());
  // Deleted right after the first page cached it, before the full list.
  inf.AddEventHandler({.on_add = [&](const json::Value& o) {
    if (kube::ObjectKeyOf(o) == "a/j0") REQUIRE(client.Delete(kube::kTrainJobs, "a", "j0").ok());
  }});
  inf.Start();
  REQUIRE(inf.WaitForSync(5s));
  CHECK(client.Calls("list-continue") == 1);
  CHECK(inf.store().Get("a", "j0") == nullptr);
  CHECK(inf.store().size() == 4);
  CHECK(rec.Has("delete a/j0"));
}

TEST_CASE("handlers added late get the cache replayed; resync re-delivers", "[informer]") {
  FakeClient client;
  client.Seed(kube::kTrainJobs, Job("a", "j1", "torch"));
  InformerOptions o = Options();
  o.resync = 100ms;
  Recorder rec;  // outlives the informer, whose threads call into it
  Informer inf(client, std::move(o));
  inf.Start();
  REQUIRE(inf.WaitForSync(5s));
  inf.AddEventHandler(rec.Handler());
  CHECK(rec.Has("add a/j1"));
  REQUIRE(Eventually([&] { return rec.Has("update a/j1"); }));
}

TEST_CASE("label selectors and transforms apply", "[informer]") {
  FakeClient client;
  client.Seed(kube::kTrainJobs, Job("a", "j1", "torch"));
  json::Value other = Job("a", "j2", "torch");
  other["metadata"]["labels"].Set("team", "b");
  client.Seed(kube::kTrainJobs, std::move(other));
  InformerOptions o = Options();
  o.label_selector = "team=a";
  o.transform = [](json::Value& obj) { obj.Erase("spec"); };
  Informer inf(client, std::move(o));
  inf.Start();
  REQUIRE(inf.WaitForSync(5s));
  CHECK(inf.store().Keys() == std::vector<std::string>{"a/j1"});
  CHECK_FALSE(inf.store().Get("a", "j1")->Has("spec"));
}

TEST_CASE("stop ends a watching informer promptly", "[informer]") {
  FakeClient client;
  Informer inf(client, Options());
  inf.Start();
  REQUIRE(inf.WaitForSync(5s));
  const auto start = std::chrono::steady_clock::now();
  inf.Stop();
  CHECK(std::chrono::steady_clock::now() - start < 1s);
}

}  // namespace
}  // namespace trainer::informer
