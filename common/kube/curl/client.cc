// CurlClient implementation.
#include "common/kube/curl/client.h"

#include <curl/curl.h>
#include <strings.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <new>
#include <random>
#include <thread>

#include "common/kube/api_error.h"
#include "common/kube/list_decoder.h"
#include "common/kube/meta.h"
#include "common/kube/watch_decoder.h"

namespace trainer::kube {
namespace {

using SteadyClock = std::chrono::steady_clock;

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_ALL); });
}

size_t AppendBody(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

// Body bytes of a request with a sink: a 2xx answer's go to the sink, others to the body (an
// error Status object).
struct SinkState {
  CURL* curl;
  const std::function<Status(std::string_view)>* sink;
  std::string* body;
  bool* sank;
  Status* error;
  long code = 0;
};

size_t ToSink(char* data, size_t size, size_t n, void* user) {
  auto* st = static_cast<SinkState*>(user);
  const size_t len = size * n;
  if (st->code == 0) curl_easy_getinfo(st->curl, CURLINFO_RESPONSE_CODE, &st->code);
  if (st->code < 200 || st->code >= 300) {
    st->body->append(data, len);
    return len;
  }
  *st->sank = true;
  *st->error = (*st->sink)(std::string_view(data, len));
  return st->error->ok() ? len : 0;  // 0 aborts the transfer
}

// Collects the Retry-After header of the final response (headers of interim responses are
// dropped when the next status line arrives).
size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* retry_after = static_cast<std::optional<double>*>(user);
  std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) {
    retry_after->reset();
  } else if (line.size() > 12 && strncasecmp(line.data(), "retry-after:", 12) == 0) {
    *retry_after = ParseRetryAfter(line.substr(12));
  }
  return size * n;
}

bool IsConnectFailure(CURLcode rc) {
  // The request never reached the server, so repeating it cannot double an effect.
  return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
         rc == CURLE_COULDNT_RESOLVE_PROXY || rc == CURLE_SSL_CONNECT_ERROR;
}

void SetBlob(CURL* curl, CURLoption option, const std::string& data) {
  curl_blob blob{const_cast<char*>(data.data()), data.size(), CURL_BLOB_COPY};
  curl_easy_setopt(curl, option, &blob);
}

class Query {
 public:
  void Add(std::string_view key, std::string_view value) {
    if (value.empty()) return;
    q_ += q_.empty() ? '?' : '&';
    q_.append(key).append("=").append(UrlEncode(value));
  }
  const std::string& str() const { return q_; }

 private:
  std::string q_;
};

}  // namespace

std::string UrlEncode(std::string_view s) {
  // libcurl ignores the handle (since 7.82; before, only EBCDIC builds used it).
  char* escaped = curl_easy_escape(nullptr, s.data(), static_cast<int>(s.size()));
  if (escaped == nullptr) {
    throw std::bad_alloc();  // curl_easy_escape fails only when out of memory
  }
  std::string out(escaped);
  curl_free(escaped);
  return out;
}

std::string ResourcePath(const GroupVersionResource& gvr, std::string_view ns,
                         std::string_view name, std::string_view subresource) {
  std::string p =
      gvr.group.empty() ? "/api/" + gvr.version : "/apis/" + gvr.group + "/" + gvr.version;
  if (!ns.empty()) p.append("/namespaces/").append(UrlEncode(ns));
  p.append("/").append(gvr.resource);
  if (!name.empty()) p.append("/").append(UrlEncode(name));
  if (!subresource.empty()) p.append("/").append(subresource);
  return p;
}

struct CurlClient::Shared {
  CURLSH* share = nullptr;
  std::mutex locks[CURL_LOCK_DATA_LAST];

  static void Lock(CURL*, curl_lock_data data, curl_lock_access, void* self) {
    static_cast<Shared*>(self)->locks[data].lock();
  }
  static void Unlock(CURL*, curl_lock_data data, void* self) {
    static_cast<Shared*>(self)->locks[data].unlock();
  }
  ~Shared() {
    if (share != nullptr) curl_share_cleanup(share);
  }
};

