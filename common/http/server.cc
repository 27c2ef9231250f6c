// Server on cpp-httplib (see server.h). Routing is ours: httplib matches routes with std::regex
// one by one, so each method gets a single catch-all route and we dispatch on an exact-path map.
// The connection loop is ours too; what it needs of httplib's internals goes through
// httplib_seam.h alone.
#include "common/http/server.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <httplib.h>
#include <malloc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "common/http/cert_watcher.h"
#include "common/http/cpus.h"
#include "common/http/httplib_seam.h"
#include "common/log/log.h"

namespace trainer::http {
namespace {

// TLS 1.2 suites: forward secret (ECDHE) with AEAD ciphers only, as Go's and Mozilla's
// "intermediate" profiles. TLS 1.3 suites are all AEAD already.
constexpr char kTls12Ciphers[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
constexpr char kTls13Suites[] =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

bool ConfigureTls(SSL_CTX& ctx, CertWatcher* certs) {
  if (SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION) != 1 ||
      SSL_CTX_set_cipher_list(&ctx, kTls12Ciphers) != 1 ||
      SSL_CTX_set_ciphersuites(&ctx, kTls13Suites) != 1 ||
      SSL_CTX_set1_groups_list(&ctx, "X25519:P-256:P-384") != 1) {
    return false;
  }
  SSL_CTX_set_options(
      &ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  // Read ahead: one read() takes a whole request (its records arrive together) instead of one for
  // each record's 5-byte header and one for its body. Pending() looks at these buffered records.
  SSL_CTX_set_read_ahead(&ctx, 1);
  // No SSL_MODE_RELEASE_BUFFERS: on a keep-alive connection it frees and reallocates the 16 KiB
  // record buffers around every request (and the large allocations make glibc consolidate its
  // fast bins each time); keeping them costs ~34 KiB per open connection.
  certs->Attach(&ctx);
  return true;
}

// Exact paths first, then the longest matching prefix.
class RouteTable {
 public:
  void AddExact(const std::string& path, Handler h) { exact_[path] = std::move(h); }
  void AddPrefix(const std::string& prefix, Handler h) {
    prefixes_.emplace_back(prefix, std::move(h));
  }
  const Handler* Find(const std::string& path) const {
    auto it = exact_.find(path);
    if (it != exact_.end()) {
      return &it->second;
    }
    const Handler* best = nullptr;
    size_t best_len = 0;
    for (const auto& [prefix, handler] : prefixes_) {
      if (path.compare(0, prefix.size(), prefix) == 0 && prefix.size() >= best_len) {
        best = &handler;
        best_len = prefix.size();
      }
    }
    return best;
  }

 private:
  std::map<std::string, Handler, std::less<>> exact_;
  std::vector<std::pair<std::string, Handler>> prefixes_;
};

// The fast path: the requests an admission webhook gets (a POST with a Content-Length body, or a
// GET, over HTTP/1.1) read, routed and answered here, without httplib's request parsing (it reads
// a request a byte at a time through the stream, each header into a case-insensitive map through
// ::tolower) and response writing (a printf per header): together 3/5 of the transport's
// instructions (hack/bench/webhook/server_cost.sh). A request is taken only if httplib would have
// parsed it to the same Request and answered it the same way, byte for byte; anything else
// (percent-encoded targets or queries other than plain key=value pairs, ranges, Expect, chunked
// bodies, bare LF lines, HTTP/1.0, oversized parts, ...) is left in the buffer for httplib's
// process_request.

char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; }

// Header names compare as httplib's detail::ci does (::tolower, the "C" locale).
bool NameIs(std::string_view name, std::string_view want) {
  return name.size() == want.size() &&
         std::equal(name.begin(), name.end(), want.begin(),
                    [](char a, char b) { return AsciiLower(a) == AsciiLower(b); });
}

// Response::has_header by a scan: a response holds a few headers, and the multimap's search
// calls ::tolower for every character it compares.
bool HasHeader(const httplib::Headers& headers, std::string_view name) {
  return std::any_of(headers.begin(), headers.end(),
                     [&](const auto& header) { return NameIs(header.first, name); });
}

// A query of key=value pairs with nothing to decode (the kube-apiserver calls a webhook at
// "<path>?timeout=10s") into `params`, as httplib's parse_query_text would split it; false for any
// other query (empty parts, '+', '%', other characters), left to httplib.
bool ParsePlainQuery(std::string_view query, httplib::Params& params) {
  auto plain = [](std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '-' || c == '.' || c == '_' || c == '~';
    });
  };
  std::vector<std::string_view> seen;  // httplib skips a repeated key=value
  for (size_t at = 0; at <= query.size();) {
    size_t end = std::min(query.find('&', at), query.size());
    std::string_view pair = query.substr(at, end - at);
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos || !plain(pair.substr(0, eq)) || !plain(pair.substr(eq + 1))) {
      return false;
    }
    if (std::find(seen.begin(), seen.end(), pair) == seen.end()) {
      seen.push_back(pair);
      params.emplace(std::string(pair.substr(0, eq)), std::string(pair.substr(eq + 1)));
    }
    at = end + 1;
  }
  return true;
}

struct FastHead {
  size_t size = 0;  // bytes, the blank line's CRLF included
  size_t content_length = 0;
  bool connection_close = false;
};

