// Protocol tests of informer::Informer over kube::CurlClient and the scripted server: a watch
// dropped mid-event resumes from the last resourceVersion (bookmarks included) without a relist;
// a 410 mid-stream relists and reconciles deletes.
#include <catch2/catch.hpp>
#include <thread>

#include "common/informer/informer.h"
#include "common/kube/curl/client.h"
#include "common/kube/meta.h"
#include "common/kube/rest_mapper.h"
#include "tests/protocol/common/kube/script_server.h"

namespace trainer::informer {
namespace {

using testing::ScriptServer;
using namespace std::chrono_literals;

std::string Obj(std::string_view name, std::string_view rv) {
  return R"({"kind":"ConfigMap","metadata":{"namespace":"ns","name":")" + std::string(name) +
         R"(","resourceVersion":")" + std::string(rv) + R"("}})";
}
std::string Ev(std::string_view type, std::string_view name, std::string_view rv) {
  return "{\"type\":\"" + std::string(type) + "\",\"object\":" + Obj(name, rv) + "}\n";
}
std::string List(std::string_view rv, std::initializer_list<std::string> items) {
  std::string out = R"({"kind":"ConfigMapList","metadata":{"resourceVersion":")" + std::string(rv) +
                    R"("},"items":[)";
  bool first = true;
  for (const std::string& i : items) {
    if (!first) out += ",";
    out += i;
    first = false;
  }
  return out + "]}";
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

std::unique_ptr<kube::CurlClient> NewClient(const ScriptServer& server) {
  kube::RestConfig cfg;
  cfg.server = server.url();
  auto c = kube::CurlClient::New(std::move(cfg));
  REQUIRE(c.ok());
  return std::move(*c);
}

InformerOptions Options() {
  InformerOptions o;
  o.gvr = kube::kConfigMaps;
  o.ns = "ns";
  o.backoff = {10ms, 50ms, 2.0, 0.5, 0ms};
  return o;
}

TEST_CASE("a dropped watch resumes from the last resource version, bookmarks included",
          "[protocol][informer]") {
  std::atomic<int> watch_no{0};
  ScriptServer server([&](const ScriptServer::Request& r, ScriptServer::Conn& c) {
    if (r.Param("watch").empty()) {
      c.Write(ScriptServer::Response(200, List("10", {Obj("a", "9")})));
      return;
    }
    const int n = ++watch_no;
    c.Write(ScriptServer::ChunkedHead());
    if (n == 1) {
      const std::string partial = Ev("MODIFIED", "a", "12");
      c.Chunk(Ev("ADDED", "b", "11") + partial.substr(0, 20));
      std::this_thread::sleep_for(20ms);
      c.Close();
    } else if (n == 2) {
      c.Chunk(Ev("BOOKMARK", "", "15"));
      c.Chunk("");  // server timeout: clean end
    } else {
      c.Chunk(Ev("MODIFIED", "a", "16"));
      std::this_thread::sleep_for(300ms);
      c.Chunk("");
    }
  });
  auto client = NewClient(server);
  Informer inf(*client, Options());
  inf.Start();
  REQUIRE(inf.WaitForSync(5s));
  REQUIRE(Eventually([&] {
    auto a = inf.store().Get("ns", "a");
    return a != nullptr && kube::ResourceVersion(*a) == "16";
  }));
  inf.Stop();
  std::vector<std::string> watch_rvs;
  int lists = 0;
  for (const auto& r : server.requests()) {
    if (r.Param("watch").empty()) {
      ++lists;
    } else {
      watch_rvs.push_back(r.Param("resourceVersion"));
    }
  }
  CHECK(lists == 1);
  REQUIRE(watch_rvs.size() >= 3);
  CHECK(watch_rvs[0] == "10");
  CHECK(watch_rvs[1] == "11");  // after the drop: the last complete event
  CHECK(watch_rvs[2] == "15");  // after the bookmark
  CHECK(inf.store().Get("ns", "b") != nullptr);
}

TEST_CASE("410 mid-stream relists and deletes what the list no longer has",
          "[protocol][informer]") {
  std::atomic<int> list_no{0}, watch_no{0};
  ScriptServer server([&](const ScriptServer::Request& r, ScriptServer::Conn& c) {
    if (r.Param("watch").empty()) {
      c.Write(ScriptServer::Response(200, ++list_no == 1
                                              ? List("10", {Obj("a", "1"), Obj("b", "2")})
                                              : List("30", {Obj("a", "25")})));
      return;
    }
    c.Write(ScriptServer::ChunkedHead());
    if (++watch_no == 1) {
      c.Chunk(R"({"type":"ERROR","object":)" +
              ScriptServer::StatusBody(410, "Expired", "too old resource version: 10 (20)") +
              "}\n");
      c.Chunk("");
    } else {
      std::this_thread::sleep_for(300ms);
      c.Chunk("");
    }
  });
  auto client = NewClient(server);
  Informer inf(*client, Options());
  std::mutex mu;
  std::vector<std::string> deleted;
  inf.AddEventHandler({.on_delete = [&](const json::Value& o) {
    std::lock_guard<std::mutex> lock(mu);
    deleted.push_back(kube::ObjectKeyOf(o));
  }});
  inf.Start();
  REQUIRE(Eventually([&] { return inf.lists() == 2; }));
  REQUIRE(Eventually([&] { return inf.LastSyncResourceVersion() == "30"; }));
  inf.Stop();
  CHECK(inf.store().Keys() == std::vector<std::string>{"ns/a"});
  CHECK(kube::ResourceVersion(*inf.store().Get("ns", "a")) == "25");
  std::lock_guard<std::mutex> lock(mu);
  CHECK(deleted == std::vector<std::string>{"ns/b"});
}

TEST_CASE("a failed one-request list is retried in pages, then lists are whole again",
          "[protocol][informer]") {
  std::mutex mu;
  std::vector<std::string> limits;  // of each list request, "" when whole
  ScriptServer server([&](const ScriptServer::Request& r, ScriptServer::Conn& c) {
    if (r.Param("watch").empty()) {
      size_t n;
      {
        std::lock_guard<std::mutex> lock(mu);
        limits.push_back(r.Param("limit"));
        n = limits.size();
      }
      if (n == 1) {  // the apiserver's request timeout cut a whole list short
        const std::string body = List("10", {Obj("a", "1"), Obj("b", "2")});
        c.Write(ScriptServer::ChunkedHead());
        c.Chunk(body.substr(0, body.size() - 20));
        c.Close();
        return;
      }
      c.Write(ScriptServer::Response(200, List("10", {Obj("a", "1"), Obj("b", "2")})));
      return;
    }
    c.Write(ScriptServer::ChunkedHead());
    c.Chunk(R"({"type":"ERROR","object":)" +
            ScriptServer::StatusBody(410, "Expired", "too old resource version: 10 (20)") + "}\n");
    c.Chunk("");
  });
  auto client = NewClient(server);
  Informer inf(*client, Options());
  inf.Start();
  REQUIRE(inf.WaitForSync(5s));
  REQUIRE(Eventually([&] { return inf.lists() >= 2; }));
  inf.Stop();
  CHECK(inf.store().size() == 2);
  std::lock_guard<std::mutex> lock(mu);
  REQUIRE(limits.size() >= 3);
  CHECK(limits[0] == "");
  CHECK(limits[1] == "500");
  CHECK(limits[2] == "");  // the paged list succeeded: whole again (the relist after the 410)
}

}  // namespace
}  // namespace trainer::informer
