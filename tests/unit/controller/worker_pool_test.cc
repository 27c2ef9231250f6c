// WorkerPool: controller-runtime's result rules (success forgets, an error retries with
// backoff, requeue_after comes back after the delay, a throw is a counted panic and retried),
// the reconcile metrics they feed, live keys before a cache's first-list backlog, and Stop
// waiting for in-flight reconciles.
#include "controller/worker_pool.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

#include "common/json/json.h"
#include "common/log/log.h"
#include "common/log/testing/stderr_capture.h"

namespace trainer::controller {
namespace {

using namespace std::chrono_literals;

bool WaitFor(const std::function<bool()>& cond, std::chrono::milliseconds timeout = 5s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

bool Has(const metrics::Registry& r, const std::string& line) {
  return r.Text().find(line) != std::string::npos;
}

// Counts calls per key; each key's results are scripted, then it succeeds.
struct Script {
  std::mutex mu;
  std::map<std::string, int> calls;
  std::map<std::string, std::vector<ReconcileResult>> results;
  std::function<void(const std::string&)> hook;

  ReconcileResult Reconcile(const std::string& key) {
    std::vector<ReconcileResult>* next;
    {
      std::lock_guard<std::mutex> lock(mu);
      ++calls[key];
      next = &results[key];
    }
    if (hook) hook(key);
    std::lock_guard<std::mutex> lock(mu);
    if (next->empty()) return {};
    ReconcileResult r = next->front();
    next->erase(next->begin());
    return r;
  }
  int Calls(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu);
    return calls[key];
  }
};

WorkerPoolOptions Options(Script& s, int workers = 2) {
  return {.name = "test_controller", .workers = workers, .reconcile = [&s](const std::string& key) {
            return s.Reconcile(key);
          }};
}

TEST_CASE("results: success, error with backoff, requeue_after, and their metrics") {
  metrics::Registry registry;
  Script s;
  s.results["ns/err"] = {{.error = UnavailableError("apiserver down")}};
  s.results["ns/later"] = {{.requeue_after = 30ms}};
  WorkerPool pool(Options(s), registry, nullptr);
  pool.Start();
  pool.Add("ns/ok");
  pool.Add("ns/err");
  pool.Add("ns/later");
  REQUIRE(WaitFor([&] { return s.Calls("ns/err") == 2 && s.Calls("ns/later") == 2; }));
  REQUIRE(WaitFor([&] { return pool.processed() == 5; }));
  pool.Stop();
  CHECK(s.Calls("ns/ok") == 1);
  const std::string c = "{controller=\"test_controller\",result=";
  CHECK(Has(registry, "controller_runtime_reconcile_total" + c + "\"success\"} 3"));
  CHECK(Has(registry, "controller_runtime_reconcile_total" + c + "\"error\"} 1"));
  CHECK(Has(registry, "controller_runtime_reconcile_total" + c + "\"requeue_after\"} 1"));
  CHECK(
      Has(registry, "controller_runtime_reconcile_errors_total{controller=\"test_controller\"} 1"));
  CHECK(Has(registry,
            "controller_runtime_max_concurrent_reconciles{controller=\"test_controller\"} 2"));
  CHECK(Has(registry, "controller_runtime_active_workers{controller=\"test_controller\"} 0"));
}

// The failure's JSON record from `lines`: the first whose msg is "Reconciler error" and whose name
// is `name`.
std::optional<json::Value> FailureRecord(const std::vector<std::string>& lines,
                                         const std::string& name) {
  for (const std::string& line : lines) {
    StatusOr<json::Value> v = json::Parse(line);
    if (!v.ok() || !v->IsObject()) continue;
    const json::Value* msg = v->Find("msg");
    const json::Value* n = v->Find("name");
    if (msg != nullptr && msg->AsString() == "Reconciler error" && n != nullptr &&
        n->AsString() == name) {
      return std::move(*v);
    }
  }
  return std::nullopt;
}

std::string Str(const json::Value& record, const char* key) {
  const json::Value* v = record.Find(key);
  return v != nullptr && v->IsString() ? v->AsString() : "<missing>";
}

TEST_CASE("a failure is logged as controller-runtime's Reconciler error, with its keys") {
  metrics::Registry registry;
  Script s;
  s.results["ns/err"] = {{.error = UnavailableError("apiserver down")}};
  s.results["cluster-wide"] = {{.error = UnavailableError("still down")}};
  WorkerPoolOptions options = Options(s, 1);
  options.name = "trainjob_controller";
  options.group = "trainer.kubeflow.org";
  options.kind = "TrainJob";
  std::vector<std::string> lines;
  {
    log::SetFormat(log::Format::kJson);
    log::testing::StderrCapture capture;
    WorkerPool pool(std::move(options), registry, nullptr);
    pool.Start();
    pool.Add("ns/err");
    pool.Add("cluster-wide");
    bool done = WaitFor([&] { return s.Calls("ns/err") == 2 && s.Calls("cluster-wide") == 2; });
    pool.Stop();
    lines = capture.Lines();
    log::SetFormat(log::Format::kText);
    REQUIRE(done);
  }
  std::optional<json::Value> namespaced = FailureRecord(lines, "err");
  REQUIRE(namespaced);
  CHECK(Str(*namespaced, "level") == "error");
  CHECK(Str(*namespaced, "controller") == "trainjob_controller");
  CHECK(Str(*namespaced, "controllerGroup") == "trainer.kubeflow.org");
  CHECK(Str(*namespaced, "controllerKind") == "TrainJob");
  CHECK(Str(*namespaced, "namespace") == "ns");
  CHECK(Str(*namespaced, "error") == "apiserver down");
  CHECK(Str(*namespaced, "failures") == "1");
  // A cluster-scoped key has an empty namespace, as controller-runtime logs req.Namespace.
  std::optional<json::Value> cluster = FailureRecord(lines, "cluster-wide");
  REQUIRE(cluster);
  CHECK(Str(*cluster, "namespace") == "");
  CHECK(Str(*cluster, "error") == "still down");
}

TEST_CASE("failures left out by the rate limit are counted in a warning of their own") {
  metrics::Registry registry;
  Script s;
  for (int i = 0; i < 12; ++i) {
    s.results["ns/burst-" + std::to_string(i)] = {{.error = UnavailableError("down")}};
  }
  s.results["ns/after"] = {{.error = UnavailableError("down")}};
  std::vector<std::string> lines;
  {
    log::SetFormat(log::Format::kJson);
    log::testing::StderrCapture capture;
    WorkerPool pool(Options(s, 1), registry, nullptr);
    pool.Start();
    for (int i = 0; i < 12; ++i) pool.Add("ns/burst-" + std::to_string(i));
    bool burst = WaitFor([&] { return s.Calls("ns/burst-11") == 2; });
    std::this_thread::sleep_for(1100ms);  // the next second's first line
    pool.Add("ns/after");
    bool after = WaitFor([&] { return s.Calls("ns/after") == 2; });
    pool.Stop();
    lines = capture.Lines();
    log::SetFormat(log::Format::kText);
    REQUIRE(burst);
    REQUIRE(after);
  }
  int errors = 0;
  std::string unlogged;
  for (const std::string& line : lines) {
    StatusOr<json::Value> v = json::Parse(line);
    if (!v.ok()) continue;
    if (Str(*v, "msg") == "Reconciler error") ++errors;
    if (Str(*v, "level") == "warn") unlogged = Str(*v, "unlogged_failures_of_other_keys");
  }
  CHECK(errors == 11);  // the burst's first 10 and ns/after's
  CHECK(unlogged == "2");
  std::optional<json::Value> record = FailureRecord(lines, "after");
  REQUIRE(record);
  CHECK_FALSE(record->Has("unlogged_failures_of_other_keys"));
}

TEST_CASE("a reconcile that throws is a panic, counted and retried") {
  metrics::Registry registry;
  Script s;
  std::atomic<int> throws{1};
  s.hook = [&](const std::string&) {
    if (throws-- > 0) throw std::runtime_error("nil pointer");
  };
  WorkerPool pool(Options(s, 1), registry, nullptr);
  pool.Start();
  pool.Add("ns/tj");
  REQUIRE(WaitFor([&] { return pool.processed() == 2; }));
  pool.Stop();
  CHECK(s.Calls("ns/tj") == 2);
  CHECK(
      Has(registry, "controller_runtime_reconcile_panics_total{controller=\"test_controller\"} 1"));
}

TEST_CASE("background keys wait behind live ones") {
  metrics::Registry registry;
  Script s;
  std::mutex order_mu;
  std::vector<std::string> order;
  s.hook = [&](const std::string& key) {
    std::lock_guard<std::mutex> lock(order_mu);
    order.push_back(key);
  };
  WorkerPool pool(Options(s, 1), registry, nullptr);
  for (int i = 0; i < 20; ++i) pool.AddBackground("ns/old-" + std::to_string(i));
  pool.Add("ns/new");
  pool.Start();
  REQUIRE(WaitFor([&] { return pool.processed() == 21; }));
  pool.Stop();
  // The live key is served within the first few, not after the 20 of the backlog.
  auto it = std::find(order.begin(), order.end(), "ns/new");
  REQUIRE(it != order.end());
  CHECK(it - order.begin() <= 2);
}

TEST_CASE("a held backlog waits while live keys are served, and drains once released") {
  metrics::Registry registry;
  Script s;
  WorkerPool pool(Options(s, 2), registry, nullptr);
  pool.HoldBackground();
  for (int i = 0; i < 5; ++i) pool.AddBackground("ns/old-" + std::to_string(i));
  pool.Start();
  pool.Add("ns/new");
  REQUIRE(WaitFor([&] { return pool.processed() == 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(pool.processed() == 1);
  CHECK(s.Calls("ns/old-0") == 0);
  pool.ReleaseBackground();
  REQUIRE(WaitFor([&] { return pool.processed() == 6; }));
  pool.Stop();
  CHECK(s.Calls("ns/new") == 1);
  CHECK(s.Calls("ns/old-4") == 1);
}

TEST_CASE("with several workers the backlog is fed in bursts and live keys still go first") {
  metrics::Registry registry;
  Script s;
  std::mutex order_mu;
  std::vector<std::string> order;
  WorkerPool* pool_ptr = nullptr;
  s.hook = [&](const std::string& key) {
    std::lock_guard<std::mutex> lock(order_mu);
    order.push_back(key);
    if (order.size() == 10) pool_ptr->Add("ns/new");  // a live event mid-drain
  };
  WorkerPool pool(Options(s, 4), registry, nullptr);
  pool_ptr = &pool;
  for (int i = 0; i < 40; ++i) pool.AddBackground("ns/old-" + std::to_string(i));
  pool.Start();
  REQUIRE(WaitFor([&] { return pool.processed() == 41; }));
  pool.Stop();
  std::lock_guard<std::mutex> lock(order_mu);
  // Every backlog key ran once; the live key waited behind the queue's <= 4 backlog keys, not
  // behind the 30 left in the backlog. `order` is the order of the hook, not of the queue: the 3
  // other workers may record a key taken before the live add after it, and, while the worker
  // that took the live key is descheduled before its hook, up to 3 keys taken after it (seen
  // under load: index 18).
  CHECK(std::set<std::string>(order.begin(), order.end()).size() == 41);
  auto it = std::find(order.begin(), order.end(), "ns/new");
  REQUIRE(it != order.end());
  CHECK(it - order.begin() <= 9 + 3 + 4 + 3);
}

TEST_CASE("Stop lets in-flight reconciles finish and leaves queued keys") {
  metrics::Registry registry;
  Script s;
  std::atomic<bool> started{false}, finished{false};
  s.hook = [&](const std::string& key) {
    if (key != "ns/slow") return;
    started = true;
    std::this_thread::sleep_for(50ms);
    finished = true;
  };
  WorkerPool pool(Options(s, 1), registry, nullptr);
  pool.Start();
  pool.Add("ns/slow");
  pool.Add("ns/queued");
  REQUIRE(WaitFor([&] { return started.load(); }));
  pool.Stop();
  CHECK(finished);
  CHECK(s.Calls("ns/queued") == 0);
  pool.Stop();  // idempotent
}

}  // namespace
}  // namespace trainer::controller

namespace trainer::controller {
namespace {

using namespace std::chrono_literals;
using Clock = FailureLogLimiter::Clock;

TEST_CASE("FailureLogLimiter: a key's first failure, then one line per interval counting repeats",
          "[controller][failure_log]") {
  FailureLogLimiter limiter({.per_key = 30s, .per_second = 10});
  const Clock::time_point t0{};
  auto first = limiter.Failed("ns/a", t0 + 1s);
  REQUIRE(first);
  CHECK(first->failures == 1);
  CHECK(first->dropped == 0);
  // The workqueue retries at once and again and again: no line until 30 s have passed.
  for (std::chrono::milliseconds d : {5ms, 15ms, 35ms, 75ms, 10000ms, 29000ms}) {
    CHECK_FALSE(limiter.Failed("ns/a", t0 + 1s + d));
  }
  auto later = limiter.Failed("ns/a", t0 + 31s);
  REQUIRE(later);
  CHECK(later->failures == 7);  // the six it did not log, and this one
}

TEST_CASE("FailureLogLimiter: a success resets the key", "[controller][failure_log]") {
  FailureLogLimiter limiter({.per_key = 30s, .per_second = 10});
  const Clock::time_point t0{};
  REQUIRE(limiter.Failed("ns/a", t0));
  limiter.Succeeded("ns/a");
  auto again = limiter.Failed("ns/a", t0 + 1s);
  REQUIRE(again);
  CHECK(again->failures == 1);
}

TEST_CASE("FailureLogLimiter: at most per_second lines a second; the next line counts the rest",
          "[controller][failure_log]") {
  FailureLogLimiter limiter({.per_key = 30s, .per_second = 2});
  const Clock::time_point t0 = Clock::time_point{} + 100s;
  int logged = 0;
  for (int i = 0; i < 5; ++i) {
    if (limiter.Failed("ns/job-" + std::to_string(i), t0 + std::chrono::milliseconds(i))) ++logged;
  }
  CHECK(logged == 2);
  auto next = limiter.Failed("ns/other", t0 + 1500ms);
  REQUIRE(next);
  CHECK(next->dropped == 3);
  // A key whose line was dropped waits its interval like one that was logged.
  CHECK_FALSE(limiter.Failed("ns/job-4", t0 + 2s));
  auto job4 = limiter.Failed("ns/job-4", t0 + 31s);
  REQUIRE(job4);
  CHECK(job4->failures == 3);
  CHECK(job4->dropped == 0);
}

}  // namespace
}  // namespace trainer::controller