// Parses the request head at the start of `buf` into `req` (method, target, version, path,
// headers), as httplib 0.11.4's parse_request_line and read_headers would; nullopt if the head
// is not all in `buf` or is not one the fast path takes (then `req` is to be dropped).
std::optional<FastHead> ParseHead(std::string_view buf, size_t max_body, httplib::Request& req) {
  const size_t blank = buf.find("\r\n\r\n");
  if (blank == std::string_view::npos) {
    return std::nullopt;
  }
  FastHead head;
  head.size = blank + 4;
  // Lines end in CRLF; a lone CR or LF, or a NUL (httplib reads lines as C strings), is left to
  // httplib.
  auto plain = [](std::string_view line) {
    return line.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
  };
  size_t eol = buf.find("\r\n");
  std::string_view line = buf.substr(0, eol);
  if (eol + 2 > CPPHTTPLIB_REQUEST_URI_MAX_LENGTH || !plain(line)) {
    return std::nullopt;
  }
  // "METHOD /path HTTP/1.1", single spaces, a path httplib would not decode or split.
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find('\t') != std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const size_t q = target.find('?');
  std::string_view path = target.substr(0, q);
  if ((method != "POST" && method != "GET" && method != "HEAD") ||
      line.substr(sp2 + 1) != "HTTP/1.1" || path.empty() || path[0] != '/' ||
      path.find_first_of(" #%") != std::string_view::npos ||
      (q != std::string_view::npos && !ParsePlainQuery(target.substr(q + 1), req.params))) {
    return std::nullopt;
  }
  req.method = method;
  req.target = target;
  req.version = "HTTP/1.1";
  req.path = path;
  bool have_length = false;
  bool have_connection = false;
  for (size_t at = eol + 2; at < head.size - 2; at = eol + 2) {
    eol = buf.find("\r\n", at);
    line = buf.substr(at, eol - at);
    if (eol + 2 - at > CPPHTTPLIB_HEADER_MAX_LENGTH || !plain(line)) {
      return std::nullopt;
    }
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) {
      line.remove_suffix(1);
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      return std::nullopt;  // httplib skips such a line
    }
    std::string_view name = line.substr(0, colon);
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
      value.remove_prefix(1);
    }
    if (value.empty()) {
      continue;  // httplib drops a header without a value
    }
    if (value.find('%') != std::string_view::npos || NameIs(name, "Transfer-Encoding") ||
        NameIs(name, "Expect") || NameIs(name, "Range")) {
      return std::nullopt;  // decoded, or handled by httplib
    }
    if (NameIs(name, "Accept-Encoding")) {
      continue;  // dropped, as ProcessRequest drops it: answers are never compressed
    }
    if (!have_length && NameIs(name, "Content-Length")) {
      have_length = true;
      auto [end, ec] =
          std::from_chars(value.data(), value.data() + value.size(), head.content_length);
      if (ec != std::errc() || end != value.data() + value.size() ||
          head.content_length > max_body || method != "POST") {
        return std::nullopt;  // httplib's 400 or 413; a GET with a body
      }
    } else if (!have_connection && NameIs(name, "Connection")) {
      have_connection = true;
      head.connection_close = value == "close";
    }
    req.headers.emplace(std::string(name), std::string(value));
  }
  return head;
}