CurlClient::CurlClient(RestConfig config, ClientOptions options)
    : config_(std::move(config)),
      options_(std::move(options)),
      shared_(std::make_unique<Shared>()),
      // client-go turns a burst of 0 into its DefaultBurst (10); the bucket alone would make it 1.
      limiter_(options_.qps, options_.burst > 0 ? options_.burst : 10) {}

StatusOr<std::unique_ptr<CurlClient>> CurlClient::New(RestConfig config, ClientOptions options) {
  if (config.server.empty()) return InvalidArgumentError("kube client: no server in config");
  std::unique_ptr<CurlClient> client(new CurlClient(std::move(config), std::move(options)));
  RETURN_IF_ERROR(client->Init());
  return client;
}

Status CurlClient::Init() {
  GlobalInit();
  curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
  if (info->version_num < 0x074700) {  // 7.71: *_BLOB options
    return FailedPreconditionError("kube client: libcurl >= 7.71 required, have " +
                                   std::string(info->version));
  }
  shared_->share = curl_share_init();
  if (shared_->share == nullptr) return InternalError("kube client: curl_share_init failed");
  curl_share_setopt(shared_->share, CURLSHOPT_LOCKFUNC, &Shared::Lock);
  curl_share_setopt(shared_->share, CURLSHOPT_UNLOCKFUNC, &Shared::Unlock);
  curl_share_setopt(shared_->share, CURLSHOPT_USERDATA, shared_.get());
  // Not CURL_LOCK_DATA_CONNECT: libcurl's shared connection cache is not safe across threads.
  curl_share_setopt(shared_->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  curl_share_setopt(shared_->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  if (!config_.token_file.empty()) token_file_ = std::make_unique<TokenFile>(config_.token_file);
  return OkStatus();
}

CurlClient::~CurlClient() {
  for (void* h : pool_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* CurlClient::NewHandle() {
  CURL* curl = curl_easy_init();
  if (curl != nullptr) SetSharedOptions(curl);
  return curl;
}

void* CurlClient::AcquireHandle() {
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (!pool_.empty()) {
      void* h = pool_.back();
      pool_.pop_back();
      return h;  // its live connection, and its shared options
    }
  }
  return NewHandle();
}

void CurlClient::ReleaseHandle(void* h) {
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (pool_.size() < options_.max_idle_connections) {
      pool_.push_back(h);
      return;
    }
  }
  curl_easy_cleanup(static_cast<CURL*>(h));  // closes its connection
}

size_t CurlClient::idle_connections() const {
  std::lock_guard<std::mutex> lock(pool_mu_);
  return pool_.size();
}

// Set once per handle: nothing here changes between requests (the RestConfig is immutable; the
// one credential that rotates, a token file, goes into each request's headers). Copying the CA
// and client certificate blobs and re-applying every option per request showed in profiles.
void CurlClient::SetSharedOptions(void* handle) {
  CURL* curl = static_cast<CURL*>(handle);
  curl_easy_setopt(curl, CURLOPT_SHARE, shared_->share);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPIDLE,
                   static_cast<long>(options_.tcp_keepalive_idle.count()));
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPINTVL,
                   static_cast<long>(options_.tcp_keepalive_interval.count()));
  curl_easy_setopt(curl, CURLOPT_HTTP_VERSION,
                   options_.http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // gzip for large lists
  if (config_.insecure_skip_tls_verify) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (!config_.ca_pem.empty()) {
    SetBlob(curl, CURLOPT_CAINFO_BLOB, config_.ca_pem);
  } else if (!config_.ca_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_CAINFO, config_.ca_file.c_str());
  }
  if (!config_.client_cert_pem.empty()) {
    SetBlob(curl, CURLOPT_SSLCERT_BLOB, config_.client_cert_pem);
    curl_easy_setopt(curl, CURLOPT_SSLCERTTYPE, "PEM");
    SetBlob(curl, CURLOPT_SSLKEY_BLOB, config_.client_key_pem);
    curl_easy_setopt(curl, CURLOPT_SSLKEYTYPE, "PEM");
  }
  if (!config_.username.empty()) {
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(curl, CURLOPT_USERNAME, config_.username.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, config_.password.c_str());
  }
}

