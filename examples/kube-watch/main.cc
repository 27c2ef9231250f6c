// kube-watch: lists and watches ConfigMaps with trainer-cpp's Kubernetes client, printing one
// line per event. A small end-to-end check of config loading, the REST client, the informer and
// its watch: `kube-watch --kubeconfig $TESTBED_DIR/kubeconfig --namespace default`.
//
// Flags: --kubeconfig PATH, --context NAME, --namespace NS (default: the context's; "" = all),
//        --selector LABELS, --max-events N (exit 0 after N events), --timeout SECONDS (exit 1
//        when reached first).
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "common/informer/informer.h"
#include "common/kube/curl/client.h"
#include "common/kube/meta.h"
#include "common/kube/rest_mapper.h"

namespace {

std::atomic<bool> g_interrupted{false};

struct Flags {
  std::string kubeconfig, context, selector;
  std::optional<std::string> ns;
  int max_events = 0;
  int timeout_seconds = 0;
};

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--kubeconfig") {
      if (!value(&f->kubeconfig)) return false;
    } else if (a == "--context") {
      if (!value(&f->context)) return false;
    } else if (a == "--namespace" || a == "-n") {
      if (!value(&v)) return false;
      f->ns = v;
    } else if (a == "--selector" || a == "-l") {
      if (!value(&f->selector)) return false;
    } else if (a == "--max-events") {
      if (!value(&v)) return false;
      f->max_events = std::atoi(v.c_str());
    } else if (a == "--timeout") {
      if (!value(&v)) return false;
      f->timeout_seconds = std::atoi(v.c_str());
    } else {
      std::fprintf(stderr, "kube-watch: unknown flag %s\n", a.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace trainer;
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) return 2;
  StatusOr<kube::RestConfig> cfg = kube::LoadConfig(flags.kubeconfig, flags.context);
  if (!cfg.ok()) {
    std::fprintf(stderr, "kube-watch: %s\n", cfg.status().ToString().c_str());
    return 1;
  }
  const std::string ns = flags.ns.value_or(cfg->default_namespace);
  StatusOr<std::unique_ptr<kube::CurlClient>> client = kube::CurlClient::New(std::move(*cfg));
  if (!client.ok()) {
    std::fprintf(stderr, "kube-watch: %s\n", client.status().ToString().c_str());
    return 1;
  }
  std::signal(SIGINT, [](int) { g_interrupted = true; });
  std::signal(SIGTERM, [](int) { g_interrupted = true; });

  std::atomic<int> events{0};
  auto print = [&](const char* what, const json::Value& cm) {
    std::printf("%s %s rv=%s\n", what, kube::ObjectKeyOf(cm).c_str(),
                std::string(kube::ResourceVersion(cm)).c_str());
    std::fflush(stdout);
    ++events;
  };
  informer::Informer inf(
      **client,
      {.gvr = kube::kConfigMaps, .ns = ns, .label_selector = flags.selector, .name = "kube-watch"});
  inf.AddEventHandler({
      .on_add = [&](const json::Value& o) { print("ADDED", o); },
      .on_update = [&](const json::Value&, const json::Value& o) { print("MODIFIED", o); },
      .on_delete = [&](const json::Value& o) { print("DELETED", o); },
  });
  inf.Start();
  if (!inf.WaitForSync(std::chrono::seconds(60))) {
    std::fprintf(stderr, "kube-watch: cache did not sync within 60s\n");
    return 1;
  }
  std::printf("SYNCED %zu configmaps rv=%s\n", inf.store().size(),
              inf.LastSyncResourceVersion().c_str());
  std::fflush(stdout);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(flags.timeout_seconds);
  while (!g_interrupted) {
    if (flags.max_events > 0 && events.load() >= flags.max_events) return 0;
    if (flags.timeout_seconds > 0 && std::chrono::steady_clock::now() >= deadline) {
      std::fprintf(stderr, "kube-watch: timed out after %d events\n", events.load());
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}
