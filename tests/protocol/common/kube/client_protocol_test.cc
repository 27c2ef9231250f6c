// Protocol tests of kube::CurlClient against the scripted loopback server: what a real apiserver
// cannot be made to do on demand (events split at every byte, 410 and connection drops
// mid-stream, 429 with Retry-After, silent connections), plus the request shapes (SSA, delete
// options, pagination) and transport behaviour (connection reuse, retries, token rotation).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/kube/curl/client.h"
#include "common/kube/rest_mapper.h"
#include "tests/protocol/common/kube/script_server.h"

namespace trainer::kube {
namespace {

using testing::ScriptServer;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

ClientOptions FastOptions() {
  ClientOptions o;
  o.retry_backoff = {std::chrono::milliseconds(10), std::chrono::milliseconds(50), 2.0, 0.5,
                     std::chrono::milliseconds(0)};
  o.max_retry_after = std::chrono::seconds(2);
  return o;
}

std::unique_ptr<CurlClient> NewClient(const ScriptServer& server, ClientOptions o = FastOptions()) {
  RestConfig cfg;
  cfg.server = server.url();
  auto c = CurlClient::New(std::move(cfg), std::move(o));
  REQUIRE(c.ok());
  return std::move(*c);
}

std::string Event(std::string_view type, std::string_view name, std::string_view rv) {
  return "{\"type\":\"" + std::string(type) +
         "\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"" + std::string(name) +
         "\",\"resourceVersion\":\"" + std::string(rv) + "\"}}}\n";
}

TEST_CASE("watch decodes an event split at every byte offset of the stream", "[protocol]") {
  const std::string stream =
      Event("ADDED", "a", "1") + Event("MODIFIED", "a", "2") + Event("BOOKMARK", "", "3");
  ScriptServer server([&](const ScriptServer::Request&, ScriptServer::Conn& c) {
    c.Write(ScriptServer::ChunkedHead());
    for (size_t k = 1; k < stream.size(); ++k) {
      c.Chunk(std::string_view(stream).substr(0, k));
      c.Chunk(std::string_view(stream).substr(k));
    }
    c.Chunk("");
  });
  auto client = NewClient(server);
  std::vector<std::string> rvs;
  Status s = client->Watch(kConfigMaps, "ns", {}, [&](WatchEvent& e) {
    rvs.push_back(e.object["metadata"]["resourceVersion"].AsString());
    return true;
  });
  CHECK(s.ok());
  REQUIRE(rvs.size() == 3 * (stream.size() - 1));
  for (size_t i = 0; i < rvs.size(); ++i) {
    REQUIRE(rvs[i] == std::to_string(i % 3 + 1));
  }
  const auto req = server.requests().at(0);
  CHECK(req.Path() == "/api/v1/namespaces/ns/configmaps");
  CHECK(req.Param("watch") == "true");
  CHECK(req.Param("allowWatchBookmarks") == "true");
  const int timeout = std::stoi(req.Param("timeoutSeconds"));
  CHECK(timeout >= 300);
  CHECK(timeout < 600);
}

TEST_CASE("a 410 mid-stream ends the watch with kGone after the earlier events", "[protocol]") {
  ScriptServer server([](const ScriptServer::Request&, ScriptServer::Conn& c) {
    c.Write(ScriptServer::ChunkedHead());
    c.Chunk(Event("ADDED", "a", "5"));
    c.Chunk(R"({"type":"ERROR","object":)" +
            ScriptServer::StatusBody(410, "Expired", "too old resource version: 5 (10)") + "}\n");
    c.Chunk("");
  });
  auto client = NewClient(server);
  int events = 0;
  Status s = client->Watch(kConfigMaps, "", {.resource_version = "5"},
                           [&](WatchEvent&) { return ++events, true; });
  CHECK(s.code() == StatusCode::kGone);
  CHECK(s.message() == "too old resource version: 5 (10)");
  CHECK(events == 1);
  CHECK(server.requests().at(0).Param("resourceVersion") == "5");
}

TEST_CASE("a connection dropped mid-event is kUnavailable after the complete events",
          "[protocol]") {
  ScriptServer server([](const ScriptServer::Request&, ScriptServer::Conn& c) {
    c.Write(ScriptServer::ChunkedHead());
    const std::string second = Event("MODIFIED", "a", "2");
    c.Chunk(Event("ADDED", "a", "1") + second.substr(0, second.size() / 2));
    std::this_thread::sleep_for(50ms);
    c.Close();
  });
  auto client = NewClient(server);
  std::vector<std::string> rvs;
  Status s = client->Watch(kConfigMaps, "", {}, [&](WatchEvent& e) {
    rvs.push_back(e.object["metadata"]["resourceVersion"].AsString());
    return true;
  });
  CHECK(s.code() == StatusCode::kUnavailable);
  CHECK(rvs == std::vector<std::string>{"1"});
}

TEST_CASE("a silent watch connection is detected as dead", "[protocol]") {
  ScriptServer server([](const ScriptServer::Request&, ScriptServer::Conn& c) {
    c.Write(ScriptServer::ChunkedHead());
    std::this_thread::sleep_for(1500ms);
  });
  auto client = NewClient(server);
  const auto start = SteadyClock::now();
  Status s =
      client->Watch(kConfigMaps, "", {.idle_timeout = 300ms}, [](WatchEvent&) { return true; });
  CHECK(s.code() == StatusCode::kUnavailable);
  CHECK(s.message().find("assuming the connection is dead") != std::string::npos);
  CHECK(SteadyClock::now() - start < 1200ms);
}

TEST_CASE("stopping a watch returns at once", "[protocol]") {
  ScriptServer server([](const ScriptServer::Request&, ScriptServer::Conn& c) {
    c.Write(ScriptServer::ChunkedHead());
    c.Chunk(Event("ADDED", "a", "1"));
    std::this_thread::sleep_for(1500ms);
  });
  auto client = NewClient(server);
  std::stop_source stop;
  std::atomic<int> events{0};
  const auto start = SteadyClock::now();
  std::thread stopper([&] {
    while (events.load() == 0) std::this_thread::sleep_for(5ms);
    stop.request_stop();
  });
  Status s = client->Watch(
      kConfigMaps, "", {}, [&](WatchEvent&) { return ++events, true; }, stop.get_token());
  stopper.join();
  CHECK(s.code() == StatusCode::kCancelled);
  CHECK(SteadyClock::now() - start < 500ms);
}

TEST_CASE("429 with Retry-After is retried after the delay", "[protocol]") {
  std::atomic<int> calls{0};
  ScriptServer server([&](const ScriptServer::Request&, ScriptServer::Conn& c) {
    if (calls++ == 0) {
      c.Write(ScriptServer::Response(
          429, ScriptServer::StatusBody(429, "TooManyRequests", "too many requests"),
          "Retry-After: 1\r\n"));
    } else {
      c.Write(ScriptServer::Response(200, R"({"kind":"ConfigMap","metadata":{"name":"x"}})"));
    }
  });
  auto client = NewClient(server);
  const auto start = SteadyClock::now();
  auto got = client->Get(kConfigMaps, "ns", "x");
  REQUIRE(got.ok());
  CHECK(calls == 2);
  CHECK(SteadyClock::now() - start >= 950ms);
}

TEST_CASE("a Retry-After longer than the limit is returned as kTooManyRequests", "[protocol]") {
  ScriptServer server([&](const ScriptServer::Request&, ScriptServer::Conn& c) {
    c.Write(ScriptServer::Response(
        429, ScriptServer::StatusBody(429, "TooManyRequests", "slow down"), "Retry-After: 5\r\n"));
  });
  auto client = NewClient(server);
  auto got = client->Get(kConfigMaps, "ns", "x");
  CHECK(got.status().code() == StatusCode::kTooManyRequests);
  CHECK(got.status().retry_after_seconds() == 5.0);
  CHECK(got.status().http_code() == 429);
  CHECK(server.requests().size() == 1);
}

TEST_CASE("5xx: reads are retried, ambiguous create failures are not", "[protocol]") {
  std::atomic<int> calls{0};
  ScriptServer server([&](const ScriptServer::Request& r, ScriptServer::Conn& c) {
    const int n = calls++;
    if (r.method == "GET") {
      c.Write(n == 0 ? ScriptServer::Response(
                           503, ScriptServer::StatusBody(503, "ServiceUnavailable", "x"))
                     : ScriptServer::Response(200, R"({"metadata":{"name":"x"}})"));
    } else if (r.Path().ends_with("/retry-after")) {
      c.Write(n % 2 == 0 ? ScriptServer::Response(500, "{}", "Retry-After: 0\r\n")
                         : ScriptServer::Response(201, R"({"metadata":{"name":"y"}})"));
    } else {
      c.Write(ScriptServer::Response(500, ScriptServer::StatusBody(500, "InternalError", "boom")));
    }
  });
  auto client = NewClient(server);
  REQUIRE(client->Get(kConfigMaps, "ns", "x").ok());
  CHECK(calls == 2);
  calls = 0;
  json::Value obj = json::Value::Object();
  obj["metadata"].Set("name", "y");
  auto created = client->Create(kConfigMaps, "ns", obj);
  CHECK(created.status().code() == StatusCode::kInternal);
  CHECK(created.status().message() == "boom");
  CHECK(calls == 1);
  calls = 0;
  CHECK(client->Create({"", "v1", "retry-after"}, "", obj).ok());
  CHECK(calls == 2);
}

TEST_CASE("connection errors are retried and then reported", "[protocol]") {
  RestConfig cfg;
  cfg.server = "http://127.0.0.1:1";  // nothing listens on port 1
  ClientOptions o = FastOptions();
  o.max_retries = 2;
  auto client = CurlClient::New(std::move(cfg), o);
  REQUIRE(client.ok());
  auto got = (*client)->Get(kConfigMaps, "ns", "x");
  CHECK(got.status().code() == StatusCode::kUnavailable);
  CHECK((*client)->requests_sent() == 3);
}

TEST_CASE("typed errors keep the apiserver message", "[protocol]") {
  ScriptServer server([](const ScriptServer::Request& r, ScriptServer::Conn& c) {
    if (r.method == "GET") {
      c.Write(ScriptServer::Response(
          404, ScriptServer::StatusBody(404, "NotFound", "configmaps \\\"x\\\" not found")));
    } else if (r.method == "POST") {
      c.Write(
          ScriptServer::Response(409, ScriptServer::StatusBody(409, "AlreadyExists", "exists")));
    } else {
      c.Write(ScriptServer::Response(
          409, ScriptServer::StatusBody(
                   409, "Conflict",
                   "Apply failed with 1 conflict: conflict with \\\"other\\\": .data.k")));
    }
  });
  auto client = NewClient(server);
  auto got = client->Get(kConfigMaps, "ns", "x");
  CHECK(IsNotFound(got.status()));
  CHECK(got.status().message() == "configmaps \"x\" not found");
  CHECK(got.status().http_code() == 404);
  json::Value obj = json::Value::Object();
  obj["metadata"].Set("name", "x");
  CHECK(IsAlreadyExists(client->Create(kConfigMaps, "ns", obj).status()));
  auto applied = client->Apply(kConfigMaps, "ns", obj, {.field_manager = "trainer", .force = true});
  CHECK(IsConflict(applied.status()));
  CHECK(applied.status().message() ==
        "Apply failed with 1 conflict: conflict with \"other\": .data.k");
  const auto apply_req = server.requests().back();
  CHECK(apply_req.method == "PATCH");
  CHECK(apply_req.headers.at("content-type") == "application/apply-patch+yaml");
  CHECK(apply_req.Param("fieldManager") == "trainer");
  CHECK(apply_req.Param("force") == "true");
  CHECK(apply_req.Path() == "/api/v1/namespaces/ns/configmaps/x");
}

TEST_CASE("requests carry the verb-specific shape", "[protocol]") {
  ScriptServer server([](const ScriptServer::Request&, ScriptServer::Conn& c) {
    c.Write(ScriptServer::Response(200, R"({"kind":"Status","status":"Success"})"));
  });
  auto client = NewClient(server);
  REQUIRE(client
              ->Delete(kJobSets, "ns", "js",
                       {.propagation_policy = "Foreground", .precondition_uid = "u1"})
              .ok());
  auto del = server.requests().back();
  CHECK(del.method == "DELETE");
  auto body = json::Parse(del.body);
  REQUIRE(body.ok());
  CHECK((*body)["propagationPolicy"].AsString() == "Foreground");
  CHECK((*body)["preconditions"]["uid"].AsString() == "u1");
  json::Value patch = json::Value::Object();
  patch["status"].Set("x", 1);
  REQUIRE(client->PatchStatus(kTrainJobs, "ns", "tj", PatchType::kMerge, patch).ok());
  auto p = server.requests().back();
  CHECK(p.Path() == "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/tj/status");
  CHECK(p.headers.at("content-type") == "application/merge-patch+json");
  REQUIRE(client->Patch(kTrainJobs, "ns", "tj", PatchType::kJson, json::Value::Array()).ok());
  CHECK(server.requests().back().headers.at("content-type") == "application/json-patch+json");
  CHECK_FALSE(client->Delete(kJobSets, "ns", "").ok());  // never a collection delete
}

// Pooled handles keep their options between requests: each request must still go out with its
// own verb, body and content type, never the previous request's.
TEST_CASE("a reused connection carries each request's own verb and body", "[protocol]") {
  ScriptServer server([](const ScriptServer::Request&, ScriptServer::Conn& c) {
    c.Write(ScriptServer::Response(200, R"({"metadata":{"name":"x"}})"));
  });
  auto client = NewClient(server);
  json::Value cm = json::Value::Object();
  cm.Set("apiVersion", "v1");
  cm.Set("kind", "ConfigMap");
  cm["metadata"].Set("name", "x");
  REQUIRE(client->Apply(kConfigMaps, "ns", cm, {.field_manager = "trainer", .force = true}).ok());
  REQUIRE(client->Get(kConfigMaps, "ns", "x").ok());
  REQUIRE(client->Create(kConfigMaps, "ns", cm).ok());
  REQUIRE(client->Get(kConfigMaps, "ns", "x").ok());
  REQUIRE(client->Delete(kConfigMaps, "ns", "x").ok());
  REQUIRE(client->Update(kConfigMaps, "ns", cm).ok());
  REQUIRE(client->List(kConfigMaps, "ns", {}).ok());
  std::vector<ScriptServer::Request> got = server.requests();
  REQUIRE(got.size() == 7);
  CHECK(server.connections() == 1);
  const std::vector<std::string> verbs = {"PATCH", "GET", "POST", "GET", "DELETE", "PUT", "GET"};
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("request " << i << ": " << got[i].method << " " << got[i].target);
    CHECK(got[i].method == verbs[i]);
    const bool has_body = verbs[i] != "GET";
    CHECK(got[i].body.empty() == !has_body);
    CHECK(got[i].headers.count("content-type") == (has_body ? 1u : 0u));
  }
  CHECK(got[0].headers.at("content-type") == "application/apply-patch+yaml");
  CHECK(got[0].Param("fieldManager") == "trainer");
  CHECK(got[2].headers.at("content-type") == "application/json");
  CHECK(got[2].Param("fieldManager").empty());
  CHECK(got[4].Path() == "/api/v1/namespaces/ns/configmaps/x");
  CHECK(got[6].Path() == "/api/v1/namespaces/ns/configmaps");
}

TEST_CASE("ListAll follows continue tokens and falls back on an expired token", "[protocol]") {
  std::atomic<bool> expire{false};
  ScriptServer server([&](const ScriptServer::Request& r, ScriptServer::Conn& c) {
    const std::string cont = r.Param("continue");
    if (cont.empty() && r.Param("limit").empty()) {
      c.Write(ScriptServer::Response(
          200,
          R"({"kind":"ConfigMapList","metadata":{"resourceVersion":"9"},"items":[{"n":1},{"n":2},{"n":3}]})"));
    } else if (cont.empty()) {
      c.Write(ScriptServer::Response(
          200,
          R"({"kind":"ConfigMapList","metadata":{"resourceVersion":"7","continue":"c1"},"items":[{"n":1},{"n":2}]})"));
    } else if (expire) {
      c.Write(ScriptServer::Response(410,
                                     ScriptServer::StatusBody(410, "Expired", "continue expired")));
    } else {
      c.Write(ScriptServer::Response(
          200, R"({"kind":"ConfigMapList","metadata":{"resourceVersion":"7"},"items":[{"n":3}]})"));
    }
  });
  auto client = NewClient(server);
  auto all = ListAll(*client, kConfigMaps, "ns", {.limit = 2});
  REQUIRE(all.ok());
  CHECK((*all)["items"].size() == 3);
  CHECK((*all)["metadata"]["resourceVersion"].AsString() == "7");
  CHECK_FALSE((*all)["metadata"].Has("continue"));
  CHECK(server.requests().at(1).Param("continue") == "c1");
  expire = true;
  auto fallback = ListAll(*client, kConfigMaps, "ns", {.limit = 2});
  REQUIRE(fallback.ok());
  CHECK((*fallback)["items"].size() == 3);
  CHECK((*fallback)["metadata"]["resourceVersion"].AsString() == "9");
}

TEST_CASE("connections are reused across requests and threads", "[protocol]") {
  ScriptServer server([](const ScriptServer::Request&, ScriptServer::Conn& c) {
    c.Write(ScriptServer::Response(200, R"({"metadata":{"name":"x"}})"));
  });
  auto client = NewClient(server);
  for (int i = 0; i < 20; ++i) REQUIRE(client->Get(kConfigMaps, "ns", "x").ok());
  CHECK(server.connections() == 1);
  CHECK(client->connections_opened() == 1);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) ok += client->Get(kConfigMaps, "ns", "x").ok();
    });
  }
  for (auto& t : threads) t.join();
  CHECK(ok == 100);
  CHECK(server.connections() <= 4);
}

