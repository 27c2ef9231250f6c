// CurlClient: kube::Client over libcurl, the REST transport of both trainer-cpp services.
// Mirrors what client-go's rest.RESTClient gives a controller:
//  - connection reuse: a pool of easy handles, each keeping its (TLS, HTTP/2 when the server
//    offers it) connection between requests; DNS and TLS sessions shared by all handles. Handles
//    are never used by two threads at once (libcurl's shared connection cache is not safe across
//    threads, so connections stay per handle);
//  - timeouts per request kind (read, write, list page; none on watches);
//  - typed errors from Status bodies (common/kube/api_error.h);
//  - an optional client-side token bucket (ClientOptions::qps, off by default: see there);
//  - retries with jittered exponential backoff on 429, on 5xx and on connection errors, honouring
//    Retry-After; non-idempotent requests are retried only when the server cannot have acted
//    (connection refused, 429, or any 5xx that carries Retry-After);
//  - watches on their own connection, parsed incrementally (WatchDecoder), cancellable at once
//    through a std::stop_token, with a dead-connection detector and TCP keepalive.
//
//   ASSIGN_OR_RETURN(kube::RestConfig cfg, kube::LoadConfig(flags.kubeconfig));
//   ASSIGN_OR_RETURN(std::unique_ptr<kube::CurlClient> client,
//   kube::CurlClient::New(std::move(cfg)));
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/flowcontrol/backoff.h"
#include "common/flowcontrol/token_bucket.h"
#include "common/kube/client.h"
#include "common/kube/curl/config.h"

namespace trainer::kube {

struct ClientOptions {
  // Client-side rate limit, requests per second and burst; qps <= 0 (the default) turns it off.
  // Why off: the apiserver protects itself with API Priority and Fairness (on by default since
  // Kubernetes 1.20, GA in 1.29), which queues by flow and answers 429 with Retry-After when our
  // priority level is full; we honour that with backoff. A client-side bucket only adds a second,
  // blind limit: upstream's 50 qps / 100 burst caps the controller at 50 writes/s even when the
  // apiserver is idle. SIG API Machinery recommends relying on APF, and controller-runtime
  // disabled its client-side limiter by default for the same reason (kubernetes-sigs/
  // controller-runtime#3119). Runaway loops are bounded elsewhere: the workqueue's per-item
  // backoff and its 10 qps / 100 bucket on requeues. Set qps/burst (--kube-api-qps/-burst) to
  // cap a client on clusters without APF.
  double qps = 0;
  int burst = 0;  // with qps > 0, 0 means client-go's default burst, 10

  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds read_timeout{30000};   // get, discovery
  std::chrono::milliseconds write_timeout{30000};  // create, update, patch, apply, delete
  std::chrono::milliseconds list_timeout{60000};   // one page of a list

  int max_retries = 5;  // attempts after the first
  flowcontrol::BackoffPolicy retry_backoff = flowcontrol::BackoffPolicy::Request();
  // Longest Retry-After we sleep for inside one call; longer ones are returned as the error.
  std::chrono::seconds max_retry_after{30};

  std::string user_agent = "trainer-cpp";
  bool http2 = true;  // offer h2 via ALPN; falls back to HTTP/1.1
  std::chrono::seconds tcp_keepalive_idle{15};
  std::chrono::seconds tcp_keepalive_interval{5};
  // Idle handles kept for reuse, each holding its open connection. A burst of concurrent requests
  // opens one connection per request; past this many, the extra handles are closed when their
  // request ends, so a burst does not keep its connections (an fd, TLS and HTTP/2 state: ~50 kB
  // of heap each) for the life of the process (found by hack/bench/soak).
  size_t max_idle_connections = 16;
};

class CurlClient final : public Client {
 public:
  static StatusOr<std::unique_ptr<CurlClient>> New(RestConfig config, ClientOptions options = {});
  ~CurlClient() override;
  CurlClient(const CurlClient&) = delete;
  CurlClient& operator=(const CurlClient&) = delete;

