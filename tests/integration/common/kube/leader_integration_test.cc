// Integration test: leader election hand-over between two processes on a real Lease. A clean
// shutdown releases the Lease and the standby takes over within one retry period (well inside
// the 15 s lease duration); a killed leader's Lease is respected until it expires.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include "common/files/files.h"
#include "common/kube/meta.h"
#include "tests/integration/common/kube/testbed_client.h"

extern char** environ;

namespace trainer::kube {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct Candidate {
  pid_t pid = 0;
  std::string log;
};

Candidate Spawn(const std::string& ns, const std::string& identity) {
  const char* bin_dir = std::getenv("TRAINER_BIN_DIR");
  REQUIRE(bin_dir != nullptr);
  Candidate c;
  c.log = "/tmp/kube-leader-" + std::to_string(::getpid()) + "-" + identity + ".log";
  const std::string bin = std::string(bin_dir) + "/kube-leader-candidate";
  const std::string kubeconfig = testbed::Kubeconfig();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, c.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (c.log + ".err").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> args = {bin, kubeconfig, ns, "trainer-test-lease", identity};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  REQUIRE(posix_spawn(&c.pid, bin.c_str(), &actions, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  return c;
}

bool Leading(const Candidate& c) {
  StatusOr<std::string> log = files::ReadFile(c.log);
  return log.ok() && log->find("LEADING") != std::string::npos;
}

void StopAndWait(Candidate& c, int sig) {
  if (c.pid == 0) return;
  ::kill(c.pid, sig);
  int status = 0;
  ::waitpid(c.pid, &status, 0);
  c.pid = 0;
}

std::string Holder(Client& client, const std::string& ns) {
  auto lease = client.Get(kLeases, ns, "trainer-test-lease");
  if (!lease.ok()) return "<none>";
  return testbed::Str(*lease, {"spec", "holderIdentity"});
}

TEST_CASE("leader hand-over between two processes", "[integration][leader]") {
  auto client = testbed::NewClient();
  testbed::TempNamespace ns(*client, "kube-leader");
  Candidate a = Spawn(ns.name(), "candidate-a");
  REQUIRE(testbed::Eventually([&] { return Leading(a); }, 20s));
  CHECK(Holder(*client, ns.name()) == "candidate-a");

  Candidate b = Spawn(ns.name(), "candidate-b");
  std::this_thread::sleep_for(4s);
  CHECK_FALSE(Leading(b));  // a renews; b stays standby

  // Clean shutdown: a releases, b takes over well within the 15 s lease duration.
  const auto released = Clock::now();
  StopAndWait(a, SIGTERM);
  REQUIRE(testbed::Eventually([&] { return Leading(b); }, 15s));
  const auto handover = Clock::now() - released;
  CHECK(handover < 15s);
  CHECK(Holder(*client, ns.name()) == "candidate-b");
  std::printf("clean hand-over took %.1f s\n", std::chrono::duration<double>(handover).count());

  // A killed leader cannot release: the next candidate must wait the lease out, then takes it.
  StopAndWait(b, SIGKILL);
  const auto killed = Clock::now();
  Candidate c = Spawn(ns.name(), "candidate-c");
  REQUIRE(testbed::Eventually([&] { return Leading(c); }, 30s));
  const auto takeover = Clock::now() - killed;
  CHECK(takeover >= 14s);  // never before the lease (15 s, observed on c's clock) expired
  CHECK(takeover < 25s);
  CHECK(Holder(*client, ns.name()) == "candidate-c");
  std::printf("take-over after kill took %.1f s\n",
              std::chrono::duration<double>(takeover).count());
  StopAndWait(c, SIGTERM);
  CHECK(Holder(*client, ns.name()) == "<absent>");  // released: holderIdentity cleared
}

}  // namespace
}  // namespace trainer::kube
