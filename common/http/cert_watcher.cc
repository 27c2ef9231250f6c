// CertWatcher and Certificate (see cert_watcher.h).
#include "common/http/cert_watcher.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <ctime>

#include "common/files/files.h"
#include "common/log/log.h"

namespace trainer::http {
namespace {

std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) {
    return "unknown error";
  }
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

int64_t ToUnix(const ASN1_TIME* t) {
  struct tm tm = {};
  if (ASN1_TIME_to_tm(t, &tm) != 1) {
    return 0;
  }
  return static_cast<int64_t>(timegm(&tm));
}

// Per-handshake hook: present whatever pair is current when the ClientHello arrives.
int SelectCertificate(SSL* ssl, void* arg) {
  auto* watcher = static_cast<CertWatcher*>(arg);
  std::shared_ptr<const Certificate> cert = watcher->Current();
  if (cert == nullptr) {
    return 0;  // no certificate yet: fail the handshake
  }
  return SSL_use_cert_and_key(ssl, cert->leaf(), cert->key(), cert->chain(), 1) == 1 ? 1 : 0;
}

}  // namespace

Certificate::~Certificate() {
  X509_free(leaf_);
  EVP_PKEY_free(key_);
  sk_X509_pop_free(chain_, X509_free);
}

namespace {

// notAfter of the certificate among `ca_pem`'s and the chain's that issued `leaf`; 0 if none.
int64_t IssuerNotAfter(X509* leaf, STACK_OF(X509) * chain, std::string_view ca_pem) {
  int64_t out = 0;
  auto consider = [&](X509* candidate) {
    if (out == 0 && X509_check_issued(candidate, leaf) == X509_V_OK) {
      out = ToUnix(X509_get0_notAfter(candidate));
    }
  };
  BIO* bio = BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size()));
  while (X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    consider(ca);
    X509_free(ca);
  }
  BIO_free(bio);
  ERR_clear_error();  // the loop ends on "no start line"
  for (int i = 0; i < sk_X509_num(chain); ++i) {
    consider(sk_X509_value(chain, i));
  }
  return out;
}

}  // namespace

StatusOr<std::shared_ptr<const Certificate>> Certificate::FromPem(std::string_view cert_pem,
                                                                  std::string_view key_pem,
                                                                  std::string_view ca_pem) {
  std::shared_ptr<Certificate> c(new Certificate());
  ERR_clear_error();
  {
    BIO* bio = BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size()));
    c->leaf_ = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    if (c->leaf_ == nullptr) {
      BIO_free(bio);
      return InvalidArgumentError("parsing certificate: " + OpenSslError());
    }
    c->chain_ = sk_X509_new_null();
    while (X509* extra = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
      sk_X509_push(c->chain_, extra);
    }
    ERR_clear_error();  // the loop ends on "no start line"
    BIO_free(bio);
  }
  {
    BIO* bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
    c->key_ = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    if (c->key_ == nullptr) {
      return InvalidArgumentError("parsing private key: " + OpenSslError());
    }
  }
  if (X509_check_private_key(c->leaf_, c->key_) != 1) {
    return InvalidArgumentError("private key does not match certificate: " + OpenSslError());
  }
  c->not_after_unix_ = ToUnix(X509_get0_notAfter(c->leaf_));
  c->ca_not_after_unix_ = IssuerNotAfter(c->leaf_, c->chain_, ca_pem);
  char name[512];
  X509_NAME_oneline(X509_get_subject_name(c->leaf_), name, sizeof(name));
  c->subject_ = name;
  return std::shared_ptr<const Certificate>(std::move(c));
}

CertWatcher::CertWatcher(CertWatcherOptions options)
    : options_(std::move(options)),
      cert_path_(options_.cert_dir + "/" + options_.cert_name),
      key_path_(options_.cert_dir + "/" + options_.key_name),
      ca_path_(options_.cert_dir + "/" + options_.ca_name) {
  if (options_.registry != nullptr) {
    reads_ =
        &options_.registry
             ->Counter("certwatcher_read_certificate_total", "Total number of certificate reads")
             .Add({});
    read_errors_ = &options_.registry
                        ->Counter("certwatcher_read_certificate_errors_total",
                                  "Total number of certificate read errors")
                        .Add({});
    expiry_ = &options_.registry
                   ->Gauge(options_.expiry_metric,
                           "Expiry time of the serving certificate in seconds since "
                           "the unix epoch (0 until one is loaded).")
                   .Add({});
    if (!options_.ca_expiry_metric.empty()) {
      ca_expiry_ = &options_.registry
                        ->Gauge(options_.ca_expiry_metric,
                                "Expiry time of the CA that signed the serving certificate in "
                                "seconds since the unix epoch (0 while unknown).")
                        .Add({});
    }
  }
}

