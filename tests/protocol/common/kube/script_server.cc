// ScriptServer implementation: blocking sockets, one thread per connection.
#include "tests/protocol/common/kube/script_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstring>

namespace trainer::testing {

std::string ScriptServer::Request::Param(std::string_view name) const {
  const size_t q = target.find('?');
  if (q == std::string::npos) return {};
  std::string_view rest = std::string_view(target).substr(q + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    std::string_view kv = rest.substr(0, amp);
    const size_t eq = kv.find('=');
    if (kv.substr(0, eq) == name) {
      return eq == std::string_view::npos ? std::string() : std::string(kv.substr(eq + 1));
    }
    if (amp == std::string_view::npos) break;
    rest.remove_prefix(amp + 1);
  }
  return {};
}

bool ScriptServer::Conn::Write(std::string_view bytes) {
  while (!bytes.empty() && !closed_) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return !closed_;
}

bool ScriptServer::Conn::Chunk(std::string_view data) {
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  std::string out = size;
  out.append(data).append("\r\n");
  return Write(out);
}

void ScriptServer::Conn::Close() {
  if (!closed_) {
    ::shutdown(fd_, SHUT_RDWR);
    closed_ = true;
  }
}

std::string ScriptServer::Response(int code, std::string_view body,
                                   std::string_view extra_headers) {
  std::string out = "HTTP/1.1 " + std::to_string(code) + " X\r\nContent-Type: application/json\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  out.append(extra_headers);
  out += "\r\n";
  out.append(body);
  return out;
}

std::string ScriptServer::ChunkedHead(int code) {
  return "HTTP/1.1 " + std::to_string(code) +
         " X\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
}

std::string ScriptServer::StatusBody(int code, std::string_view reason, std::string_view message) {
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":")" +
         std::string(message) + R"(","reason":")" + std::string(reason) + R"(","code":)" +
         std::to_string(code) + "}";
}

ScriptServer::ScriptServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::listen(listen_fd_, 64);
  socklen_t len = sizeof(addr);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

ScriptServer::~ScriptServer() {
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  ::close(listen_fd_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
  }
  for (std::thread& t : threads_) t.join();
  for (int fd : fds_) ::close(fd);
}

std::vector<ScriptServer::Request> ScriptServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Request> copy = requests_;
  return copy;
}

void ScriptServer::AcceptLoop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    const int ordinal = ++connections_;
    std::lock_guard<std::mutex> lock(mu_);
    fds_.push_back(fd);
    threads_.emplace_back([this, fd, ordinal] { Serve(fd, ordinal); });
  }
}

void ScriptServer::Serve(int fd, int ordinal) {
  std::string buf;
  char tmp[65536];
  while (!stopping_) {
    // Read one request: headers, then Content-Length bytes of body.
    size_t header_end;
    while ((header_end = buf.find("\r\n\r\n")) == std::string::npos) {
      const ssize_t n = ::recv(fd, tmp, sizeof(tmp), 0);
      if (n <= 0) return;
      buf.append(tmp, static_cast<size_t>(n));
    }
    Request req;
    req.connection = ordinal;
    std::string_view head(buf.data(), header_end);
    const size_t line_end = head.find("\r\n");
    std::string_view request_line = head.substr(0, line_end);
    const size_t sp1 = request_line.find(' ');
    const size_t sp2 = request_line.find(' ', sp1 + 1);
    req.method = std::string(request_line.substr(0, sp1));
    req.target = std::string(request_line.substr(sp1 + 1, sp2 - sp1 - 1));
    std::string_view rest = line_end == std::string_view::npos ? "" : head.substr(line_end + 2);
    while (!rest.empty()) {
      const size_t e = rest.find("\r\n");
      std::string_view line = rest.substr(0, e);
      const size_t colon = line.find(':');
      if (colon != std::string_view::npos) {
        std::string name(line.substr(0, colon));
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        req.headers[name] = std::string(value);
      }
      if (e == std::string_view::npos) break;
      rest.remove_prefix(e + 2);
    }
    size_t body_len = 0;
    if (auto it = req.headers.find("content-length"); it != req.headers.end()) {
      body_len = std::stoul(it->second);
    }
    const size_t total = header_end + 4 + body_len;
    while (buf.size() < total) {
      const ssize_t n = ::recv(fd, tmp, sizeof(tmp), 0);
      if (n <= 0) return;
      buf.append(tmp, static_cast<size_t>(n));
    }
    req.body = buf.substr(header_end + 4, body_len);
    buf.erase(0, total);
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(req);
    }
    Conn conn(fd);
    handler_(req, conn);
    if (conn.closed()) return;
  }
}

}  // namespace trainer::testing
