// Health probes and the metrics endpoint for a plain-HTTP Server, as controller-runtime serves
// them: /healthz and /readyz aggregate named checks ("ok", or HTTP 500 with one "[+]name ok" /
// "[-]name failed: reason withheld" line per check), /healthz/<name> runs one check, `?verbose`
// lists the checks on success and `?exclude=<name>` skips one. /metrics serves a Registry in the
// text exposition format.
//
//   http::HealthChecks probes;
//   probes.AddHealthz("healthz", http::Ping);
//   probes.AddReadyz("readyz", [&] { return certs.ready() ? OkStatus()
//                                           : UnavailableError("certificates are not ready"); });
//   http::Server probe_server({.address = ":8081"});
//   probes.Mount(probe_server);
//   http::MountMetrics(metrics_server, metrics::DefaultRegistry());
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/http/server.h"
#include "common/metrics/metrics.h"
#include "common/status/status.h"

namespace trainer::http {

// A check: OK when healthy; the error's message is logged, never served (probes are public).
using Check = std::function<Status()>;

inline Status Ping() { return OkStatus(); }

class HealthChecks {
 public:
  // Thread-safe; checks may be added after Mount().
  void AddHealthz(std::string name, Check check);
  void AddReadyz(std::string name, Check check);
  // What /readyz decides, in process: OK, or the first failing check's error.
  Status Ready() const;

  // Registers /healthz, /healthz/<name>, /readyz, /readyz/<name> on `server` (before Start()).
  // The HealthChecks must outlive the server.
  void Mount(Server& server);

 private:
  struct Named {
    std::string name;
    Check check;
  };
  using List = std::vector<Named>;
  void Serve(const List& list, std::string_view endpoint, const Request& req, Response& res) const;

  mutable std::mutex mu_;
  List healthz_;
  List readyz_;
};

// Registers GET `path` (default /metrics) serving registry.Text().
void MountMetrics(Server& server, metrics::Registry& registry,
                  const std::string& path = "/metrics");

}  // namespace trainer::http