// The answer to a handler's exception (handlers catch their own errors: anything escaping is a
// bug): on httplib's path its exception handler, on the fast path the same.
void AnswerException(const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
  std::string what = "unknown exception";
  try {
    if (ep) {
      std::rethrow_exception(ep);
    }
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  log::Error("http handler threw", {{"path", req.path}, {"error", what}});
  res.status = 500;
  res.set_content("internal server error\n", "text/plain; charset=utf-8");
}

// The largest request body buffer a connection keeps for its next request.
constexpr size_t kKeptBodyBuffer = 64 * 1024;

// What the fast path answers from: the server's routes and settings (Server::Server).
struct FastRoutes {
  const RouteTable* get = nullptr;
  const RouteTable* post = nullptr;
  size_t max_body = 0;
  std::atomic<int>* in_flight = nullptr;
  Handler error_body;
};

// One connection as httplib sees it: TLS through `ssl`, or plain TCP when it is null. Writes are
// buffered and sent as one TLS record (or send()) when the response is complete (Flush) or before
// the next read (a "100 Continue" must reach the client before we wait for the body): httplib
// writes a response's status line and headers, then its body, and over TLS each write is a
// record, a send() and a wakeup of the client; one record per response is measurably cheaper on
// both ends (docs/benchmarks-history.md, webhook). The socket is non-blocking and every wait is a
// poll() with the server's timeouts, so a client that stops halfway through a request cannot hold
// the thread beyond them.
class ConnStream final : public httplib::Stream {
 public:
  ConnStream(int sock, SSL* ssl, std::chrono::microseconds read_timeout,
             std::chrono::microseconds write_timeout)
      : sock_(sock), ssl_(ssl), read_timeout_(read_timeout), write_timeout_(write_timeout) {}

  bool is_readable() const override { return Pending() || Wait(POLLIN, ReadWait()); }
  // Request bytes already received: in our buffer, or in OpenSSL's (decrypted, or records read
  // ahead and not yet decrypted).
  bool Pending() const { return in_pos_ < in_len_ || (ssl_ != nullptr && SSL_has_pending(ssl_)); }
  // A request body's buffer, kept between the connection's requests: a body of 1 KiB and more is
  // a "large" allocation for glibc, which then consolidates its fast bins, each request.
  std::string& body_buffer() { return body_buffer_; }
  // The received request bytes not read yet, and taking `n` of them.
  std::string_view Buffered() const { return {in_ + in_pos_, in_len_ - in_pos_}; }
  void Consume(size_t n) { in_pos_ += std::min(n, in_len_ - in_pos_); }
  // Writes go to the buffer; Flush() reports the socket's state.
  bool is_writable() const override { return !failed_; }

  // httplib reads request lines a byte at a time: serve them from a buffer, not one SSL_read
  // each.
  ssize_t read(char* ptr, size_t size) override {
    if (in_pos_ == in_len_) {
      ssize_t got = Fill();
      if (got <= 0) {
        return got;
      }
    }
    size_t n = std::min(size, in_len_ - in_pos_);
    std::memcpy(ptr, in_ + in_pos_, n);
    in_pos_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t Fill() {
    if (!Flush()) {
      return -1;
    }
    in_pos_ = in_len_ = 0;
    if (DeadlinePassed()) {
      request_timed_out_ = true;
      return -1;
    }
    if (ssl_ == nullptr) {
      return FillPlain();
    }
    for (;;) {
      int got = SSL_read(ssl_, in_, sizeof(in_));
      if (got > 0) {
        in_len_ = static_cast<size_t>(got);
        return got;
      }
      switch (SSL_get_error(ssl_, got)) {
        case SSL_ERROR_WANT_READ:
          if (Wait(POLLIN, ReadWait())) continue;
          request_timed_out_ = DeadlinePassed();
          return -1;
        case SSL_ERROR_WANT_WRITE:
          if (Wait(POLLOUT, write_timeout_)) continue;
          return -1;
        case SSL_ERROR_ZERO_RETURN:
          return 0;
        default:
          failed_ = true;
          return -1;
      }
    }
  }

  ssize_t FillPlain() {
    for (;;) {
      ssize_t got = recv(sock_, in_, sizeof(in_), 0);
      if (got >= 0) {
        in_len_ = static_cast<size_t>(got);
        return got;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (Wait(POLLIN, ReadWait())) continue;
        request_timed_out_ = DeadlinePassed();
        return -1;
      }
      failed_ = true;
      return -1;
    }
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (failed_) {
      return -1;
    }
    out_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }

  // Sends what is buffered; false if the connection failed (then it must be closed).
  bool Flush() {
    if (ssl_ == nullptr) {
      return FlushPlain();
    }
    size_t off = 0;
    while (!failed_ && off < out_.size()) {
      // A retry after WANT_* repeats the same arguments, as SSL_write requires.
      const int n = static_cast<int>(std::min<size_t>(out_.size() - off, INT_MAX));
      int put = SSL_write(ssl_, out_.data() + off, n);
      if (put > 0) {
        off += static_cast<size_t>(put);
        continue;
      }
      int err = SSL_get_error(ssl_, put);
      if (!(err == SSL_ERROR_WANT_WRITE && Wait(POLLOUT, write_timeout_)) &&
          !(err == SSL_ERROR_WANT_READ && Wait(POLLIN, read_timeout_))) {
        failed_ = true;
      }
    }
    out_.clear();
    return !failed_;
  }
  bool FlushPlain() {
    size_t off = 0;
    while (!failed_ && off < out_.size()) {
      ssize_t put = send(sock_, out_.data() + off, out_.size() - off, MSG_NOSIGNAL);
      if (put >= 0) {
        off += static_cast<size_t>(put);
      } else if (errno != EINTR &&
                 !((errno == EAGAIN || errno == EWOULDBLOCK) && Wait(POLLOUT, write_timeout_))) {
        failed_ = true;
      }
    }
    out_.clear();
    return !failed_;
  }
  bool failed() const { return failed_; }

  // Reads of the current request end at `deadline` (none: only the per-read timeout).
  void SetRequestDeadline(std::optional<std::chrono::steady_clock::time_point> deadline) {
    request_deadline_ = deadline;
  }
  // A read ran into the request deadline: httplib answers 400 and would read on.
  bool request_timed_out() const { return request_timed_out_; }

  // httplib asks for both addresses on every request: looked up once per connection (two system
  // calls and two getnameinfo() each time otherwise).
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    if (!remote_.known) remote_ = Address(getpeername);
    ip = remote_.ip;
    port = remote_.port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    if (!local_.known) local_ = Address(getsockname);
    ip = local_.ip;
    port = local_.port;
  }
  socket_t socket() const override { return sock_; }

 private:
  bool DeadlinePassed() const {
    return request_deadline_ && std::chrono::steady_clock::now() >= *request_deadline_;
  }

  // The read timeout, cut short by the request deadline (zero once it has passed).
  std::chrono::microseconds ReadWait() const {
    if (!request_deadline_) {
      return read_timeout_;
    }
    auto left = std::chrono::duration_cast<std::chrono::microseconds>(
        *request_deadline_ - std::chrono::steady_clock::now());
    return std::clamp(left, std::chrono::microseconds(0), read_timeout_);
  }

  bool Wait(short events, std::chrono::microseconds timeout) const {
    if (timeout.count() <= 0) {
      return false;
    }
    pollfd p{sock_, events, 0};
    int ms = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(timeout).count());
    int r;
    do {
      r = poll(&p, 1, ms);
    } while (r < 0 && errno == EINTR);
    return r > 0 && (p.revents & (events | POLLHUP | POLLERR)) != 0;
  }

  struct Endpoint {
    bool known = false;
    std::string ip;  // empty, port 0: the lookup failed (as httplib leaves them)
    int port = 0;
  };
  using NameFn = int (*)(int, sockaddr*, socklen_t*);
  Endpoint Address(NameFn fn) const {
    Endpoint out;
    out.known = true;
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    char host[NI_MAXHOST];
    if (fn(sock_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
        getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof(host), nullptr, 0,
                    NI_NUMERICHOST) != 0) {
      return out;
    }
    out.ip = host;
    out.port = addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                          : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    return out;
  }

  const int sock_;
  SSL* const ssl_;  // null: plain TCP
  const std::chrono::microseconds read_timeout_;
  const std::chrono::microseconds write_timeout_;
  std::string out_;
  char in_[16 * 1024];
  size_t in_pos_ = 0;
  size_t in_len_ = 0;
  bool failed_ = false;
  std::optional<std::chrono::steady_clock::time_point> request_deadline_;
  bool request_timed_out_ = false;
  mutable Endpoint remote_;
  mutable Endpoint local_;
  std::string body_buffer_;
};

// Reads a request body of `length` bytes into `body` (resized to it); false when the connection
// closed or timed out first (the stream's deadlines).
bool ReadBody(ConnStream& strm, size_t length, std::string& body) {
  body.resize(length);
  for (size_t got = 0; got < length;) {
    ssize_t n = strm.read(body.data() + got, length - got);
    if (n <= 0) {
      return false;
    }
    got += static_cast<size_t>(n);
  }
  return true;
}

// Runs the handler `table` has for the request's path, or answers 404.
void RunRoute(const RouteTable& table, const httplib::Request& req, httplib::Response& res) {
  const Handler* h = table.Find(req.path);
  if (h == nullptr) {
    res.status = 404;
    return;
  }
  (*h)(req, res);
}