Status CurlClient::Configure(void* handle, const std::string& path, void** header_list,
                             std::string_view content_type) {
  CURL* curl = static_cast<CURL*>(handle);
  const std::string url = config_.server + path;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_slist* headers = nullptr;
  // JSON everywhere; the service-account issuer's /openid/v1/jwks answers 406 unless its own
  // media type is acceptable.
  headers = curl_slist_append(headers, "Accept: application/json, application/jwk-set+json");
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  if (!content_type.empty()) {
    headers = curl_slist_append(headers, ("Content-Type: " + std::string(content_type)).c_str());
  }
  std::string token = config_.bearer_token;
  if (token_file_ != nullptr) {
    StatusOr<std::string> t = token_file_->Token();
    if (!t.ok()) {
      curl_slist_free_all(headers);
      return t.status();
    }
    token = std::move(*t);
  }
  if (!token.empty()) {
    headers = curl_slist_append(headers, ("Authorization: Bearer " + token).c_str());
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  *header_list = headers;
  return OkStatus();
}

// A pooled handle keeps the previous request's method: every request sets its own. HTTPGET first,
// since POSTFIELDS switches the handle to POST and CUSTOMREQUEST names the verb sent.
void CurlClient::SetMethod(void* handle, const Request& req) {
  CURL* curl = static_cast<CURL*>(handle);
  curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  if (!req.body.empty() || req.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, req.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  }
  const bool custom = req.method != "GET" && req.method != "POST";
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, custom ? req.method.c_str() : nullptr);
}

Status CurlClient::DoOnce(const Request& req, Response* resp, bool* sent_maybe) {
  CURL* curl = static_cast<CURL*>(AcquireHandle());
  if (curl == nullptr) return InternalError("kube client: curl_easy_init failed");
  void* headers = nullptr;
  Status configured = Configure(curl, req.path, &headers, req.content_type);
  if (!configured.ok()) {
    ReleaseHandle(curl);
    *sent_maybe = false;
    return configured;
  }
  SetMethod(curl, req);
  const auto timeout = req.kind == Kind::kList    ? options_.list_timeout
                       : req.kind == Kind::kWrite ? options_.write_timeout
                                                  : options_.read_timeout;
  SinkState sink{curl, &req.sink, &resp->body, &resp->sank, &resp->sink_error};
  if (req.sink) {
    // A streamed answer may take long in all; what must not happen is a stall.
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 0L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME,
                     std::max(1L, static_cast<long>(timeout.count() / 1000)));
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &ToSink);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  } else {
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &AppendBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &resp->body);
  }
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &resp->retry_after);
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);

  const CURLcode rc = curl_easy_perform(curl);
  requests_sent_.fetch_add(1);
  long connects = 0;
  curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &connects);
  connections_opened_.fetch_add(static_cast<uint64_t>(connects));
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &resp->code);
  // The handle must not keep pointers into this frame once it is back in the pool.
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, nullptr);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(-1));
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 0L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 0L);
  curl_slist_free_all(static_cast<curl_slist*>(headers));
  ReleaseHandle(curl);
  if (!resp->sink_error.ok()) return resp->sink_error;
  if (rc != CURLE_OK) {
    *sent_maybe = !IsConnectFailure(rc);
    Status s = rc == CURLE_OPERATION_TIMEDOUT ? DeadlineExceededError("") : UnavailableError("");
    return Status(s.code(), req.method + " " + config_.server + req.path + ": " +
                                curl_easy_strerror(rc) + (errbuf[0] ? ": " : "") + errbuf);
  }
  return OkStatus();
}

