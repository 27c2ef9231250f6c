// Unit tests for trainer-webhook's flag parsing.
#include "webhook/options.h"

#include <catch2/catch.hpp>

namespace trainer::webhook {
namespace {

TEST_CASE("defaults match upstream's manager and the brief") {
  auto o = ParseOptions({});
  REQUIRE(o.ok());
  CHECK(o->port == 9443);
  CHECK(o->cert_dir == "/tmp/k8s-webhook-server/serving-certs");
  CHECK(o->metrics_bind_address == ":8080");
  CHECK(o->health_probe_bind_address == ":8081");
  CHECK(o->log_format == "text");
  CHECK(o->verbosity == 0);
  CHECK(o->threads == 16);
}

TEST_CASE("both --flag=value and --flag value, -v and --v") {
  auto o =
      ParseOptions({"--port=10443", "--cert-dir", "/certs", "-v=3", "--log-format=json",
                    "--kubeconfig", "/k", "--metrics-bind-address=0", "--offline-runtimes=a.yaml",
                    "--offline-runtimes", "b.yaml", "--webhook-threads=8"});
  REQUIRE(o.ok());
  CHECK(o->port == 10443);
  CHECK(o->cert_dir == "/certs");
  CHECK(o->verbosity == 3);
  CHECK(o->log_format == "json");
  CHECK(o->kubeconfig == "/k");
  CHECK(o->metrics_bind_address == "0");
  CHECK(o->offline_runtimes == std::vector<std::string>{"a.yaml", "b.yaml"});
  CHECK(o->threads == 8);
  auto v = ParseOptions({"--v", "2"});
  REQUIRE(v.ok());
  CHECK(v->verbosity == 2);
}

TEST_CASE("errors name the flag") {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  std::vector<Case> cases = {
      {{"--port=x"}, "--port: expected an integer, got \"x\""},
      {{"--port=70000"}, "--port: 70000 is out of range [1, 65535]"},
      {{"--log-format=xml"}, "--log-format: expected text or json, got \"xml\""},
      {{"--nope=1"}, "unknown flag \"--nope=1\""},
      {{"--port"}, "flag \"--port\" needs a value"},
      {{"stray"}, "unexpected argument \"stray\""},
  };
  for (const Case& c : cases) {
    auto o = ParseOptions(c.args);
    REQUIRE_FALSE(o.ok());
    CHECK(o.status().message() == c.message);
  }
  auto h = ParseOptions({"--help"});
  REQUIRE(h.ok());
  CHECK(h->help);
}

}  // namespace
}  // namespace trainer::webhook