// httplib's HTTP server with our connection loop (httplib's SSLServer writes each response in
// two records, see ConnStream, and its plain loop has no limit on a whole request's time): a TLS
// handshake within the read timeout (with `certs`), then up to keep_alive_max_count requests,
// each awaited for up to keep_alive_timeout and read within request_read_timeout.
//
// The connection whose request this thread is handling (set by ConnServer::Serve), so that the
// pre-routing handler can read a request's body itself (Server::Server says why).
thread_local ConnStream* current_stream = nullptr;
// What destroys the values the handlers of this thread's request left for after its response
// (DestroyAfterResponse); null outside ConnServer::Serve.
thread_local std::vector<void (*)()>* current_leftovers = nullptr;

// Serve's list of them: run after each response, and when the connection ends.
class Leftovers {
 public:
  Leftovers() { current_leftovers = &clears_; }
  ~Leftovers() {
    Clear();
    current_leftovers = nullptr;
  }
  void Clear() {
    for (size_t i = 0; i < clears_.size(); ++i) {  // by index: a destructor may keep more
      clears_[i]();
    }
    clears_.clear();
  }

 private:
  std::vector<void (*)()> clears_;
};

// Threads of this process in a busy poll now (ConnServer::BusyPoll), all servers together.
std::atomic<int> busy_pollers{0};

// One of the BusyPollLimit() places for a busy poll, while it lives; held() is false when all
// were taken.
class BusyPollPlace {
 public:
  BusyPollPlace() : held_(busy_pollers.fetch_add(1, std::memory_order_acq_rel) < BusyPollLimit()) {
    if (!held_) {
      busy_pollers.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
  ~BusyPollPlace() {
    if (held_) {
      busy_pollers.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
  BusyPollPlace(const BusyPollPlace&) = delete;
  BusyPollPlace& operator=(const BusyPollPlace&) = delete;
  bool held() const { return held_; }

 private:
  const bool held_;
};

// Connections of this process that are active now (ServerOptions::busy_poll_quiet), all
// servers together.
std::atomic<int> active_connections{0};

// Whether one connection counts in active_connections; uncounted when it closes.
class ActiveMark {
 public:
  ActiveMark() = default;
  ~ActiveMark() { Set(false); }
  ActiveMark(const ActiveMark&) = delete;
  ActiveMark& operator=(const ActiveMark&) = delete;
  void Set(bool active) {
    if (active != active_) {
      active_connections.fetch_add(active ? 1 : -1, std::memory_order_acq_rel);
      active_ = active;
    }
  }
  bool active() const { return active_; }

 private:
  bool active_ = false;
};

class ConnServer final : public internal::ConnectionServer {
 public:
  ConnServer(CertWatcher* certs, std::chrono::seconds request_read_timeout,
             std::chrono::milliseconds stop_idle_grace, std::chrono::microseconds busy_poll,
             std::chrono::milliseconds busy_poll_quiet)
      : tls_(certs != nullptr),
        request_read_timeout_(request_read_timeout),
        stop_idle_grace_(stop_idle_grace),
        busy_poll_(busy_poll),
        busy_poll_quiet_(busy_poll_quiet) {
    if (tls_) {
      ctx_ = SSL_CTX_new(TLS_server_method());
    }
    if (ctx_ != nullptr && !ConfigureTls(*ctx_, certs)) {
      SSL_CTX_free(ctx_);
      ctx_ = nullptr;
    }
  }
  ~ConnServer() override {
    if (ctx_ != nullptr) {
      SSL_CTX_free(ctx_);
    }
  }
  bool is_valid() const override { return !tls_ || ctx_ != nullptr; }

  // Stop(): from now, idle connections get stop_idle_grace for a last request.
  void BeginStop() {
    stop_deadline_ns_.store(
        (std::chrono::steady_clock::now() + stop_idle_grace_).time_since_epoch().count(),
        std::memory_order_release);
    stop();
  }
  int open_connections() const { return open_.load(std::memory_order_acquire); }
  BusyPollStats busy_poll_stats() const {
    return {.hits = poll_hits_.load(std::memory_order_relaxed),
            .misses = poll_misses_.load(std::memory_order_relaxed),
            .skipped = poll_skipped_.load(std::memory_order_relaxed),
            .crowded = poll_crowded_.load(std::memory_order_relaxed),
            .spinning = busy_pollers.load(std::memory_order_relaxed),
            .active = active_connections.load(std::memory_order_relaxed)};
  }
  // Before the server starts: answer the requests the fast path takes from `routes`.
  void SetFastRoutes(FastRoutes routes) { fast_ = std::move(routes); }

 private:
  bool ServeConnection(int sock) override {
    open_.fetch_add(1, std::memory_order_acq_rel);
    bool ok = ProcessAndClose(sock);
    open_.fetch_sub(1, std::memory_order_acq_rel);
    return ok;
  }

  bool ProcessAndClose(socket_t sock) {
    const internal::ConnectionLimits limits = Limits();
    const auto read_timeout = limits.read_timeout;
    const auto write_timeout = limits.write_timeout;
    bool ok = false;
    const bool nonblocking = fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK) == 0;
    SSL* ssl = tls_ ? SSL_new(ctx_) : nullptr;
    if (!tls_ && nonblocking) {
      ConnStream strm(sock, nullptr, read_timeout, write_timeout);
      ok = Serve(strm, nullptr, sock);
    } else if (ssl != nullptr && nonblocking && SSL_set_fd(ssl, sock) == 1) {
      ConnStream strm(sock, ssl, read_timeout, write_timeout);
      if (Handshake(ssl, sock, read_timeout)) {
        ok = Serve(strm, ssl, sock);
        if (!strm.failed()) {
          SSL_shutdown(ssl);  // close_notify, best effort (non-blocking)
        }
      }
    }
    if (ssl != nullptr) {
      SSL_free(ssl);
    }
    shutdown(sock, SHUT_RDWR);
    close(sock);
    return ok;
  }

  static bool Handshake(SSL* ssl, int sock, std::chrono::microseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      int r = SSL_accept(ssl);
      if (r == 1) {
        return true;
      }
      int err = SSL_get_error(ssl, r);
      if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) {
        return false;
      }
      auto left =
          std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        return false;
      }
      pollfd p{sock, static_cast<short>(err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), 0};
      if (poll(&p, 1, static_cast<int>(left.count())) < 0 && errno != EINTR) {
        return false;
      }
    }
  }

