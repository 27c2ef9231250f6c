// Frame: what every trainer-cpp server process has, so trainer-webhook and trainer-controller are
// two instances of one pattern: logging set up from the flags, allocator tuning, SIGTERM/SIGINT
// turned into a graceful stop, the metrics registry with process metrics, the probe server
// (/healthz, /readyz) and the metrics server (plain HTTP, or TLS from a certificate directory).
// A service adds its own servers (an HTTPS listener: AddServer with a CertWatcher from
// AddCertificates), readiness checks (probes()) and its work (a Runnable); the frame starts and
// stops them in one order:
//
//   start: servers the service added (in order), then the probe and metrics servers, then
//          Runnable::Run on the calling thread until a stop signal (or until it fails);
//   stop:  Run returns (the service drains its own work: in-flight reconciles, the Lease), then
//          the service's servers stop in reverse order (each finishes its in-flight requests),
//          then the metrics server, the probe server (last, so the kubelet sees a live process
//          until it exits) and the certificate watchers.
//
// Exit codes: 0 after a graceful stop; 1 when the service cannot be built, a server cannot start
// or Run fails (e.g. leadership lost: a fresh start campaigns again). Flag errors (exit 2) are
// handled before a Frame exists (common/flags).
//
//   service::Frame frame(options.frame);   // before any thread starts: it blocks the signals
//   return frame.Run([&](service::Frame& f) { return MyService::New(options, f); });
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "common/http/cert_watcher.h"
#include "common/http/probes.h"
#include "common/http/server.h"
#include "common/metrics/metrics.h"
#include "common/status/status.h"

namespace trainer::service {

// What the frame is configured with: flags shared by every service and the upstream
// Configuration fields they map to (common/service/options.h declares and applies them).
struct FrameOptions {
  std::string program;      // "trainer-webhook": the process name in logs
  std::string config_file;  // --config: upstream's Configuration file, "" for none
  // "0" or "" disables a server (as controller-runtime).
  std::string health_probe_bind_address = ":8081";
  std::string metrics_bind_address = ":8080";
  // /metrics over TLS with tls.crt/tls.key from metrics_cert_dir. Secure serving without a
  // directory serves plain HTTP with a warning (controller-runtime would generate a self-signed
  // certificate, which no scraper can verify either).
  bool metrics_secure_serving = false;
  std::string metrics_cert_dir;
  int verbosity = 0;
  // json | text. JSON as upstream's manager writes it (controller-runtime's production mode),
  // so log pipelines set up for upstream keep parsing ours.
  std::string log_format = "json";
  // Upstream's controller-runtime zap flags as given (upstream's manifests pass
  // --zap-log-level): applied to verbosity and log_format where -v and --log-format were not
  // given (LoadConfiguration); the Frame sets the logs' time encoding.
  struct Zap {
    std::optional<int> verbosity;  // --zap-log-level, as a verbosity
    std::string encoder, devel, stacktrace_level, time_encoding;
  } zap;
  // Configuration file fields this service does not use, logged once at start-up.
  std::vector<std::string> ignored_config_fields;
  // Configuration file values this service uses only in part ("field: what is used"), logged
  // once at start-up.
  std::vector<std::string> capped_config_values;
};

// The work of a service. Run blocks until `stop` is requested (then finishes in-flight work and
// returns OK) or the service fails (an error: the process exits 1).
class Runnable {
 public:
  virtual ~Runnable() = default;
  virtual Status Run(std::stop_token stop) = 0;
};

// A Runnable with nothing to do but wait: services whose work is all in their servers.
class ServeUntilStopped final : public Runnable {
 public:
  Status Run(std::stop_token stop) override;
};

class Frame {
 public:
  // Sets up logging and the allocator and blocks SIGTERM and SIGINT in the calling thread, which
  // every thread started later inherits: construct the Frame before starting any thread.
  explicit Frame(FrameOptions options);
  ~Frame();
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;

  const FrameOptions& options() const { return options_; }
  // The process-wide registry (with the process_* collector) the metrics server serves.
  metrics::Registry& registry() { return registry_; }
  // The probe server's checks; "healthz" (a ping) is registered. Add readiness checks here.
  http::HealthChecks& probes() { return probes_; }

  // A server of the service, started by Run before the probe and metrics servers and stopped
  // after the Runnable returns. `name` is for logs ("webhook"). Register routes before Run.
  http::Server& AddServer(std::string name, http::ServerOptions options);
  // A certificate directory, loaded now (a failure is logged: the TLS server then refuses
  // handshakes and the service should report not ready until ready()) and polled for changes
  // until the frame stops. Without a cert_dir the service hands pairs over with Use().
  http::CertWatcher& AddCertificates(http::CertWatcherOptions options);

  // A started server by name ("webhook", "probe", "metrics"), or null: for tests and logs.
  const http::Server* server(std::string_view name) const;

  // Builds the service with `make` (which adds its servers and checks), starts everything, runs
  // it until a stop signal and stops everything in the order above. Returns the exit code.
  using Factory = std::function<StatusOr<std::unique_ptr<Runnable>>(Frame&)>;
  int Run(const Factory& make);

 private:
  struct NamedServer {
    std::string name;
    std::unique_ptr<http::Server> server;
  };
  Status StartServers();
  void StopServers();
  Status AddMetricsServer();
  void WatchSignals();

  const FrameOptions options_;
  metrics::Registry& registry_;
  http::HealthChecks probes_;
  std::vector<NamedServer> servers_;  // the service's, then probes and metrics
  size_t service_servers_ = 0;
  std::vector<std::unique_ptr<http::CertWatcher>> certs_;
  std::stop_source stop_;
  struct SignalThread;
  std::unique_ptr<SignalThread> signals_;
};

}  // namespace trainer::service
