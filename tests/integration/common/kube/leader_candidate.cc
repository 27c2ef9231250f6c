// kube-leader-candidate: one leader-election candidate process for the hand-over integration
// test. Prints "LEADING <identity>" when it becomes leader and "STOPPED" when leadership ends;
// SIGTERM stops it cleanly (releasing the Lease).
//   kube-leader-candidate KUBECONFIG NAMESPACE LEASE IDENTITY
#include <csignal>
#include <cstdio>
#include <thread>

#include "common/kube/curl/client.h"
#include "common/leader/elector.h"

namespace {
std::stop_source* g_stop = nullptr;
}

int main(int argc, char** argv) {
  using namespace trainer;
  if (argc != 5) {
    std::fprintf(stderr, "usage: kube-leader-candidate KUBECONFIG NAMESPACE LEASE IDENTITY\n");
    return 2;
  }
  auto cfg = kube::LoadKubeconfig(argv[1]);
  if (!cfg.ok()) return std::fprintf(stderr, "%s\n", cfg.status().ToString().c_str()), 1;
  auto client = kube::CurlClient::New(std::move(*cfg));
  if (!client.ok()) return std::fprintf(stderr, "%s\n", client.status().ToString().c_str()), 1;
  std::stop_source stop;
  g_stop = &stop;
  // request_stop is not async-signal-safe; a watcher thread turns the signal into the stop.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread signals([&] {
    int sig = 0;
    sigwait(&set, &sig);
    g_stop->request_stop();
  });
  signals.detach();
  const std::string identity = argv[4];
  leader::LeaderElector elector(
      **client, {.lease_namespace = argv[2], .lease_name = argv[3], .identity = identity},
      {.on_started_leading =
           [&] {
             std::printf("LEADING %s\n", identity.c_str());
             std::fflush(stdout);
           },
       .on_stopped_leading =
           [] {
             std::printf("STOPPED\n");
             std::fflush(stdout);
           }});
  elector.Run(stop.get_token());
  return 0;
}
