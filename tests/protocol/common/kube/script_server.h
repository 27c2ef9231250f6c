// ScriptServer: a scripted loopback HTTP/1.1 server for protocol tests of the kube client. Each
// request is handed to a test-written handler that writes raw bytes (status line, headers,
// chunks) and may pause, drop the connection mid-body or stay silent: the things a real
// apiserver cannot be made to do on demand. Listens on 127.0.0.1 port 0; keep-alive is honoured
// unless the handler closes.
//
//   ScriptServer server([](const ScriptServer::Request& r, ScriptServer::Conn& c) {
//     c.Write(ScriptServer::Response(200, R"({"kind":"ConfigMap"})"));
//   });
//   RestConfig cfg; cfg.server = server.url();
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace trainer::testing {

class ScriptServer {
 public:
  struct Request {
    std::string method;
    std::string target;                          // path and query
    std::map<std::string, std::string> headers;  // lower-case names
    std::string body;
    int connection = 0;  // ordinal of the TCP connection it arrived on
    // Query parameter value ("" if absent).
    std::string Param(std::string_view name) const;
    std::string Path() const { return target.substr(0, target.find('?')); }
  };

  class Conn {
   public:
    explicit Conn(int fd) : fd_(fd) {}
    bool Write(std::string_view bytes);
    // Writes one chunk of a chunked body.
    bool Chunk(std::string_view data);
    // Closes the connection at once (mid-body if the body is not finished).
    void Close();
    bool closed() const { return closed_; }

   private:
    int fd_;
    bool closed_ = false;
  };

  using Handler = std::function<void(const Request&, Conn&)>;

  explicit ScriptServer(Handler handler);
  ~ScriptServer();

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<Request> requests() const;
  int connections() const { return connections_.load(); }

  // A complete response with Content-Length.
  static std::string Response(int code, std::string_view body, std::string_view extra_headers = "");
  // Status line and headers of a chunked response (write chunks with Conn::Chunk, end with "").
  static std::string ChunkedHead(int code = 200);
  // A metav1.Status error body.
  static std::string StatusBody(int code, std::string_view reason, std::string_view message);

 private:
  void AcceptLoop();
  void Serve(int fd, int ordinal);

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  mutable std::mutex mu_;
  std::vector<Request> requests_;
  std::vector<int> fds_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

}  // namespace trainer::testing
