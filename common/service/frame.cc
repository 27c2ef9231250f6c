// Frame (see frame.h).
#include "common/service/frame.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "common/log/log.h"

namespace trainer::service {
namespace {

sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

bool Disabled(const std::string& address) { return address.empty() || address == "0"; }

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& i : items) {
    out += (out.empty() ? "" : ", ") + i;
  }
  return out;
}

}  // namespace

Status ServeUntilStopped::Run(std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, stop, [] { return false; });
  return OkStatus();
}

// The thread that waits for SIGTERM/SIGINT (no work in a signal handler) and requests the stop.
struct Frame::SignalThread {
  std::atomic<bool> done{false};
  std::thread thread;

  explicit SignalThread(std::stop_source stop) {
    thread = std::thread([this, stop]() mutable {
      sigset_t set = StopSignals();
      int sig = 0;
      sigwait(&set, &sig);
      if (done.load()) {
        return;  // woken by the destructor: the service ended on its own
      }
      log::Info("signal received, shutting down",
                {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
      stop.request_stop();
    });
  }
  ~SignalThread() {
    done = true;
    // A thread-directed SIGTERM ends its sigwait; it is blocked everywhere, so nothing else sees
    // it. If a real signal already ended the wait, the thread has returned or is about to.
    pthread_kill(thread.native_handle(), SIGTERM);
    thread.join();
  }
};

Frame::Frame(FrameOptions options)
    : options_(std::move(options)), registry_(metrics::DefaultRegistry()) {
  log::SetFormat(options_.log_format == "json" ? log::Format::kJson : log::Format::kText);
  log::SetVerbosity(options_.verbosity);
  if (std::optional<log::TimeEncoding> t = log::ParseTimeEncoding(options_.zap.time_encoding)) {
    log::SetTimeEncoding(*t);
  }
  // glibc gives threads that allocate at once arenas of their own (up to 8 per core), each
  // keeping its high-water mark: informer and worker threads kept the peak of their first-list
  // pages, and every burst of new apiserver connections to the webhook added arenas (the soak:
  // RSS up by 1-2 MB per burst). Two arenas serve two cores with little contention at our
  // rates. MALLOC_ARENA_MAX set by the operator wins.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) {
    mallopt(M_ARENA_MAX, 2);
  }
  sigset_t set = StopSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  static std::once_flag process_collector;
  std::call_once(process_collector, [this] { metrics::RegisterProcessCollector(registry_); });
  probes_.AddHealthz("healthz", http::Ping);
}

Frame::~Frame() {
  StopServers();
  for (auto& c : certs_) {
    c->Stop();
  }
}

http::Server& Frame::AddServer(std::string name, http::ServerOptions options) {
  servers_.push_back({std::move(name), std::make_unique<http::Server>(std::move(options))});
  ++service_servers_;
  return *servers_.back().server;
}

http::CertWatcher& Frame::AddCertificates(http::CertWatcherOptions options) {
  certs_.push_back(std::make_unique<http::CertWatcher>(std::move(options)));
  http::CertWatcher& certs = *certs_.back();
  if (certs.options().cert_dir.empty()) {
    return certs;  // pairs come through Use()
  }
  if (Status s = certs.Load(); !s.ok()) {
    log::Warn("no serving certificate yet; not ready until one is loaded",
              {{"error", s.message()}});
  }
  certs.Start();
  return certs;
}

const http::Server* Frame::server(std::string_view name) const {
  for (const NamedServer& s : servers_) {
    if (s.name == name) {
      return s.server.get();
    }
  }
  return nullptr;
}

Status Frame::AddMetricsServer() {
  http::ServerOptions so{.address = options_.metrics_bind_address, .threads = 4};
  if (options_.metrics_secure_serving && !options_.metrics_cert_dir.empty()) {
    // Unlike a webhook's, a metrics certificate must load at start: there is no readiness to
    // withhold while waiting for one.
    auto certs = std::make_unique<http::CertWatcher>(
        http::CertWatcherOptions{.cert_dir = options_.metrics_cert_dir});
    RETURN_IF_ERROR(certs->Load().WithContext("metrics certificate"));
    certs->Start();
    so.tls = certs.get();
    certs_.push_back(std::move(certs));
  } else if (options_.metrics_secure_serving) {
    log::Warn("metrics are served over plain HTTP: secure serving needs --metrics-cert-dir",
              {{"address", options_.metrics_bind_address}});
  }
  servers_.push_back({"metrics", std::make_unique<http::Server>(std::move(so))});
  http::MountMetrics(*servers_.back().server, registry_);
  return OkStatus();
}

Status Frame::StartServers() {
  if (!Disabled(options_.health_probe_bind_address)) {
    servers_.push_back(
        {"probe", std::make_unique<http::Server>(http::ServerOptions{
                      .address = options_.health_probe_bind_address, .threads = 4})});
    probes_.Mount(*servers_.back().server);
  }
  if (!Disabled(options_.metrics_bind_address)) {
    RETURN_IF_ERROR(AddMetricsServer());
  }
  for (NamedServer& s : servers_) {
    RETURN_IF_ERROR(s.server->Start().WithContext("starting the " + s.name + " server"));
    log::Info("serving " + s.name, {{"port", std::to_string(s.server->port())}});
  }
  return OkStatus();
}

void Frame::StopServers() {
  // The service's servers in reverse order of adding, then metrics, then probes.
  for (size_t i = service_servers_; i-- > 0;) {
    servers_[i].server->Stop();
  }
  for (size_t i = servers_.size(); i-- > service_servers_;) {
    servers_[i].server->Stop();
  }
}

int Frame::Run(const Factory& make) {
  if (!options_.ignored_config_fields.empty()) {
    log::Info("configuration fields that do not apply to " + options_.program + " are ignored",
              {{"fields", Join(options_.ignored_config_fields)}});
  }
  for (const std::string& capped : options_.capped_config_values) {
    log::Info("a configuration value is capped", {{"value", capped}});
  }
  signals_ = std::make_unique<SignalThread>(stop_);
  StatusOr<std::unique_ptr<Runnable>> service = make(*this);
  Status result = service.status();
  if (result.ok()) {
    result = StartServers();
  }
  if (!result.ok()) {
    log::Error("unable to start", {{"error", result.message()}});
    StopServers();  // before the service they may call into goes
    return 1;
  }
  result = (*service)->Run(stop_.get_token());
  StopServers();
  for (auto& c : certs_) {
    c->Stop();
  }
  service->reset();
  signals_.reset();
  if (!result.ok()) {
    log::Error("stopped", {{"error", result.message()}});
    return 1;
  }
  log::Info("stopped");
  return 0;
}

}  // namespace trainer::service