TEST_CASE("a burst's connections beyond max_idle_connections are closed after it", "[protocol]") {
  ScriptServer server([](const ScriptServer::Request&, ScriptServer::Conn& c) {
    std::this_thread::sleep_for(100ms);  // so the burst's requests overlap
    c.Write(ScriptServer::Response(200, R"({"metadata":{"name":"x"}})"));
  });
  ClientOptions o = FastOptions();
  o.max_idle_connections = 2;
  auto client = NewClient(server, o);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] { ok += client->Get(kConfigMaps, "ns", "x").ok(); });
  }
  for (auto& t : threads) t.join();
  REQUIRE(ok == 8);
  CHECK(client->connections_opened() > 2);  // the burst needed more than the pool keeps
  CHECK(client->idle_connections() == 2);
  // The kept ones are reused: sequential requests open no new connection.
  const uint64_t opened = client->connections_opened();
  for (int i = 0; i < 5; ++i) REQUIRE(client->Get(kConfigMaps, "ns", "x").ok());
  CHECK(client->connections_opened() == opened);
  CHECK(client->idle_connections() == 2);
}

TEST_CASE("a rotated token is re-read after a 401", "[protocol]") {
  namespace fs = std::filesystem;
  const fs::path token = fs::temp_directory_path() / ("kube-token-" + std::to_string(::getpid()));
  std::ofstream(token) << "old-token\n";
  ScriptServer server([](const ScriptServer::Request& r, ScriptServer::Conn& c) {
    if (r.headers.count("authorization") && r.headers.at("authorization") == "Bearer new-token") {
      c.Write(ScriptServer::Response(200, R"({"metadata":{"name":"x"}})"));
    } else {
      c.Write(ScriptServer::Response(
          401, ScriptServer::StatusBody(401, "Unauthorized", "Unauthorized")));
    }
  });
  RestConfig cfg;
  cfg.server = server.url();
  cfg.token_file = token.string();
  auto client = CurlClient::New(std::move(cfg), FastOptions());
  REQUIRE(client.ok());
  CHECK((*client)->Get(kConfigMaps, "ns", "x").status().code() == StatusCode::kUnauthorized);
  std::ofstream(token) << "new-token\n";
  CHECK((*client)->Get(kConfigMaps, "ns", "x").ok());
  fs::remove(token);
}