  // Waits up to keep_alive_timeout for the next request; once the server stops, only until the
  // end of stop_idle_grace. After a response (`answered`), busy-polls first. The connection is
  // `active` from a request until busy_poll_quiet without one.
  bool NextRequest(const ConnStream& strm, int sock, bool answered, ActiveMark& active) {
    if (strm.Pending() || (answered && BusyPoll(sock))) {
      active.Set(true);
      return true;
    }
    const auto now = std::chrono::steady_clock::now();
    auto deadline = now + Limits().keep_alive_timeout;
    const auto quiet_at = now + busy_poll_quiet_;
    for (;;) {
      if (!Listening()) {
        auto stop_deadline = std::chrono::steady_clock::time_point(
            std::chrono::steady_clock::duration(stop_deadline_ns_.load(std::memory_order_acquire)));
        deadline = std::min(deadline, stop_deadline);
      }
      const auto t = std::chrono::steady_clock::now();
      auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - t);
      if (left.count() <= 0) {
        return false;
      }
      int64_t wait_ms = std::min<int64_t>(left.count(), 1000);
      if (active.active()) {
        const auto to_quiet = std::chrono::ceil<std::chrono::milliseconds>(quiet_at - t);
        if (to_quiet.count() <= 0) {
          active.Set(false);
        } else {
          wait_ms = std::min<int64_t>(wait_ms, to_quiet.count());
        }
      }
      pollfd p{sock, POLLIN, 0};
      int r = poll(&p, 1, static_cast<int>(wait_ms));
      if (r > 0) {
        active.Set(true);
        return true;
      }
      if (r < 0 && errno != EINTR) {
        return false;
      }
    }
  }

  // Polls `sock` without blocking for up to busy_poll_ (ServerOptions::busy_poll says why): true
  // once it is readable (a request, or the client closing). The thread yields between checks, so
  // that runnable threads (the client's, other connections') run first. At most BusyPollLimit()
  // threads spin at once, and none while more than BusyPollActiveLimit() connections are active:
  // the others sleep at once, as do those of a stopping server.
  bool BusyPoll(int sock) {
    if (busy_poll_.count() <= 0 || !Listening()) {
      return false;
    }
    if (active_connections.load(std::memory_order_acquire) > BusyPollActiveLimit()) {
      poll_crowded_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    BusyPollPlace place;
    if (!place.held()) {
      poll_skipped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    const auto end = std::chrono::steady_clock::now() + busy_poll_;
    for (;;) {
      pollfd p{sock, POLLIN, 0};
      const int r = poll(&p, 1, 0);
      if (r > 0) {
        poll_hits_.fetch_add(1, std::memory_order_relaxed);
        return true;
      }
      if ((r < 0 && errno != EINTR) || std::chrono::steady_clock::now() >= end || !Listening()) {
        break;  // an error is the blocking poll's to report
      }
      sched_yield();
    }
    poll_misses_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }

  bool Serve(ConnStream& strm, SSL* ssl, int sock) {
    bool ok = false;
    const internal::ConnectionLimits limits = Limits();
    // httplib's Keep-Alive header value ("timeout=60, max=100000"), made once per connection.
    const std::string keep_alive = "timeout=" + std::to_string(limits.keep_alive_timeout.count()) +
                                   ", max=" + std::to_string(limits.keep_alive_max_count);
    Leftovers leftovers;
    ActiveMark active;
    const size_t max_count = limits.keep_alive_max_count;
    for (size_t left = max_count; left > 0 && NextRequest(strm, sock, left < max_count, active);
         --left) {
      bool connection_closed = false;
      const bool close_connection = left == 1 || !Listening();
      // From its first byte a request has request_read_timeout to arrive whole, as Go's
      // ReadHeaderTimeout: a client trickling bytes within the read timeout cannot hold the
      // connection and its thread forever.
      strm.SetRequestDeadline(std::chrono::steady_clock::now() + request_read_timeout_);
      if (!ServeFast(strm, close_connection, keep_alive, ssl, connection_closed, ok)) {
        current_stream = &strm;
        ok = ProcessRequest(strm, close_connection, connection_closed, ssl);
        current_stream = nullptr;
      }
      strm.SetRequestDeadline(std::nullopt);
      ok = strm.Flush() && ok;
      leftovers.Clear();  // the answer is out: the client reads it while we clean up
      // After a timed-out request httplib has answered 400 and would read on: the rest of that
      // request must not be taken for another one.
      if (!ok || connection_closed || strm.request_timed_out()) {
        break;
      }
    }
    return ok;
  }

  // Answers the next request on the fast path (see ParseHead) and sets `ok` as ProcessRequest
  // would; false (nothing read or written) leaves it to httplib.
  bool ServeFast(ConnStream& strm, bool close_connection, const std::string& keep_alive, SSL* ssl,
                 bool& connection_closed, bool& ok) {
    if (fast_.get == nullptr) {
      return false;
    }
    if (strm.Buffered().empty() && strm.Fill() <= 0) {
      ok = false;  // closed or timed out before a request, as httplib's first getline()
      return true;
    }
    httplib::Request req;
    httplib::Response res;
    if (!Answer(strm, close_connection, keep_alive, ssl, connection_closed, req, res, ok)) {
      return false;
    }
    fast_.in_flight->fetch_sub(1, std::memory_order_relaxed);
    if (req.body.capacity() <= kKeptBodyBuffer) {
      req.body.clear();
      strm.body_buffer().swap(req.body);
    }
    return true;
  }

  // What the client waits for: the request parsed, routed, answered and sent (`ok`: sent). The
  // request and the response are destroyed after it, while the client reads the answer. Not
  // inlined, so that callgrind counts it apart (hack/bench/webhook/server_cost.sh).
  [[gnu::noinline]] bool Answer(ConnStream& strm, bool close_connection,
                                const std::string& keep_alive, SSL* ssl, bool& connection_closed,
                                httplib::Request& req, httplib::Response& res, bool& ok) {
    std::optional<FastHead> head = ParseHead(strm.Buffered(), fast_.max_body, req);
    if (!head) {
      return false;
    }
    strm.Consume(head->size);
    connection_closed = connection_closed || head->connection_close;
    // The rest of the Request as httplib's process_request sets it (set_header, less its check for
    // CR and LF, which addresses and numbers never hold).
    static const std::string kRemoteAddr = "REMOTE_ADDR", kRemotePort = "REMOTE_PORT",
                             kLocalAddr = "LOCAL_ADDR", kLocalPort = "LOCAL_PORT";
    strm.get_remote_ip_and_port(req.remote_addr, req.remote_port);
    req.headers.emplace(kRemoteAddr, req.remote_addr);
    req.headers.emplace(kRemotePort, std::to_string(req.remote_port));
    strm.get_local_ip_and_port(req.local_addr, req.local_port);
    req.headers.emplace(kLocalAddr, req.local_addr);
    req.headers.emplace(kLocalPort, std::to_string(req.local_port));
    req.ssl = ssl;
    res.version = "HTTP/1.1";
    fast_.in_flight->fetch_add(1, std::memory_order_relaxed);
    try {
      Route(strm, head->content_length, req, res);
    } catch (...) {
      AnswerException(req, res, std::current_exception());
    }
    if (res.status == -1) {
      res.status = 200;
    }
    WriteResponse(strm, close_connection || head->connection_close, keep_alive, req, res);
    ok = strm.Flush();
    return true;
  }

  // Reads the body and runs the route's handler (a 404 without one).
  void Route(ConnStream& strm, size_t content_length, httplib::Request& req,
             httplib::Response& res) const {
    if (content_length > 0) {
      req.body.swap(strm.body_buffer());
      if (!ReadBody(strm, content_length, req.body)) {
        res.status = 400;  // the connection ends
        return;
      }
    }
    RunRoute(req.method == "POST" ? *fast_.post : *fast_.get, req, res);
  }

  // httplib 0.11.4's write_response_core for what the fast path answers (a body in memory, no
  // ranges, no compression, no post-routing handler or default headers): the same headers in the
  // same order (the multimap's), the same bytes, written to the stream's buffer in one piece.
  void WriteResponse(ConnStream& strm, bool close_connection, const std::string& keep_alive,
                     const httplib::Request& req, httplib::Response& res) const {
    static const std::string kConnection = "Connection", kClose = "close",
                             kKeepAlive = "Keep-Alive", kContentType = "Content-Type",
                             kTextPlain = "text/plain", kContentLength = "Content-Length",
                             kZero = "0", kAcceptRanges = "Accept-Ranges", kBytes = "bytes";
    if (res.status >= 400 && fast_.error_body && res.body.empty()) {
      fast_.error_body(req, res);  // the error handler Server::Server sets on httplib
    }
    // set_header's emplace, less its check for CR and LF: these names and values hold none.
    if (!res.body.empty()) {
      res.headers.emplace(kContentLength, std::to_string(res.body.size()));  // apply_ranges
    }
    if (close_connection) {
      res.headers.emplace(kConnection, kClose);
    } else {
      res.headers.emplace(kKeepAlive, keep_alive);
    }
    if (!res.body.empty() && !HasHeader(res.headers, kContentType)) {
      res.headers.emplace(kContentType, kTextPlain);
    }
    if (res.body.empty() && !HasHeader(res.headers, kContentLength)) {
      res.headers.emplace(kContentLength, kZero);
    }
    const bool head = req.method == "HEAD";
    if (head && !HasHeader(res.headers, kAcceptRanges)) {
      res.headers.emplace(kAcceptRanges, kBytes);
    }
    std::string out;
    out.reserve(256 + (head ? 0 : res.body.size()));
    out += "HTTP/1.1 ";
    out += std::to_string(res.status);
    out += ' ';
    out += httplib::detail::status_message(res.status);
    out += "\r\n";
    for (const auto& [name, value] : res.headers) {
      out += name.c_str();  // "%s: %s\r\n": up to a NUL, as httplib's printf
      out += ": ";
      out += value.c_str();
      out += "\r\n";
    }
    out += "\r\n";
    if (!head) {
      out += res.body;
    }
    strm.write(out.data(), out.size());
  }

  const bool tls_;
  SSL_CTX* ctx_ = nullptr;
  FastRoutes fast_;
  const std::chrono::seconds request_read_timeout_;
  const std::chrono::milliseconds stop_idle_grace_;
  const std::chrono::microseconds busy_poll_;
  const std::chrono::milliseconds busy_poll_quiet_;
  std::atomic<uint64_t> poll_hits_{0};
  std::atomic<uint64_t> poll_misses_{0};
  std::atomic<uint64_t> poll_skipped_{0};
  std::atomic<uint64_t> poll_crowded_{0};
  // steady_clock ticks; 0 (the epoch, long past) until BeginStop: a stopped server's idle
  // connections end at once unless BeginStop set a grace.
  std::atomic<int64_t> stop_deadline_ns_{0};
  std::atomic<int> open_{0};
};

// Reuse the address across restarts, but no SO_REUSEPORT (httplib's default): two servers on
// one port must be an error, not a silent split of the traffic.
void SocketOptions(socket_t sock) {
  int yes = 1;
  setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
}

// httplib's keep-alive wait does not watch for stop(): an idle connection would hold its thread
// (and Stop()) for the whole keep-alive timeout. Like Go's Server.Shutdown closing idle
// connections, end the read side of every connection accepted on `port`: they see EOF and
// close. (A response cannot be written after this: httplib checks the socket is readable-alive
// before writing, hence the drain first.) httplib does not expose its accepted sockets, so they
// are found in /proc/self/fd. Worker threads close sockets concurrently and a number can be
// reused at once, so each candidate is dup()ed first and checked and shut down through the
// duplicate: whatever the number meant by then, we act only on a socket we verified.
void ShutdownReads(int port) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) {
    return;
  }
  const int self = dirfd(dir);
  while (struct dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.' || std::atoi(e->d_name) == self) {
      continue;
    }
    int fd = fcntl(std::atoi(e->d_name), F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
      continue;  // closed meanwhile
    }
    struct stat st;
    sockaddr_storage local{}, peer{};
    socklen_t local_len = sizeof(local), peer_len = sizeof(peer);
    if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) == 0 &&
        getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) == 0) {
      int local_port = -1;
      if (local.ss_family == AF_INET) {
        local_port = ntohs(reinterpret_cast<sockaddr_in*>(&local)->sin_port);
      } else if (local.ss_family == AF_INET6) {
        local_port = ntohs(reinterpret_cast<sockaddr_in6*>(&local)->sin6_port);
      }
      if (local_port == port) {
        shutdown(fd, SHUT_RD);
      }
    }
    close(fd);
  }
  closedir(dir);
}