StatusOr<CurlClient::Response> CurlClient::Do(const Request& req) {
  // Built on the first retry: almost every request succeeds at once, and seeding a backoff from
  // std::random_device on every request was a visible share of the controller's CPU.
  std::optional<flowcontrol::Backoff> backoff;
  auto next_delay = [&] {
    if (!backoff) {
      backoff.emplace(options_.retry_backoff, seed_.fetch_add(1) ^ std::random_device{}());
    }
    return backoff->Next(SteadyClock::now());
  };
  bool reauthenticated = false;
  for (int attempt = 0;; ++attempt) {
    limiter_.Wait();
    Response resp;
    bool sent_maybe = true;
    Status transport = DoOnce(req, &resp, &sent_maybe);
    // The sink already took part of the answer: a retry would hand it over twice.
    if (resp.sank && !transport.ok()) return transport;
    std::optional<SteadyClock::duration> retry_in;
    Status final_status;
    if (!transport.ok()) {
      final_status = transport;
      if (transport.code() == StatusCode::kUnavailable ||
          transport.code() == StatusCode::kDeadlineExceeded) {
        if (!sent_maybe || req.idempotent) retry_in = next_delay();
      }
    } else if (resp.code >= 200 && resp.code < 300) {
      return resp;
    } else {
      final_status = StatusFromResponse(static_cast<int>(resp.code), resp.body, resp.retry_after);
      if (resp.code == 401 && token_file_ != nullptr && !reauthenticated) {
        // The token may have rotated since we last read it.
        token_file_->Invalidate();
        reauthenticated = true;
        retry_in = SteadyClock::duration::zero();
      } else if (resp.code == 429 || (resp.code >= 500 && resp.retry_after)) {
        if (resp.retry_after) {
          if (*resp.retry_after > options_.max_retry_after.count()) return final_status;
          retry_in = std::chrono::duration_cast<SteadyClock::duration>(
              std::chrono::duration<double>(*resp.retry_after));
        } else {
          retry_in = next_delay();
        }
      } else if ((resp.code == 502 || resp.code == 503 || resp.code == 504) && req.idempotent) {
        retry_in = next_delay();
      }
    }
    if (!retry_in || attempt >= options_.max_retries) return final_status;
    std::this_thread::sleep_for(*retry_in);
  }
}

StatusOr<json::Value> CurlClient::DoJson(const Request& req, const json::SkipPaths* skip) {
  ASSIGN_OR_RETURN(Response resp, Do(req));
  StatusOr<json::Value> v =
      skip != nullptr ? json::Parse(resp.body, *skip) : json::Parse(resp.body);
  if (!v.ok()) return v.status().WithContext("decoding response of " + req.method + " " + req.path);
  return v;
}

namespace {

Status RequireName(std::string_view name, std::string_view verb) {
  if (name.empty()) return InvalidArgumentError(std::string(verb) + ": object name is empty");
  return OkStatus();
}

}  // namespace

StatusOr<json::Value> CurlClient::Get(const GroupVersionResource& gvr, std::string_view ns,
                                      std::string_view name) {
  RETURN_IF_ERROR(RequireName(name, "get"));
  return DoJson({"GET", ResourcePath(gvr, ns, name), "", "", Kind::kRead, true});
}

namespace {

std::string ListQuery(const ListOptions& o) {
  Query q;
  q.Add("labelSelector", o.label_selector);
  q.Add("fieldSelector", o.field_selector);
  if (o.limit > 0) q.Add("limit", std::to_string(o.limit));
  q.Add("continue", o.continue_token);
  q.Add("resourceVersion", o.resource_version);
  q.Add("resourceVersionMatch", o.resource_version_match);
  return q.str();
}

}  // namespace

StatusOr<json::Value> CurlClient::List(const GroupVersionResource& gvr, std::string_view ns,
                                       const ListOptions& o) {
  const std::string path = ResourcePath(gvr, ns) + ListQuery(o);
  if (o.skip == nullptr) return DoJson({"GET", path, "", "", Kind::kList, true});
  const json::SkipPaths skip = o.skip->Under({"items", "*"});
  return DoJson({"GET", path, "", "", Kind::kList, true}, &skip);
}

