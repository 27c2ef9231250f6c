// The cpp-httplib internals common/http relies on (httplib_seam.h), checked one by one: when an
// httplib upgrade moves one of them, this test says which.
#include "common/http/httplib_seam.h"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

namespace trainer::http::internal {
namespace {

// A blocking socket as an httplib::Stream: the least ServeConnection needs.
class SocketStream final : public httplib::Stream {
 public:
  explicit SocketStream(int sock) : sock_(sock) {}
  bool is_readable() const override { return true; }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override { return ::recv(sock_, ptr, size, 0); }
  ssize_t write(const char* ptr, size_t size) override {
    return ::send(sock_, ptr, size, MSG_NOSIGNAL);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 0;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 0;
  }
  socket_t socket() const override { return sock_; }

 private:
  int sock_;
};

// Serves one request per connection through ProcessRequest and records what the seam reported.
class OneRequestServer final : public ConnectionServer {
 public:
  std::atomic<int> connections{0};
  std::atomic<bool> listening_while_serving{false};
  ConnectionLimits limits;

  bool ServeConnection(int sock) override {
    limits = Limits();
    listening_while_serving = Listening();
    ++connections;  // published after the fields above, read first by the test
    SocketStream strm(sock);
    bool closed = false;
    bool ok = ProcessRequest(strm, /*close_connection=*/true, closed, nullptr);
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return ok;
  }
  bool Stopped() const { return !Listening(); }
};

TEST_CASE("the seam was written against the httplib version built with") {
  INFO("httplib_seam.h was written against " << kHttplibSeamVersion << ", built with "
                                             << CPPHTTPLIB_VERSION
                                             << ": re-read the members it names and adapt it");
  CHECK(std::string(CPPHTTPLIB_VERSION) == kHttplibSeamVersion);
}

TEST_CASE("httplib's reason phrases, which the fast path writes, are exported") {
  CHECK(std::string(httplib::detail::status_message(200)) == "OK");
  CHECK(std::string(httplib::detail::status_message(404)) == "Not Found");
  CHECK(std::string(httplib::detail::status_message(500)) == "Internal Server Error");
}

TEST_CASE("httplib hands each accepted socket to ServeConnection, with our settings") {
  OneRequestServer svr;
  svr.Get("/hello", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("hi", "text/plain");
  });
  svr.set_read_timeout(3, 500000);
  svr.set_write_timeout(4, 250);
  svr.set_keep_alive_timeout(7);
  svr.set_keep_alive_max_count(9);
  int port = svr.bind_to_any_port("127.0.0.1");
  REQUIRE(port > 0);
  std::thread t([&] { svr.listen_after_bind(); });
  while (!svr.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  httplib::Client cli("127.0.0.1", port);
  httplib::Result res = cli.Get("/hello");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(res->body == "hi");  // ProcessRequest routed through the server's handlers
  CHECK(svr.connections == 1);
  CHECK(svr.listening_while_serving);
  CHECK(svr.limits.read_timeout == std::chrono::microseconds(3'500'000));
  CHECK(svr.limits.write_timeout == std::chrono::microseconds(4'000'250));
  CHECK(svr.limits.keep_alive_timeout == std::chrono::seconds(7));
  CHECK(svr.limits.keep_alive_max_count == 9);
  CHECK_FALSE(svr.Stopped());

  svr.stop();
  t.join();
  CHECK(svr.Stopped());  // Listening() is false once stop() closed the listening socket
}

}  // namespace
}  // namespace trainer::http::internal
