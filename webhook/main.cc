// trainer-webhook: the admission webhook server of trainer-cpp (upstream serves it from
// cmd/trainer-controller-manager; here it is its own binary so admission scales and restarts
// apart from the controller). This file only parses flags and wires the pieces:
//   certificates (reloaded from --cert-dir) -> HTTPS server on --port with the four webhooks;
//   /healthz, /readyz (certificates loaded, server started, runtime caches synced) on
//   --health-probe-bind-address; /metrics on --metrics-bind-address. SIGTERM/SIGINT stop it
//   gracefully.
#include <malloc.h>
#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/http/cert_watcher.h"
#include "common/http/probes.h"
#include "common/http/server.h"
#include "common/kube/curl/client.h"
#include "common/kube/curl/config.h"
#include "common/log/log.h"
#include "common/metrics/metrics.h"
#include "runtime/api/codec.h"
#include "runtime/api/defaults.h"
#include "runtime/api/manifests.h"
#include "runtime/core/registry.h"
#include "webhook/cluster_reader.h"
#include "webhook/mux.h"
#include "webhook/options.h"
#include "webhook/webhooks.h"

namespace trainer::webhook {
namespace {

// Runtimes from manifest files, defaulted as the apiserver would store them.
StatusOr<std::unique_ptr<ClusterReader>> OfflineReader(const std::vector<std::string>& files) {
  api::Manifests manifests;
  for (const std::string& f : files) {
    std::ifstream in(f);
    if (!in) {
      return NotFoundError("--offline-runtimes: cannot read " + f);
    }
    std::stringstream text;
    text << in.rdbuf();
    Status s = api::DecodeManifestsInto(text.str(), &manifests);
    if (!s.ok()) {
      return s.WithContext(f);
    }
  }
  std::vector<json::Value> objects;
  for (api::TrainingRuntime& rt : manifests.runtimes) {
    if (rt.kind == api::kTrainingRuntimeKind && rt.metadata.namespace_.empty()) {
      rt.metadata.namespace_ = "default";
    }
    api::ApplyRuntimeSchemaDefaults(rt);
    objects.push_back(api::EncodeTrainingRuntime(rt));
  }
  for (json::Value& o : manifests.others) {
    objects.push_back(std::move(o));
  }
  return NewStaticClusterReader(std::move(objects));
}

// A server on `address` unless it is "0" (disabled, as controller-runtime).
std::unique_ptr<http::Server> PlainServer(const std::string& address) {
  if (address == "0" || address.empty()) {
    return nullptr;
  }
  return std::make_unique<http::Server>(http::ServerOptions{.address = address, .threads = 4});
}

int Run(const Options& opts) {
  log::SetFormat(opts.log_format == "json" ? log::Format::kJson : log::Format::kText);
  log::SetVerbosity(opts.verbosity);

  // Block the stop signals in every thread we start; main waits for them below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  metrics::Registry& registry = metrics::DefaultRegistry();
  metrics::RegisterProcessCollector(registry);

  http::CertWatcher certs({.cert_dir = opts.cert_dir, .registry = &registry});
  if (Status s = certs.Load(); !s.ok()) {
    log::Warn("no serving certificate yet; not ready until one is loaded",
              {{"error", s.message()}});
  }
  certs.Start();

  // What the webhooks read from the cluster.
  std::unique_ptr<kube::CurlClient> client;
  std::unique_ptr<ClusterReader> reader;
  if (!opts.offline_runtimes.empty()) {
    StatusOr<std::unique_ptr<ClusterReader>> r = OfflineReader(opts.offline_runtimes);
    if (!r.ok()) {
      log::Error("loading offline runtimes", {{"error", r.status().message()}});
      return 1;
    }
    reader = std::move(r).value();
    log::Info("serving runtimes from files, not from a cluster");
  } else {
    StatusOr<kube::RestConfig> cfg = kube::LoadConfig(opts.kubeconfig);
    if (!cfg.ok()) {
      log::Error("loading kubeconfig", {{"error", cfg.status().message()}});
      return 1;
    }
    StatusOr<std::unique_ptr<kube::CurlClient>> c = kube::CurlClient::New(std::move(cfg).value());
    if (!c.ok()) {
      log::Error("creating the Kubernetes client", {{"error", c.status().message()}});
      return 1;
    }
    client = std::move(c).value();
    reader = NewInformerClusterReader(client.get());
  }
  StatusOr<std::unique_ptr<core::Runtimes>> runtimes = core::Runtimes::New(*reader, NowRfc3339);
  if (!runtimes.ok()) {
    log::Error("building the runtime registry", {{"error", runtimes.status().message()}});
    return 1;
  }

  AdmissionMux mux(&registry);
  RegisterWebhooks(mux, {.runtimes = runtimes->get(), .reader = reader.get()});
  http::ServerOptions server_options = mux.ServerOptions(":" + std::to_string(opts.port), &certs);
  server_options.threads = opts.threads;
  http::Server webhook_server(std::move(server_options));
  mux.Mount(webhook_server);
  if (Status s = webhook_server.Start(); !s.ok()) {
    log::Error("starting the webhook server", {{"error", s.message()}});
    return 1;
  }
  log::Info("serving webhooks",
            {{"port", std::to_string(webhook_server.port())}, {"certDir", opts.cert_dir}});

  http::HealthChecks probes;
  probes.AddHealthz("healthz", http::Ping);
  probes.AddReadyz("readyz", [&] {
    if (!certs.ready()) {
      return UnavailableError("certificates are not ready");
    }
    return webhook_server.running() ? OkStatus() : UnavailableError("webhook server not started");
  });
  probes.AddReadyz("runtime-caches", [&] {
    return reader->HasSynced() ? OkStatus() : UnavailableError("runtime caches not synced");
  });
  std::unique_ptr<http::Server> probe_server = PlainServer(opts.health_probe_bind_address);
  std::unique_ptr<http::Server> metrics_server = PlainServer(opts.metrics_bind_address);
  if (probe_server != nullptr) {
    probes.Mount(*probe_server);
  }
  if (metrics_server != nullptr) {
    http::MountMetrics(*metrics_server, registry);
  }
  using Named = std::pair<http::Server*, const char*>;
  for (const auto& [server, what] :
       {Named{probe_server.get(), "probe"}, Named{metrics_server.get(), "metrics"}}) {
    if (server == nullptr) {
      continue;
    }
    if (Status s = server->Start(); !s.ok()) {
      log::Error(std::string("starting the ") + what + " server", {{"error", s.message()}});
      return 1;
    }
    log::Info(std::string("serving ") + what, {{"port", std::to_string(server->port())}});
  }

  int sig = 0;
  sigwait(&stop_signals, &sig);
  log::Info("stopping", {{"signal", std::to_string(sig)}});
  webhook_server.Stop();
  if (probe_server != nullptr) {
    probe_server->Stop();
  }
  if (metrics_server != nullptr) {
    metrics_server->Stop();
  }
  certs.Stop();
  return 0;
}

}  // namespace
}  // namespace trainer::webhook

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  trainer::StatusOr<trainer::webhook::Options> opts = trainer::webhook::ParseOptions(args);
  if (!opts.ok()) {
    std::cerr << "trainer-webhook: " << opts.status().message() << "\n"
              << trainer::webhook::Usage();
    return 2;
  }
  if (opts->help) {
    std::cout << trainer::webhook::Usage();
    return 0;
  }
  // A connection has a thread of its own, and glibc gives threads that allocate at once arenas
  // of their own (up to 8 per core), each keeping its high-water mark: every burst of new
  // apiserver connections added arenas (the soak: RSS up by 1-2 MB per burst). Two arenas serve
  // two cores; MALLOC_ARENA_MAX set by the operator wins (as in trainer-controller).
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
  return trainer::webhook::Run(*opts);
}