StatusOr<json::Value> CurlClient::ListEach(
    const GroupVersionResource& gvr, std::string_view ns, const ListOptions& o,
    const std::function<Status(json::Value& item)>& on_item) {
  const std::string path = ResourcePath(gvr, ns) + ListQuery(o);
  Request req{"GET", path, "", "", Kind::kList, true};
  ListDecoder decoder(o.skip);
  req.sink = [&](std::string_view data) { return decoder.Feed(data, on_item); };
  RETURN_IF_ERROR(Do(req).status());
  StatusOr<json::Value> list = decoder.Finish();
  if (!list.ok()) return list.status().WithContext("decoding response of GET " + req.path);
  return list;
}

StatusOr<json::Value> CurlClient::Create(const GroupVersionResource& gvr, std::string_view ns,
                                         const json::Value& obj, const CreateOptions& o) {
  Query q;
  q.Add("fieldManager", o.field_manager);
  if (o.dry_run) q.Add("dryRun", "All");
  return DoJson({"POST", ResourcePath(gvr, ns) + q.str(), json::Write(obj), "application/json",
                 Kind::kWrite, false});
}

StatusOr<json::Value> CurlClient::Update(const GroupVersionResource& gvr, std::string_view ns,
                                         const json::Value& obj, const UpdateOptions& o) {
  RETURN_IF_ERROR(RequireName(Name(obj), "update"));
  Query q;
  q.Add("fieldManager", o.field_manager);
  if (o.dry_run) q.Add("dryRun", "All");
  return DoJson({"PUT", ResourcePath(gvr, ns, Name(obj)) + q.str(), json::Write(obj),
                 "application/json", Kind::kWrite, false});
}

Status CurlClient::Delete(const GroupVersionResource& gvr, std::string_view ns,
                          std::string_view name, const DeleteOptions& o) {
  RETURN_IF_ERROR(RequireName(name, "delete"));
  json::Value body = json::Value::Object();
  body.Set("kind", "DeleteOptions");
  body.Set("apiVersion", "v1");
  if (o.propagation_policy) body.Set("propagationPolicy", *o.propagation_policy);
  if (o.grace_period_seconds) body.Set("gracePeriodSeconds", *o.grace_period_seconds);
  if (o.precondition_uid || o.precondition_resource_version) {
    json::Value& pre = body["preconditions"];
    if (o.precondition_uid) pre.Set("uid", *o.precondition_uid);
    if (o.precondition_resource_version) {
      pre.Set("resourceVersion", *o.precondition_resource_version);
    }
  }
  if (o.dry_run) body.Set("dryRun", json::Value::StringArray({"All"}));
  StatusOr<Response> resp = Do({"DELETE", ResourcePath(gvr, ns, name), json::Write(body),
                                "application/json", Kind::kWrite, true});
  return resp.status();
}

namespace {

std::string PatchQuery(const PatchOptions& o) {
  Query q;
  q.Add("fieldManager", o.field_manager);
  if (o.dry_run) q.Add("dryRun", "All");
  return q.str();
}

std::string ApplyQuery(const ApplyOptions& o) {
  Query q;
  q.Add("fieldManager", o.field_manager);
  if (o.force) q.Add("force", "true");
  if (o.dry_run) q.Add("dryRun", "All");
  return q.str();
}

}  // namespace

StatusOr<json::Value> CurlClient::Patch(const GroupVersionResource& gvr, std::string_view ns,
                                        std::string_view name, PatchType type,
                                        const json::Value& patch, const PatchOptions& o) {
  RETURN_IF_ERROR(RequireName(name, "patch"));
  return DoJson({"PATCH", ResourcePath(gvr, ns, name) + PatchQuery(o), json::Write(patch),
                 std::string(PatchContentType(type)), Kind::kWrite, type == PatchType::kMerge});
}

