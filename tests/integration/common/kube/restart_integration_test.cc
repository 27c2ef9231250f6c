// Integration test: watches and informers survive the apiserver being killed and started again
// (hack/testbed/restart-apiserver.sh). Runs serially: it takes the apiserver away from every
// other test for a few seconds.
#include <catch2/catch.hpp>
#include <set>
#include <thread>

#include "common/informer/informer.h"
#include "common/kube/meta.h"
#include "tests/integration/common/kube/testbed_client.h"

namespace trainer::kube {
namespace {

using namespace std::chrono_literals;
using testbed::ConfigMap;

std::map<std::string, std::string> Snapshot(const informer::Store& store) {
  std::map<std::string, std::string> out;
  for (const auto& obj : store.List()) out[ObjectKeyOf(*obj)] = std::string(ResourceVersion(*obj));
  return out;
}

std::map<std::string, std::string> ServerState(Client& client, const std::string& ns) {
  std::map<std::string, std::string> out;
  auto list = ListAll(client, kConfigMaps, ns, {});
  REQUIRE(list.ok());
  for (const json::Value& obj : list->Find("items")->elements()) {
    out[ObjectKeyOf(obj)] = std::string(ResourceVersion(obj));
  }
  return out;
}

TEST_CASE("a watch and an informer survive an apiserver restart", "[integration][restart]") {
  auto client = testbed::NewClient();
  testbed::TempNamespace ns(*client, "kube-restart");
  const std::string& n = ns.name();
  for (int i = 0; i < 5; ++i) {
    REQUIRE(
        client->Create(kConfigMaps, n, ConfigMap(n, "before-" + std::to_string(i), {{"v", "0"}}))
            .ok());
  }
  informer::Informer inf(*client, {.gvr = kConfigMaps, .ns = n});
  std::atomic<int> deletes{0};
  inf.AddEventHandler({.on_delete = [&](const json::Value&) { ++deletes; }});
  inf.Start();
  REQUIRE(inf.WaitForSync(30s));
  REQUIRE(inf.store().size() == 5);

  // A raw watch alongside: it must end with an error (not hang) when the apiserver dies.
  std::atomic<bool> raw_done{false};
  Status raw_status;
  std::thread raw([&] {
    raw_status = client->Watch(kConfigMaps, n, {.resource_version = inf.LastSyncResourceVersion()},
                               [](WatchEvent&) { return true; });
    raw_done = true;
  });

  const int rc = std::system("hack/testbed/restart-apiserver.sh --down-seconds 3");
  REQUIRE(rc == 0);
  REQUIRE(testbed::Eventually([&] { return raw_done.load(); }, 30s));
  raw.join();
  CHECK(raw_status.code() == StatusCode::kUnavailable);

  // Changes after the restart reach the informer through its re-established watch.
  REQUIRE(client->Create(kConfigMaps, n, ConfigMap(n, "after", {{"v", "1"}})).ok());
  json::Value patch = json::Value::Object();
  patch["data"].Set("v", "2");
  REQUIRE(client->Patch(kConfigMaps, n, "before-0", PatchType::kMerge, patch).ok());
  REQUIRE(client->Delete(kConfigMaps, n, "before-1").ok());
  const bool converged =
      testbed::Eventually([&] { return Snapshot(inf.store()) == ServerState(*client, n); }, 90s);
  CHECK(converged);
  CHECK(inf.store().size() == 5);
  CHECK(deletes == 1);
  CHECK(inf.watches() >= 2);
  std::printf("restart: informer lists=%d watches=%d\n", inf.lists(), inf.watches());
  inf.Stop();
}

}  // namespace
}  // namespace trainer::kube