// Runs each accepted connection on a thread of its own, up to `max` at once, as Go's server
// runs a goroutine per connection. httplib keeps a connection on one thread for its whole life
// (TLS handshake, the wait for its first request, keep-alive), so with httplib's fixed pool as
// many idle or slow clients as there are threads lock every other client out (measured by
// tests/chaos/hostile_clients.py: 80 silent TCP connections made 64 threads time out new
// handshakes). `keep` threads stay; threads above it exit after kSpareIdle without work.
class ConnectionPool final : public httplib::TaskQueue {
 public:
  ConnectionPool(size_t keep, size_t max) : keep_(keep), max_(std::max(keep, max)) {}
  ~ConnectionPool() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    std::list<std::thread> done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(std::move(fn));
      // Every waiting thread takes one job; spawn when the jobs outnumber them.
      if (jobs_.size() > idle_ && threads_.size() < max_) {
        Spawn();
      }
      done.swap(finished_);
    }
    cv_.notify_one();
    for (std::thread& t : done) {
      t.join();
    }
  }

  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (;;) {
      std::list<std::thread> batch;
      {
        std::lock_guard<std::mutex> lock(mu_);
        batch.swap(threads_);
        batch.splice(batch.end(), finished_);
      }
      if (batch.empty()) {
        return;
      }
      for (std::thread& t : batch) {
        t.join();
      }
    }
  }

 private:
  static constexpr std::chrono::seconds kSpareIdle{30};

  // Under mu_. The thread's own list node lets it retire itself into finished_.
  void Spawn() {
    threads_.emplace_back();
    auto self = std::prev(threads_.end());
    *self = std::thread([this, self] { Work(self); });
  }

  void Work(std::list<std::thread>::iterator self) {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      ++idle_;
      const bool woken = cv_.wait_for(lock, kSpareIdle, [this] { return stop_ || !jobs_.empty(); });
      --idle_;
      if (!jobs_.empty()) {
        std::function<void()> fn = std::move(jobs_.front());
        jobs_.pop_front();
        lock.unlock();
        fn();
        fn = nullptr;
        lock.lock();
        continue;
      }
      if (stop_) {
        return;  // shutdown() joins it
      }
      if (!woken && threads_.size() > keep_) {
        finished_.splice(finished_.end(), threads_, self);
        const bool last_spare = threads_.size() == keep_;
        lock.unlock();
        // A burst's connections are gone: give their memory (TLS buffers, request bodies) back
        // to the system, or glibc keeps it as free heap and RSS stays at the burst's high-water
        // mark (the soak: +1-2 MB per burst of 40 admissions).
        if (last_spare) malloc_trim(0);
        return;  // the next enqueue() or shutdown() joins it
      }
    }
  }

  const size_t keep_;
  const size_t max_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::list<std::function<void()>> jobs_;
  std::list<std::thread> threads_;
  std::list<std::thread> finished_;
  size_t idle_ = 0;
  bool stop_ = false;
};

}  // namespace