StatusOr<json::Value> CurlClient::PatchStatus(const GroupVersionResource& gvr, std::string_view ns,
                                              std::string_view name, PatchType type,
                                              const json::Value& patch, const PatchOptions& o) {
  RETURN_IF_ERROR(RequireName(name, "patch status"));
  return DoJson({"PATCH", ResourcePath(gvr, ns, name, "status") + PatchQuery(o), json::Write(patch),
                 std::string(PatchContentType(type)), Kind::kWrite, type == PatchType::kMerge});
}

StatusOr<json::Value> CurlClient::Apply(const GroupVersionResource& gvr, std::string_view ns,
                                        const json::Value& obj, const ApplyOptions& o) {
  RETURN_IF_ERROR(RequireName(Name(obj), "apply"));
  if (o.field_manager.empty()) return InvalidArgumentError("apply: field manager is required");
  // JSON is YAML, so the apply content type takes our JSON as is.
  return DoJson({"PATCH", ResourcePath(gvr, ns, Name(obj)) + ApplyQuery(o), json::Write(obj),
                 "application/apply-patch+yaml", Kind::kWrite, true});
}

StatusOr<json::Value> CurlClient::ApplyStatus(const GroupVersionResource& gvr, std::string_view ns,
                                              const json::Value& obj, const ApplyOptions& o) {
  RETURN_IF_ERROR(RequireName(Name(obj), "apply status"));
  if (o.field_manager.empty()) return InvalidArgumentError("apply: field manager is required");
  return DoJson({"PATCH", ResourcePath(gvr, ns, Name(obj), "status") + ApplyQuery(o),
                 json::Write(obj), "application/apply-patch+yaml", Kind::kWrite, true});
}

StatusOr<json::Value> CurlClient::GetPath(std::string_view path) {
  return DoJson({"GET", std::string(path), "", "", Kind::kRead, true});
}

// --- Watch -----------------------------------------------------------------------------------

namespace {

struct WatchState {
  explicit WatchState(const json::SkipPaths* skip) : decoder(skip) {}
  CURL* curl = nullptr;
  WatchDecoder decoder;
  const WatchHandler* handler = nullptr;
  Status result;  // set when decoding or the handler ended the stream
  bool ended_by_us = false;
  long http_code = 0;
  std::string error_body;  // body of a non-200 answer
  std::optional<double> retry_after;
  SteadyClock::time_point last_byte;
};

size_t OnWatchData(char* data, size_t size, size_t n, void* user) {
  auto* st = static_cast<WatchState*>(user);
  const size_t len = size * n;
  st->last_byte = SteadyClock::now();
  if (st->http_code == 0) curl_easy_getinfo(st->curl, CURLINFO_RESPONSE_CODE, &st->http_code);
  if (st->http_code != 200) {
    if (st->error_body.size() < (1u << 20)) st->error_body.append(data, len);
    return len;
  }
  Status s = st->decoder.Feed(std::string_view(data, len), [st](WatchEvent& e) {
    if (e.type == WatchEventType::kError) {
      st->result = StatusFromStatusObject(e.object);
      return false;
    }
    if (!(*st->handler)(e)) {
      st->result = CancelledError("watch stopped by its handler");
      return false;
    }
    return true;
  });
  if (!s.ok()) {
    if (st->result.ok()) st->result = s.WithContext("watch stream");
    st->ended_by_us = true;
    return 0;  // aborts the transfer
  }
  return len;
}

int RandomWatchTimeoutSeconds() {
  static thread_local std::mt19937 rng{std::random_device{}()};
  return std::uniform_int_distribution<int>(300, 599)(rng);
}

}  // namespace