CertWatcher::~CertWatcher() { Stop(); }

CertWatcher::FileStamp CertWatcher::Stamp(const std::string& path) {
  struct stat st;
  FileStamp s;
  if (stat(path.c_str(), &st) != 0) {
    return s;
  }
  s.ok = true;
  s.dev = st.st_dev;
  s.ino = st.st_ino;
  s.size = st.st_size;
  s.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return s;
}

Status CertWatcher::Load() {
  if (options_.cert_dir.empty()) {
    return FailedPreconditionError("no certificate directory: certificates come through Use()");
  }
  std::lock_guard<std::mutex> load_lock(load_mu_);
  // Stamps first: a change racing with the read shows up at the next poll and reloads again.
  last_cert_stamp_ = Stamp(cert_path_);
  last_key_stamp_ = Stamp(key_path_);
  StatusOr<std::string> cert_pem = files::ReadFile(cert_path_);
  StatusOr<std::string> key_pem =
      cert_pem.ok() ? files::ReadFile(key_path_) : StatusOr<std::string>(cert_pem.status());
  if (!key_pem.ok()) {
    CountRead(key_pem.status());
    return key_pem.status().WithContext("loading serving certificate from " + options_.cert_dir);
  }
  // ca.crt is optional (a provided Secret may hold only the pair): it only feeds the CA metric.
  std::string ca_pem = files::ReadFile(ca_path_).value_or("");
  return Install(*cert_pem, *key_pem, ca_pem, options_.cert_dir);
}

Status CertWatcher::Use(std::string_view cert_pem, std::string_view key_pem,
                        std::string_view ca_pem) {
  std::lock_guard<std::mutex> load_lock(load_mu_);
  return Install(cert_pem, key_pem, ca_pem, "memory");
}

void CertWatcher::CountRead(const Status& s) {
  if (reads_ != nullptr) {
    reads_->Increment();
  }
  if (!s.ok() && read_errors_ != nullptr) {
    read_errors_->Increment();
  }
}

Status CertWatcher::Install(std::string_view cert_pem, std::string_view key_pem,
                            std::string_view ca_pem, const std::string& source) {
  StatusOr<std::shared_ptr<const Certificate>> cert =
      Certificate::FromPem(cert_pem, key_pem, ca_pem);
  CountRead(cert.status());
  if (!cert.ok()) {
    return cert.status().WithContext("loading serving certificate from " + source);
  }
  int64_t not_after = (*cert)->not_after_unix();
  int64_t ca_not_after = (*cert)->ca_not_after_unix();
  std::string subject = (*cert)->subject();
  {
    std::lock_guard<std::mutex> lock(mu_);
    current_ = std::move(cert).value();
  }
  current_loaded_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  if (expiry_ != nullptr) {
    expiry_->Set(static_cast<double>(not_after));
  }
  if (ca_expiry_ != nullptr) {
    ca_expiry_->Set(static_cast<double>(ca_not_after));
  }
  log::Info("loaded serving certificate", {{"source", source},
                                           {"subject", subject},
                                           {"notAfter", std::to_string(not_after)},
                                           {"caNotAfter", std::to_string(ca_not_after)}});
  if (not_after != 0 && not_after < static_cast<int64_t>(std::time(nullptr))) {
    log::Warn("serving certificate has expired", {{"source", source}});
  }
  return OkStatus();
}

std::shared_ptr<const Certificate> CertWatcher::Current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

void CertWatcher::Attach(SSL_CTX* ctx) { SSL_CTX_set_cert_cb(ctx, &SelectCertificate, this); }

void CertWatcher::Start() {
  std::lock_guard<std::mutex> lock(stop_mu_);
  if (poller_.joinable() || options_.cert_dir.empty()) {
    return;
  }
  stopping_ = false;
  poller_ = std::thread([this] { PollLoop(); });
}

void CertWatcher::Stop() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (poller_.joinable()) {
    poller_.join();
  }
}

void CertWatcher::PollLoop() {
  std::unique_lock<std::mutex> lock(stop_mu_);
  while (!stop_cv_.wait_for(lock, options_.poll_interval, [this] { return stopping_; })) {
    lock.unlock();
    FileStamp cert = Stamp(cert_path_);
    FileStamp key = Stamp(key_path_);
    bool changed;
    {
      std::lock_guard<std::mutex> load_lock(load_mu_);
      changed = !(cert == last_cert_stamp_) || !(key == last_key_stamp_);
    }
    if (changed) {
      Status s = Load();
      if (!s.ok()) {
        log::Error("reloading serving certificate failed; keeping the previous one",
                   {{"dir", options_.cert_dir}, {"error", s.message()}});
      }
    }
    lock.lock();
  }
}

}  // namespace trainer::http