  // Reader
  StatusOr<json::Value> Get(const GroupVersionResource& gvr, std::string_view ns,
                            std::string_view name) override;
  StatusOr<json::Value> List(const GroupVersionResource& gvr, std::string_view ns,
                             const ListOptions& options) override;
  // Decodes the response as it arrives (ListDecoder): items are handed over one by one.
  StatusOr<json::Value> ListEach(const GroupVersionResource& gvr, std::string_view ns,
                                 const ListOptions& options,
                                 const std::function<Status(json::Value& item)>& on_item) override;
  // Writer
  StatusOr<json::Value> Create(const GroupVersionResource& gvr, std::string_view ns,
                               const json::Value& obj, const CreateOptions& options = {}) override;
  StatusOr<json::Value> Update(const GroupVersionResource& gvr, std::string_view ns,
                               const json::Value& obj, const UpdateOptions& options = {}) override;
  Status Delete(const GroupVersionResource& gvr, std::string_view ns, std::string_view name,
                const DeleteOptions& options = {}) override;
  StatusOr<json::Value> Patch(const GroupVersionResource& gvr, std::string_view ns,
                              std::string_view name, PatchType type, const json::Value& patch,
                              const PatchOptions& options = {}) override;
  StatusOr<json::Value> Apply(const GroupVersionResource& gvr, std::string_view ns,
                              const json::Value& obj, const ApplyOptions& options) override;
  StatusOr<json::Value> PatchStatus(const GroupVersionResource& gvr, std::string_view ns,
                                    std::string_view name, PatchType type, const json::Value& patch,
                                    const PatchOptions& options = {}) override;
  StatusOr<json::Value> ApplyStatus(const GroupVersionResource& gvr, std::string_view ns,
                                    const json::Value& obj, const ApplyOptions& options) override;
  // Watcher
  Status Watch(const GroupVersionResource& gvr, std::string_view ns, const WatchOptions& options,
               const WatchHandler& handler, std::stop_token stop = {}) override;
  // Client
  StatusOr<json::Value> GetPath(std::string_view path) override;

  const RestConfig& config() const { return config_; }
  const ClientOptions& options() const { return options_; }

  // Requests sent (attempts, including retries) and new TCP connections opened, for tests and
  // debugging connection reuse.
  uint64_t requests_sent() const { return requests_sent_.load(); }
  uint64_t connections_opened() const { return connections_opened_.load(); }
  // Idle handles (open connections) waiting in the pool.
  size_t idle_connections() const;

 private:
  enum class Kind { kRead, kList, kWrite };
  struct Request {
    std::string method;
    std::string path;  // path and query
    std::string body;
    std::string content_type;
    Kind kind = Kind::kRead;
    // True when repeating the request after an ambiguous failure (the server may have acted)
    // is harmless: reads, apply, delete, merge patches.
    bool idempotent = true;
    // A 2xx answer's body goes here as it arrives instead of into Response::body; its error
    // aborts the transfer. An attempt that delivered any byte here is not retried.
    std::function<Status(std::string_view)> sink;
  };
  struct Response {
    long code = 0;
    std::string body;
    bool sank = false;  // bytes went to Request::sink
    Status sink_error;  // the sink's error, if it ended the transfer
    std::optional<double> retry_after;
  };
  struct Shared;  // libcurl share handle and its locks

  CurlClient(RestConfig config, ClientOptions options);
  Status Init();

  // Sends with rate limiting and retries; a non-2xx final answer becomes the error Status.
  StatusOr<Response> Do(const Request& request);
  // `skip`: parts of the response document left out while decoding (json::SkipPaths).
  StatusOr<json::Value> DoJson(const Request& request, const json::SkipPaths* skip = nullptr);
  // One attempt. Transport failures are returned as kUnavailable (with `*sent_maybe` telling
  // whether the server may have seen the request); HTTP answers of any code are OK.
  Status DoOnce(const Request& request, Response* response, bool* sent_maybe);

  // A new easy handle with SetSharedOptions applied.
  void* NewHandle();
  // TLS, auth, socket and timeout options shared by every request and watch, set once per handle.
  void SetSharedOptions(void* curl);
  // The URL and headers (content type, the current bearer token) of one request or watch.
  Status Configure(void* curl, const std::string& path, void** header_list,
                   std::string_view content_type);
  void SetMethod(void* curl, const Request& request);
  // A pooled handle (its connection and shared options kept) or a new one.
  void* AcquireHandle();
  void ReleaseHandle(void* curl);

  const RestConfig config_;
  const ClientOptions options_;
  std::unique_ptr<Shared> shared_;
  std::unique_ptr<TokenFile> token_file_;
  flowcontrol::TokenBucket limiter_;
  mutable std::mutex pool_mu_;
  std::vector<void*> pool_;  // idle CURL* handles, most recently used last
  std::atomic<uint64_t> requests_sent_{0};
  std::atomic<uint64_t> connections_opened_{0};
  std::atomic<uint64_t> seed_{0};
};

// Builds the REST path of a resource: /api/v1/namespaces/ns/configmaps/name/status.
std::string ResourcePath(const GroupVersionResource& gvr, std::string_view ns,
                         std::string_view name = {}, std::string_view subresource = {});
// Percent-encodes a query value or path segment (RFC 3986 unreserved characters kept).
std::string UrlEncode(std::string_view s);

}  // namespace trainer::kube