// How long `n` GETs take through a client limited to `qps` and `burst`.
SteadyClock::duration TimeLimitedGets(double qps, int burst, int n) {
  ScriptServer server([](const ScriptServer::Request&, ScriptServer::Conn& c) {
    c.Write(ScriptServer::Response(200, R"({"metadata":{"name":"x"}})"));
  });
  ClientOptions o = FastOptions();
  o.qps = qps;
  o.burst = burst;
  auto client = NewClient(server, o);
  const auto start = SteadyClock::now();
  for (int i = 0; i < n; ++i) REQUIRE(client->Get(kConfigMaps, "ns", "x").ok());
  return SteadyClock::now() - start;
}

TEST_CASE("the client-side limiter spaces requests when enabled", "[protocol]") {
  CHECK(TimeLimitedGets(20, 2, 6) >= 180ms);  // 4 requests beyond the burst at 20/s
}

TEST_CASE("a burst of 0 is client-go's default burst, 10", "[protocol]") {
  // A burst of 1 would space them 0.5 s apart: 4.5 s.
  CHECK(TimeLimitedGets(2, 0, 10) < 3s);
}

}  // namespace
}  // namespace trainer::kube

namespace trainer::kube {
namespace {

std::string ListBody(int n) {
  std::string out = R"({"kind":"ConfigMapList","metadata":{"resourceVersion":"9"},"items":[)";
  for (int i = 0; i < n; ++i) {
    out += std::string(i ? "," : "") + R"({"metadata":{"name":"cm-)" + std::to_string(i) +
           R"(","managedFields":[{"manager":"m","fieldsV1":{"f:data":{}}}]},"data":{"k":"v"}})";
  }
  return out + "]}";
}

