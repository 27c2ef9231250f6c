// CertWatcher: the serving certificate of a TLS server, read from a directory and reloaded
// without a restart when the files change (what controller-runtime's certwatcher does for
// upstream's webhook server).
//
// Kubernetes updates a Secret volume by an atomic swap of the `..data` symlink, so the watcher
// polls stat() (which follows the symlinks) of `tls.crt` and `tls.key` and reloads when the
// device, inode, size or mtime of either changes. A new pair that does not parse, or whose key
// does not match its certificate, is rejected with a log line and an error count; the previous
// pair keeps serving. The TLS server asks Current() at every handshake (see Attach), so
// connections opened after a reload get the new certificate and open ones are not disturbed.
// A pair can also be handed over from memory (Use), checked and counted the same way: the
// built-in certificate rotator reads the Secret through the API and serves its pair so.
//
//   http::CertWatcher certs({.cert_dir = "/tmp/k8s-webhook-server/serving-certs"});
//   RETURN_IF_ERROR(certs.Load());   // first load: callers decide whether to start without one
//   certs.Start();                   // background polling
//   bool ready = certs.ready();
//   certs.Use(cert_pem, key_pem, ca_pem);   // or a pair from memory (no cert_dir needed)
#pragma once

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/metrics/metrics.h"
#include "common/status/status.h"

namespace trainer::http {

// A parsed certificate (leaf + chain) and its private key. Immutable once built.
class Certificate {
 public:
  // Parses PEM text: the first certificate is the leaf, any further ones its chain. `ca_pem`
  // (optional, one or more CA certificates) only tells ca_not_after_unix().
  static StatusOr<std::shared_ptr<const Certificate>> FromPem(std::string_view cert_pem,
                                                              std::string_view key_pem,
                                                              std::string_view ca_pem = "");
  ~Certificate();
  Certificate(const Certificate&) = delete;
  Certificate& operator=(const Certificate&) = delete;

  X509* leaf() const { return leaf_; }
  EVP_PKEY* key() const { return key_; }
  STACK_OF(X509) * chain() const { return chain_; }
  int64_t not_after_unix() const { return not_after_unix_; }
  // notAfter of the CA (from `ca_pem` or the chain) that issued the leaf; 0 when none did.
  int64_t ca_not_after_unix() const { return ca_not_after_unix_; }
  const std::string& subject() const { return subject_; }

 private:
  Certificate() = default;
  X509* leaf_ = nullptr;
  EVP_PKEY* key_ = nullptr;
  STACK_OF(X509) * chain_ = nullptr;
  int64_t not_after_unix_ = 0;
  int64_t ca_not_after_unix_ = 0;
  std::string subject_;
};

struct CertWatcherOptions {
  // Where tls.crt and tls.key are read and polled. Empty: no files; pairs come only through
  // Use() (the built-in certificate rotator, certs/rotator.h).
  std::string cert_dir;
  std::string cert_name = "tls.crt";
  std::string key_name = "tls.key";
  // Read with the pair when present (a Secret of cert-manager or of the built-in rotator has
  // it); it only feeds `ca_expiry_metric`.
  std::string ca_name = "ca.crt";
  std::chrono::milliseconds poll_interval{1000};
  // When set: certwatcher_read_certificate_total / _errors_total (controller-runtime's names),
  // a gauge `expiry_metric` with the leaf's notAfter in unix seconds, and a gauge
  // `ca_expiry_metric` (unless empty) with the notAfter of the CA that issued it (0 if unknown).
  metrics::Registry* registry = nullptr;
  std::string expiry_metric = "trainer_webhook_certificate_expiry_timestamp_seconds";
  std::string ca_expiry_metric = "trainer_webhook_ca_expiry_timestamp_seconds";
};

class CertWatcher {
 public:
  explicit CertWatcher(CertWatcherOptions options);
  ~CertWatcher();  // Stop()s
  CertWatcher(const CertWatcher&) = delete;
  CertWatcher& operator=(const CertWatcher&) = delete;

  // Reads the files now. On success the new pair serves new handshakes; on failure the previous
  // pair (if any) stays and the error says why.
  Status Load();
  // The same for a pair held in memory (`ca_pem` optional, for the CA metric): checked and
  // counted as a file read is.
  Status Use(std::string_view cert_pem, std::string_view key_pem, std::string_view ca_pem = "");
  // Starts the polling thread (idempotent; nothing to poll without a cert_dir). Stop() joins it.
  void Start();
  void Stop();

  const CertWatcherOptions& options() const { return options_; }
  // A valid pair is loaded.
  bool ready() const { return current_loaded_.load(std::memory_order_acquire); }
  // The pair serving new handshakes; null before the first successful Load().
  std::shared_ptr<const Certificate> Current() const;
  // Successful loads so far (tests wait on it across a rotation).
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  // Makes `ctx` (a server context) present Current() at every handshake; a handshake fails
  // while nothing is loaded. The watcher must outlive `ctx`.
  void Attach(SSL_CTX* ctx);

 private:
  struct FileStamp {
    bool ok = false;
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const FileStamp&) const = default;
  };
  static FileStamp Stamp(const std::string& path);
  void PollLoop();
  void CountRead(const Status& s);
  // Parses, counts and (when valid) serves a pair; load_mu_ held. `source` names it in logs.
  Status Install(std::string_view cert_pem, std::string_view key_pem, std::string_view ca_pem,
                 const std::string& source);

  const CertWatcherOptions options_;
  const std::string cert_path_;
  const std::string key_path_;
  const std::string ca_path_;

  mutable std::mutex mu_;
  std::shared_ptr<const Certificate> current_;
  std::atomic<bool> current_loaded_{false};
  std::atomic<uint64_t> generation_{0};
  FileStamp last_cert_stamp_, last_key_stamp_;  // guarded by load_mu_
  std::mutex load_mu_;

  prometheus::Counter* reads_ = nullptr;
  prometheus::Counter* read_errors_ = nullptr;
  prometheus::Gauge* expiry_ = nullptr;
  prometheus::Gauge* ca_expiry_ = nullptr;

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread poller_;
};

}  // namespace trainer::http
