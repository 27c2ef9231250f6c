// See httplib_seam.h: the members of httplib::Server 0.11.4 this file alone touches.
#include "common/http/httplib_seam.h"

namespace trainer::http::internal {

bool ConnectionServer::ProcessRequest(httplib::Stream& strm, bool close_connection,
                                      bool& connection_closed, SSL* ssl) {
  return process_request(strm, close_connection, connection_closed, [ssl](httplib::Request& req) {
    req.ssl = ssl;
    // Answers go out uncompressed, as from Go's net/http server (upstream's webhook): httplib
    // would gzip every JSON answer for a client sending "Accept-Encoding: gzip", as the
    // kube-apiserver's webhook client does, and deflating a ~170-byte AdmissionReview took more
    // instructions than serving the whole request (and the apiserver then inflates it).
    req.headers.erase("Accept-Encoding");
  });
}

ConnectionLimits ConnectionServer::Limits() const {
  ConnectionLimits l;
  l.read_timeout =
      std::chrono::seconds(read_timeout_sec_) + std::chrono::microseconds(read_timeout_usec_);
  l.write_timeout =
      std::chrono::seconds(write_timeout_sec_) + std::chrono::microseconds(write_timeout_usec_);
  l.keep_alive_timeout = std::chrono::seconds(keep_alive_timeout_sec_);
  l.keep_alive_max_count = keep_alive_max_count_;
  return l;
}

bool ConnectionServer::Listening() const { return svr_sock_ != INVALID_SOCKET; }

}  // namespace trainer::http::internal