TEST_CASE("ListEach hands over the items of a list streamed in small chunks", "[protocol]") {
  const std::string body = ListBody(50);
  std::atomic<int> calls{0};
  ScriptServer server([&](const ScriptServer::Request&, ScriptServer::Conn& c) {
    if (calls++ == 0) {  // a 503 before any item is retried
      c.Write(
          ScriptServer::Response(503, ScriptServer::StatusBody(503, "ServiceUnavailable", "x")));
      return;
    }
    c.Write(ScriptServer::ChunkedHead());
    for (size_t i = 0; i < body.size(); i += 7) c.Chunk(std::string_view(body).substr(i, 7));
    c.Chunk("");
  });
  auto client = NewClient(server);
  const json::SkipPaths skip({{"metadata", "managedFields", "*", "fieldsV1"}});
  std::vector<std::string> names;
  auto list = client->ListEach(kConfigMaps, "", {.skip = &skip}, [&](json::Value& item) {
    names.push_back(item["metadata"]["name"].AsString());
    CHECK(json::Write(item["metadata"]["managedFields"]) == R"([{"manager":"m"}])");
    return OkStatus();
  });
  REQUIRE(list.ok());
  CHECK(calls == 2);
  REQUIRE(names.size() == 50);
  CHECK(names[49] == "cm-49");
  CHECK(json::Write(*list) ==
        R"({"kind":"ConfigMapList","metadata":{"resourceVersion":"9"},"items":[]})");
  // List decodes the same document whole, with the same skips.
  auto whole = client->List(kConfigMaps, "", {.skip = &skip});
  REQUIRE(whole.ok());
  CHECK(json::Write((*whole)["items"].elements()[3]["metadata"]) ==
        R"({"name":"cm-3","managedFields":[{"manager":"m"}]})");
}