namespace internal {

bool Answering() { return current_leftovers != nullptr; }

void ClearAfterResponse(void (*clear)()) {
  if (current_leftovers != nullptr) {
    current_leftovers->push_back(clear);
  } else {
    clear();
  }
}

}  // namespace internal

int BusyPollLimit() { return std::max(1, UsableCpus() / 2); }

int BusyPollActiveLimit() { return UsableCpus(); }

StatusOr<HostPort> ParseBindAddress(std::string_view address) {
  HostPort out;
  size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) {
    return InvalidArgumentError("bind address \"" + std::string(address) +
                                "\": expected host:port or :port");
  }
  std::string_view host = address.substr(0, colon);
  std::string_view port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  out.host = host.empty() ? "0.0.0.0" : std::string(host);
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), out.port);
  if (ec != std::errc() || ptr != port.data() + port.size() || out.port < 0 || out.port > 65535) {
    return InvalidArgumentError("bind address \"" + std::string(address) + "\": bad port");
  }
  return out;
}

struct Server::Routes {
  RouteTable get;
  RouteTable post;
};

namespace {

// Answers a request from the route tables before httplib's routing, when that is safe: a GET or
// HEAD without a body, or a POST with a Content-Length body within `max_body`, which is read
// here (httplib reads bodies after pre-routing). False leaves the request to httplib (chunked
// bodies, oversized ones for its 413, other methods), which routes through the same tables.
bool DispatchEarly(const RouteTable& get, const RouteTable& post, size_t max_body,
                   const httplib::Request& req, httplib::Response& res) {
  // httplib takes header names as std::string: made once, not per request ("Transfer-Encoding"
  // is past the inline capacity of a std::string, so each call allocated).
  static const std::string kTransferEncoding = "Transfer-Encoding";
  static const std::string kContentLength = "Content-Length";
  ConnStream* strm = current_stream;
  if (strm == nullptr || req.has_header(kTransferEncoding)) return false;
  const RouteTable* table = nullptr;
  size_t length = 0;
  if (req.method == "POST") {
    table = &post;
    if (req.has_header(kContentLength)) {
      const std::string text = req.get_header_value(kContentLength);
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), length);
      if (ec != std::errc() || end != text.data() + text.size() || length > max_body) {
        return false;
      }
    }
  } else if ((req.method == "GET" || req.method == "HEAD") && !req.has_header(kContentLength)) {
    table = &get;
  } else {
    return false;
  }
  // The Request is httplib's own, not const; only the handler's signature is.
  if (length > 0 && !ReadBody(*strm, length, const_cast<httplib::Request&>(req).body)) {
    res.status = 400;  // the connection ends
    return true;
  }
  RunRoute(*table, req, res);
  return true;
}

}  // namespace

