// The service frame: start and stop order of its servers, probes, exit codes, and SIGTERM as a
// graceful stop.
#include "common/service/frame.h"

#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include "common/http/testing/test_certs.h"

namespace trainer::service {
namespace {

FrameOptions Loopback() {
  return {.program = "frame-test",
          .health_probe_bind_address = "127.0.0.1:0",
          .metrics_bind_address = "127.0.0.1:0"};
}

// A Runnable made of a function, for tests.
class Fn final : public Runnable {
 public:
  explicit Fn(std::function<Status(std::stop_token)> fn) : fn_(std::move(fn)) {}
  Status Run(std::stop_token stop) override { return fn_(stop); }

 private:
  std::function<Status(std::stop_token)> fn_;
};

Frame::Factory Make(std::function<Status(std::stop_token)> fn) {
  return [fn](Frame&) -> StatusOr<std::unique_ptr<Runnable>> {
    return std::unique_ptr<Runnable>(new Fn(fn));
  };
}

std::string Get(const http::Server* server, const std::string& path, int* status = nullptr) {
  httplib::Client cli("127.0.0.1", server->port());
  auto res = cli.Get(path);
  if (!res) return "<no response>";
  if (status != nullptr) *status = res->status;
  return res->body;
}

TEST_CASE("the service's servers, probes and metrics serve while Run runs") {
  Frame frame(Loopback());
  bool ready = false;
  frame.probes().AddReadyz("service",
                           [&] { return ready ? OkStatus() : UnavailableError("not yet"); });
  http::Server& own = frame.AddServer("own", {.address = "127.0.0.1:0", .threads = 2});
  own.Get("/hello", [](const http::Request&, http::Response& res) { res.body = "hi"; });
  std::vector<std::string> seen;
  int code = frame.Run(Make([&](std::stop_token) {
    const http::Server* probe = frame.server("probe");
    REQUIRE(probe != nullptr);
    REQUIRE(frame.server("metrics") != nullptr);
    seen.push_back(Get(frame.server("own"), "/hello"));
    seen.push_back(Get(probe, "/healthz"));
    int status = 0;
    Get(probe, "/readyz", &status);
    seen.push_back(std::to_string(status));
    ready = true;
    seen.push_back(Get(probe, "/readyz"));
    seen.push_back(Get(frame.server("metrics"), "/metrics").find("process_start_time_seconds") !=
                           std::string::npos
                       ? "process metrics"
                       : "no process metrics");
    return OkStatus();
  }));
  CHECK(code == 0);
  CHECK(seen == std::vector<std::string>{"hi", "ok", "500", "ok", "process metrics"});
  // Stopped: nothing answers any more.
  CHECK_FALSE(frame.server("own")->running());
  CHECK_FALSE(frame.server("probe")->running());
  CHECK_FALSE(frame.server("metrics")->running());
}

TEST_CASE("exit codes: 1 when the service cannot be built, a server cannot start or Run fails") {
  {
    Frame frame(Loopback());
    CHECK(frame.Run([](Frame&) -> StatusOr<std::unique_ptr<Runnable>> {
      return UnavailableError("no kubeconfig");
    }) == 1);
  }
  {
    Frame frame(Loopback());
    CHECK(frame.Run(Make([](std::stop_token) { return UnavailableError("leader lost"); })) == 1);
  }
  {
    FrameOptions o = Loopback();
    o.health_probe_bind_address = "256.0.0.1:1";  // cannot bind
    Frame frame(o);
    bool ran = false;
    CHECK(frame.Run(Make([&](std::stop_token) {
      ran = true;
      return OkStatus();
    })) == 1);
    CHECK_FALSE(ran);
  }
}

TEST_CASE("\"0\" disables the probe and metrics servers") {
  FrameOptions o = Loopback();
  o.health_probe_bind_address = "0";
  o.metrics_bind_address = "";
  Frame frame(o);
  CHECK(frame.Run(Make([&](std::stop_token) {
    CHECK(frame.server("probe") == nullptr);
    CHECK(frame.server("metrics") == nullptr);
    return OkStatus();
  })) == 0);
}

TEST_CASE("SIGTERM stops Run; the service's servers stay up until Run returned") {
  Frame frame(Loopback());
  http::Server& own = frame.AddServer("own", {.address = "127.0.0.1:0", .threads = 2});
  bool serving_after_stop = false;
  int code = frame.Run(Make([&](std::stop_token stop) {
    kill(getpid(), SIGTERM);  // process-directed: the frame's signal thread takes it
    Status s = ServeUntilStopped().Run(stop);
    serving_after_stop = own.running();  // draining work may still need its servers
    return s;
  }));
  CHECK(code == 0);
  CHECK(serving_after_stop);
  CHECK_FALSE(own.running());
}

TEST_CASE("metrics over TLS from a certificate directory; a missing one fails the start") {
  http::testing::TestCa ca = http::testing::TestCa::Create();
  http::testing::SecretDir dir;
  dir.Write(ca.Issue("metrics"));
  FrameOptions o = Loopback();
  o.metrics_secure_serving = true;
  o.metrics_cert_dir = dir.path();
  {
    Frame frame(o);
    CHECK(frame.Run(Make([&](std::stop_token) {
      httplib::Client plain("127.0.0.1", frame.server("metrics")->port());
      CHECK_FALSE(plain.Get("/metrics"));  // a TLS server does not answer plain HTTP
      httplib::SSLClient tls("127.0.0.1", frame.server("metrics")->port());
      tls.enable_server_certificate_verification(false);
      auto res = tls.Get("/metrics");
      CHECK((res && res->status == 200));
      return OkStatus();
    })) == 0);
  }
  o.metrics_cert_dir = dir.path() + "/missing";
  Frame frame(o);
  CHECK(frame.Run(Make([](std::stop_token) { return OkStatus(); })) == 1);
}

}  // namespace
}  // namespace trainer::service