Status CurlClient::Watch(const GroupVersionResource& gvr, std::string_view ns,
                         const WatchOptions& o, const WatchHandler& handler, std::stop_token stop) {
  if (stop.stop_requested() || !limiter_.Wait(stop)) return CancelledError("watch cancelled");
  const int timeout_s =
      o.timeout.count() > 0 ? static_cast<int>(o.timeout.count()) : RandomWatchTimeoutSeconds();
  const auto idle_timeout = o.idle_timeout.count() > 0
                                ? o.idle_timeout
                                : std::chrono::milliseconds((timeout_s + 30) * 1000);
  Query q;
  q.Add("watch", "true");
  q.Add("labelSelector", o.label_selector);
  q.Add("fieldSelector", o.field_selector);
  q.Add("resourceVersion", o.resource_version);
  if (o.allow_bookmarks) q.Add("allowWatchBookmarks", "true");
  q.Add("timeoutSeconds", std::to_string(timeout_s));
  const std::string path = ResourcePath(gvr, ns) + q.str();

  // A watch owns its handle (it may live for minutes) and a multi handle, so that Stop can wake
  // curl_multi_poll at once instead of waiting for a progress callback.
  CURL* curl = static_cast<CURL*>(NewHandle());
  CURLM* multi = curl_multi_init();
  if (curl == nullptr || multi == nullptr) {
    if (curl != nullptr) curl_easy_cleanup(curl);
    if (multi != nullptr) curl_multi_cleanup(multi);
    return InternalError("watch: curl init failed");
  }
  void* headers = nullptr;
  Status configured = Configure(curl, path, &headers, "");
  if (!configured.ok()) {
    curl_easy_cleanup(curl);
    curl_multi_cleanup(multi);
    return configured.WithContext("watch " + path);
  }
  WatchState st(o.skip);
  st.curl = curl;
  st.handler = &handler;
  st.last_byte = SteadyClock::now();
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &OnWatchData);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &st);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &st.retry_after);
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_multi_add_handle(multi, curl);
  requests_sent_.fetch_add(1);

  Status outcome;
  CURLcode rc = CURLE_OK;
  bool done = false;
  {
    std::stop_callback wake(stop, [multi] { curl_multi_wakeup(multi); });
    while (!done) {
      int running = 0;
      CURLMcode mc = curl_multi_perform(multi, &running);
      if (mc != CURLM_OK) {
        outcome = InternalError(std::string("watch: ") + curl_multi_strerror(mc));
        break;
      }
      int queued = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
        if (msg->msg == CURLMSG_DONE) {
          rc = msg->data.result;
          done = true;
        }
      }
      if (done || running == 0) {
        done = true;
        break;
      }
      if (stop.stop_requested()) {
        outcome = CancelledError("watch cancelled");
        break;
      }
      const auto idle = SteadyClock::now() - st.last_byte;
      if (idle >= idle_timeout) {
        outcome = UnavailableError(
            "watch " + path + ": no data for " +
            std::to_string(std::chrono::duration_cast<std::chrono::seconds>(idle).count()) +
            "s, assuming the connection is dead");
        break;
      }
      const auto wait =
          std::min<SteadyClock::duration>(idle_timeout - idle, std::chrono::seconds(1));
      curl_multi_poll(
          multi, nullptr, 0,
          static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(wait).count()) + 1,
          nullptr);
    }
  }
  long connects = 0;
  curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &connects);
  connections_opened_.fetch_add(static_cast<uint64_t>(connects));
  if (st.http_code == 0) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &st.http_code);
  curl_multi_remove_handle(multi, curl);
  curl_easy_cleanup(curl);
  curl_multi_cleanup(multi);
  curl_slist_free_all(static_cast<curl_slist*>(headers));

  if (!st.result.ok()) return st.result;  // ERROR event, handler stop, malformed stream
  if (!outcome.ok()) return outcome;      // cancelled, idle, multi failure
  if (st.http_code != 0 && st.http_code != 200) {
    return StatusFromResponse(static_cast<int>(st.http_code), st.error_body, st.retry_after);
  }
  if (rc != CURLE_OK) {
    return UnavailableError("watch " + config_.server + path + ": " + curl_easy_strerror(rc) +
                            (errbuf[0] ? ": " : "") + errbuf);
  }
  if (st.decoder.buffered() > 0) {
    return UnavailableError("watch " + path + ": stream ended inside an event (" +
                            std::to_string(st.decoder.buffered()) + " bytes)");
  }
  return OkStatus();
}

}  // namespace trainer::kube
