// The one place trainer-cpp reaches into cpp-httplib's internals (everything else in common/http
// uses its public API: Stream, TaskQueue, handlers, options).
//
// Written against cpp-httplib 0.11.4, Debian bookworm's libcpp-httplib-dev (0.11.4+ds-1+deb12u1).
// It relies on these non-public parts of httplib::Server, which another version may change:
//   - the private virtual process_and_close_socket(sock), called on a task-queue thread for each
//     accepted socket: overridden here, so the connection loop (TLS, keep-alive, deadlines) is
//     ours (ConnectionServer::ServeConnection);
//   - the protected process_request(strm, close_connection, connection_closed, setup_request):
//     httplib's read-route-respond of one request (ProcessRequest);
//   - the protected settings keep_alive_max_count_, keep_alive_timeout_sec_, read_timeout_*,
//     write_timeout_* (Limits) and svr_sock_, INVALID_SOCKET once stop() ran (Listening);
//   - httplib::detail::status_message, exported by libcpp-httplib but not declared by its header
//     (declared below), and the bytes process_request reads and writes, which server.cc's fast
//     path reproduces (tests/unit/common/http/server_test.cc compares the two).
// tests/unit/common/http/httplib_seam_test.cc checks each of them and the version; when it fails
// after an httplib upgrade, re-read those members in the new httplib.h and adapt this file only.
#pragma once

#include <httplib.h>
#include <openssl/ssl.h>

#include <chrono>
#include <cstddef>

namespace httplib::detail {
// The reason phrase httplib writes for a status ("Not Found").
const char* status_message(int status);
}  // namespace httplib::detail

namespace trainer::http::internal {

// The version this seam was written and tested against.
inline constexpr char kHttplibSeamVersion[] = "0.11.4";

// The connection settings of httplib's set_read_timeout, set_write_timeout,
// set_keep_alive_timeout and set_keep_alive_max_count.
struct ConnectionLimits {
  std::chrono::microseconds read_timeout{0};
  std::chrono::microseconds write_timeout{0};
  std::chrono::seconds keep_alive_timeout{0};
  size_t keep_alive_max_count = 0;
};

// An httplib::Server whose accepted connections are served by ServeConnection.
class ConnectionServer : public httplib::Server {
 protected:
  // Serves the accepted socket `sock` for its whole life and closes it; true when the last
  // request was answered.
  virtual bool ServeConnection(int sock) = 0;

  // Reads one request from `strm`, routes it through this server's handlers and writes the
  // response; `ssl` is set as the request's ssl (null for plain HTTP) and its Accept-Encoding
  // header is dropped before routing, so answers are never compressed. connection_closed is set
  // when the request or response ended the connection (Connection: close).
  bool ProcessRequest(httplib::Stream& strm, bool close_connection, bool& connection_closed,
                      SSL* ssl);

  ConnectionLimits Limits() const;

  // False once stop() closed the listening socket.
  bool Listening() const;

 private:
  bool process_and_close_socket(socket_t sock) final { return ServeConnection(sock); }
};

}  // namespace trainer::http::internal