TEST_CASE("ListEach: errors and a connection dropped mid-list are reported, not retried",
          "[protocol]") {
  std::atomic<int> calls{0};
  ScriptServer server([&](const ScriptServer::Request& r, ScriptServer::Conn& c) {
    ++calls;
    if (r.Path().ends_with("/gone")) {
      c.Write(ScriptServer::Response(410, ScriptServer::StatusBody(410, "Expired", "too old")));
      return;
    }
    const std::string body = ListBody(10);
    c.Write(ScriptServer::ChunkedHead());
    c.Chunk(body.substr(0, body.size() / 2));
    std::this_thread::sleep_for(50ms);
    c.Close();
  });
  auto client = NewClient(server);
  int items = 0;
  auto count = [&](json::Value&) { return ++items, OkStatus(); };
  auto dropped = client->ListEach(kConfigMaps, "", {}, count);
  CHECK(dropped.status().code() == StatusCode::kUnavailable);
  CHECK(calls == 1);
  CHECK(items > 0);
  CHECK(items < 10);
  calls = 0;
  auto gone = client->ListEach({"", "v1", "gone"}, "", {}, count);
  CHECK(gone.status().code() == StatusCode::kGone);
  CHECK(gone.status().message() == "too old");
  // The handler's error ends the list with it.
  auto stopped =
      client->ListEach(kConfigMaps, "", {}, [](json::Value&) { return CancelledError("enough"); });
  CHECK(stopped.status().message() == "enough");
}

}  // namespace
}  // namespace trainer::kube
