// trainer-controller: reconciles TrainJobs into JobSets and back into status. Parses flags,
// sets up logging and signals, and runs the Manager (controller/manager.h).
#include <malloc.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <stop_token>
#include <thread>

#include "common/log/log.h"
#include "controller/manager.h"
#include "controller/options.h"

int main(int argc, char** argv) {
  using namespace trainer;
  StatusOr<controller::Options> options = controller::ParseOptions(argc, argv);
  if (!options.ok()) {
    std::fprintf(stderr, "trainer-controller: %s\n", options.status().message().c_str());
    return 2;
  }
  if (options->help) {
    std::fputs(controller::Usage().c_str(), stdout);
    return 0;
  }
  // glibc gives threads that allocate at once their own arenas (up to 8 per core) and reuses
  // freed memory only within an arena: the informer and worker threads would each keep the high
  // water mark of their first-list pages. Two arenas hold the steady state with little lock
  // contention at this controller's rates. MALLOC_ARENA_MAX set by the operator wins.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
  log::SetFormat(options->log_format == "json" ? log::Format::kJson : log::Format::kText);
  log::SetVerbosity(options->verbosity);

  // SIGTERM / SIGINT: a graceful stop, handled on a thread (no work in a signal handler).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::stop_source stop;
  std::thread([&stop, signals] {
    int sig = 0;
    sigwait(&signals, &sig);
    log::Info("signal received, shutting down",
              {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
    stop.request_stop();
  }).detach();

  StatusOr<std::unique_ptr<controller::Manager>> manager = controller::Manager::New(*options);
  if (!manager.ok()) {
    log::Error("unable to start", {{"error", manager.status().message()}});
    return 1;
  }
  Status s = (*manager)->Run(stop.get_token());
  if (!s.ok()) {
    log::Error("stopped", {{"error", s.message()}});
    return 1;
  }
  log::Info("stopped");
  return 0;
}
