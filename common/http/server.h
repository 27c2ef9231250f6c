// Server: an HTTP/1.1 server (plain, or TLS with a CertWatcher) on cpp-httplib, configured for
// an admission webhook's traffic pattern: a few long-lived keep-alive connections from the
// kube-apiserver, each carrying thousands of small requests.
//
// What the defaults are and why (measured, see docs/benchmarks-history.md and the cpp-httplib
// notes): TCP_NODELAY (otherwise every response waits ~40 ms on Nagle + delayed ACK); keep-alive of
// 100000 requests / 60 s (httplib's default closes after 5 requests: a TLS handshake every 5
// admissions); a thread pool larger than the expected number of connections, because an idle
// keep-alive connection holds its thread, and more threads are started on demand (up to
// max_threads) so idle or slow clients cannot lock others out; read/write timeouts so a slow
// client cannot hold a thread forever; a body limit; a short busy poll of a keep-alive connection
// after each response (ServerOptions::busy_poll), so the next request needs no wake-up. TLS is 1.2+
// with ECDHE + AES-GCM/CHACHA20 only, and TLS connections run our own loop around httplib's request
// handling, so that each response leaves as one TLS record (httplib's SSLServer sends its head and
// body as two). That loop reads and answers the common requests itself (a POST with a
// Content-Length body, a GET), byte for byte as httplib would, and leaves the rest to httplib
// (server.cc, ParseHead).
//
//   http::Server server({.address = ":9443", .tls = &cert_watcher});
//   server.Post("/validate-x", [](const http::Request& req, http::Response& res) { ... });
//   RETURN_IF_ERROR(server.Start());   // listening when it returns
//   ...
//   server.Stop();                     // stops accepting, finishes in-flight requests, joins
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/status/status.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace trainer::http {

class CertWatcher;

using Request = httplib::Request;
using Response = httplib::Response;
using Handler = std::function<void(const Request&, Response&)>;

// ServerOptions::busy_poll's default, measured (docs/design/webhook.md, "Busy poll").
inline constexpr std::chrono::microseconds kDefaultBusyPoll{50};

struct ServerOptions {
  // "host:port", ":port" (all IPv4 interfaces) or "[v6]:port"; port 0 picks a free port.
  std::string address = ":0";
  // Serve TLS with the watcher's current certificate; plain HTTP when null.
  CertWatcher* tls = nullptr;
  size_t threads = 64;  // kept running; capped at kMaxThreads
  // A connection holds its thread while it is open: threads are added on demand up to this many
  // connections at once (capped at kMaxConnectionThreads); extra ones exit when idle.
  size_t max_threads = 1024;
  size_t max_body_bytes = 7 * 1024 * 1024;
  size_t keep_alive_max_count = 100000;
  // Longer than Go's http.Transport idle timeout (90 s, the kube-apiserver's webhook client):
  // the client must be the side that closes an idle connection, or a request it sends on a
  // connection we just closed fails (POSTs are not retried).
  std::chrono::seconds keep_alive_timeout{120};
  std::chrono::seconds read_timeout{10};
  std::chrono::seconds write_timeout{10};
  // From its first byte, a request (headers and body) must arrive within this long, as Go's
  // ReadHeaderTimeout (32 s in controller-runtime's webhook server); without it a client sending a
  // byte every few seconds keeps its connection, read_timeout being per read.
  std::chrono::seconds request_read_timeout{32};
  // Stop() waits this long for in-flight requests before closing connections.
  std::chrono::seconds drain_timeout{15};
  // After Stop() closed the listener, an idle keep-alive connection stays open this long for
  // one more request, answered with "Connection: close", instead of being closed at once: a
  // client that sends a request just as its idle connection is closed gets an error, and Go's
  // transport (the kube-apiserver's webhook client) retries no POST. Under load every connection
  // carries its last request well within the grace. 0 closes idle connections at once.
  std::chrono::milliseconds stop_idle_grace{0};
  // After a response on a keep-alive connection, poll it without blocking for up to this long
  // (yielding the CPU between checks) before sleeping in poll(): a request arriving within the
  // window is read at once, without the wake-up of a sleeping thread (on a VM, a halted vCPU),
  // which is most of a request's latency on an idle machine. CPU for latency: at most this long
  // per response, and at most BusyPollLimit() threads of the process spin at once (the others
  // sleep at once). No spin while more connections of the process are active than it has CPUs
  // (BusyPollActiveLimit()): their requests queue for a CPU, which a spinning thread would hold.
  // Never while the server stops. 0 disables.
  std::chrono::microseconds busy_poll = kDefaultBusyPoll;
  // A connection counts as active (BusyPollActiveLimit()) from its request until it has been
  // idle this long.
  std::chrono::milliseconds busy_poll_quiet{10};
  // Called for a response with status >= 400 and an empty body (404 unknown path, 413 body too
  // large, ...), to write a body in the server's own format. Optional.
  Handler error_body;
};

namespace internal {
// Whether this thread is answering a request of a Server (its connection loop).
bool Answering();
// Has `clear` called once the response to this thread's request has been written.
void ClearAfterResponse(void (*clear)());
// This thread's values of type T kept by DestroyAfterResponse. A vector per thread and type,
// reused from request to request: keeping a value allocates nothing once it has grown.
template <typename T>
std::vector<T>& Kept() {
  thread_local std::vector<T> kept;
  return kept;
}
}  // namespace internal

// Destroys `value` after the response to the request this thread is handling has been written
// (and before the connection's next request is read); at once when this thread is not answering a
// Server's request (a handler called directly, as in unit tests). For handlers whose request
// leaves a large tree behind: freeing a parsed document costs about half as much as parsing it,
// and the client need not wait for it. The value is moved from either way. (Not from the
// destructor of a value kept so.)
//
//   http::DestroyAfterResponse(std::move(document));
template <typename T>
void DestroyAfterResponse(T&& value) {
  static_assert(!std::is_lvalue_reference_v<T>, "pass an rvalue: the value is taken");
  if (!internal::Answering()) {
    T discard(std::move(value));
    return;
  }
  std::vector<T>& kept = internal::Kept<T>();
  if (kept.empty()) {
    internal::ClearAfterResponse(+[] { internal::Kept<T>().clear(); });
  }
  kept.push_back(std::move(value));
}

// How many threads of this process may busy-poll at once: half the CPUs it may use (cpus.h), at
// least 1 (as Go lets at most GOMAXPROCS/2 Ms spin looking for work), so that many open
// connections never turn into as many spinning threads.
int BusyPollLimit();

// How many connections of this process may be active (ServerOptions::busy_poll_quiet) for a
// busy poll to start: the CPUs it may use. With more, the CPUs are busy serving them (Go's
// runtime likewise spins only while a P is idle).
int BusyPollActiveLimit();

// What a Server's busy polls did (ServerOptions::busy_poll), for tests and diagnostics.
struct BusyPollStats {
  uint64_t hits = 0;     // the connection became readable within the window (a request, or EOF)
  uint64_t misses = 0;   // the window ended first: then the thread slept in poll()
  uint64_t skipped = 0;  // BusyPollLimit() threads were spinning: slept at once
  uint64_t crowded = 0;  // more than BusyPollActiveLimit() connections were active: slept at once
  int spinning = 0;      // threads of this process spinning now (all servers)
  int active = 0;        // active connections of this process now (all servers)
};

inline constexpr size_t kMaxThreads = 512;
inline constexpr size_t kMaxConnectionThreads = 4096;

// Splits a bind address: ":8080" -> {"0.0.0.0", 8080}, "127.0.0.1:0", "[::1]:9443".
struct HostPort {
  std::string host;
  int port = 0;
};
StatusOr<HostPort> ParseBindAddress(std::string_view address);

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();  // Stop()s
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Routes, registered before Start(). `path` is matched exactly.
  void Get(const std::string& path, Handler handler);
  void Post(const std::string& path, Handler handler);
  // Prefix routes: matches `prefix` followed by anything (e.g. "/readyz/" + check name).
  void GetPrefix(const std::string& prefix, Handler handler);
  void PostPrefix(const std::string& prefix, Handler handler);

  // Binds and starts serving on a background thread; the socket is listening when it returns.
  Status Start();
  // The bound port (after Start()).
  int port() const { return port_; }
  bool running() const;
  BusyPollStats busy_poll_stats() const;
  // Graceful: closes the listening socket, lets in-flight requests finish, joins the threads.
  void Stop();

 private:
  struct Routes;

  ServerOptions options_;
  std::unique_ptr<Routes> routes_;
  std::unique_ptr<httplib::Server> impl_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> in_flight_{0};
};

}  // namespace trainer::http