Server::Server(ServerOptions options)
    : options_(std::move(options)), routes_(std::make_unique<Routes>()) {
  options_.threads = std::clamp<size_t>(options_.threads, 1, kMaxThreads);
  impl_ = std::make_unique<ConnServer>(options_.tls, options_.request_read_timeout,
                                       options_.stop_idle_grace, options_.busy_poll,
                                       options_.busy_poll_quiet);
  const size_t threads = options_.threads;
  const size_t max_threads =
      std::clamp<size_t>(options_.max_threads, threads, kMaxConnectionThreads);
  impl_->new_task_queue = [threads, max_threads] {
    return new ConnectionPool(threads, max_threads);
  };
  impl_->set_tcp_nodelay(true);
  impl_->set_socket_options(SocketOptions);
  impl_->set_keep_alive_max_count(options_.keep_alive_max_count);
  impl_->set_keep_alive_timeout(options_.keep_alive_timeout.count());
  impl_->set_read_timeout(options_.read_timeout.count(), 0);
  impl_->set_write_timeout(options_.write_timeout.count(), 0);
  impl_->set_payload_max_length(options_.max_body_bytes);

  // One regex route per method ("match anything"), dispatched through our tables.
  auto dispatch = [](const RouteTable& table) {
    return [&table](const httplib::Request& req, httplib::Response& res) {
      RunRoute(table, req, res);
    };
  };
  // httplib answers a request it cannot parse (400, 414) with the logger but without the
  // pre-routing handler: only requests counted in are counted out. Both run on the connection's
  // thread, one request after the other.
  static thread_local bool counted = false;
  // Requests between "headers parsed" and "response written", so Stop() can drain them before
  // it ends idle connections (the logger runs after the response is written). Requests are
  // answered here when DispatchEarly can: httplib's routes are std::regex patterns, and matching
  // even ".*" was 13% of an admission request's instructions (callgrind, docs/benchmarks.md).
  impl_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    in_flight_.fetch_add(1, std::memory_order_relaxed);
    counted = true;
    return DispatchEarly(routes_->get, routes_->post, options_.max_body_bytes, req, res)
               ? httplib::Server::HandlerResponse::Handled
               : httplib::Server::HandlerResponse::Unhandled;
  });
  static_cast<ConnServer&>(*impl_).SetFastRoutes({.get = &routes_->get,
                                                  .post = &routes_->post,
                                                  .max_body = options_.max_body_bytes,
                                                  .in_flight = &in_flight_,
                                                  .error_body = options_.error_body});
  impl_->set_logger([this](const httplib::Request&, const httplib::Response&) {
    if (!std::exchange(counted, false)) return;
    in_flight_.fetch_sub(1, std::memory_order_relaxed);
  });
  impl_->Get(".*", dispatch(routes_->get));
  impl_->Post(".*", dispatch(routes_->post));

  Handler error_body = options_.error_body;
  impl_->set_error_handler(httplib::Server::HandlerWithResponse(
      [error_body](const httplib::Request& req, httplib::Response& res) {
        if (error_body && res.body.empty()) {
          error_body(req, res);
        }
        return res.body.empty() ? httplib::Server::HandlerResponse::Unhandled
                                : httplib::Server::HandlerResponse::Handled;
      }));
  // The last line of defence: handlers catch their own errors; anything escaping is a bug.
  impl_->set_exception_handler(AnswerException);
}

Server::~Server() { Stop(); }

void Server::Get(const std::string& path, Handler handler) {
  routes_->get.AddExact(path, std::move(handler));
}

void Server::Post(const std::string& path, Handler handler) {
  routes_->post.AddExact(path, std::move(handler));
}

void Server::GetPrefix(const std::string& prefix, Handler handler) {
  routes_->get.AddPrefix(prefix, std::move(handler));
}

void Server::PostPrefix(const std::string& prefix, Handler handler) {
  routes_->post.AddPrefix(prefix, std::move(handler));
}

Status Server::Start() {
  if (thread_.joinable()) {
    return FailedPreconditionError("http server already started");
  }
  if (!impl_->is_valid()) {
    return InternalError("http server: TLS context setup failed");
  }
  ASSIGN_OR_RETURN(HostPort hp, ParseBindAddress(options_.address));
  if (hp.port == 0) {
    port_ = impl_->bind_to_any_port(hp.host);
    if (port_ < 0) {
      port_ = 0;
    }
  } else if (impl_->bind_to_port(hp.host, hp.port)) {
    port_ = hp.port;
  }
  if (port_ == 0) {
    return UnavailableError("http server: cannot listen on " + options_.address);
  }
  auto done = std::make_shared<std::atomic<bool>>(false);
  thread_ = std::thread([this, done] {
    impl_->listen_after_bind();
    done->store(true);
  });
  // httplib's stop() is a no-op until the accept loop has started: wait for it so a Stop()
  // right after Start() cannot leave the loop running forever.
  while (!impl_->is_running() && !done->load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (done->load()) {
    thread_.join();
    return UnavailableError("http server on " + options_.address + " stopped at start");
  }
  return OkStatus();
}

bool Server::running() const { return impl_->is_running(); }

BusyPollStats Server::busy_poll_stats() const {
  return static_cast<const ConnServer&>(*impl_).busy_poll_stats();
}

void Server::Stop() {
  if (!thread_.joinable()) {
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  // impl_ is always the ConnServer the constructor made.
  auto& conn = static_cast<ConnServer&>(*impl_);
  conn.BeginStop();
  // In-flight requests finish (their connections then close, the listener being gone); idle
  // keep-alive connections take one more request within stop_idle_grace (their connection loop
  // notices the stop within a second); what is still open then is told to close.
  const auto deadline = start + options_.drain_timeout;
  while (in_flight_.load(std::memory_order_relaxed) > 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (options_.stop_idle_grace.count() > 0) {
    const auto idle_deadline = start + options_.stop_idle_grace + std::chrono::milliseconds(1100);
    while (conn.open_connections() > 0 && std::chrono::steady_clock::now() < idle_deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ShutdownReads(port_);
  thread_.join();
}

}  // namespace trainer::http
