// StatusServer wiring (server.h).
#include "webhook/statusserver/server.h"

#include <httplib.h>

#include "common/log/log.h"

namespace trainer::statusserver {
namespace {

using namespace std::chrono_literals;

// Counts every status write by result, for trainer_status_server_writes_total.
class CountingWriter final : public StatusWriter {
 public:
  CountingWriter(std::unique_ptr<StatusWriter> inner, metrics::Registry& registry)
      : inner_(std::move(inner)),
        writes_(&registry.Counter("trainer_status_server_writes_total",
                                  "Writes of status.trainerStatus to the apiserver, by result: "
                                  "success, invalid, not_found, error.")) {
    for (const char* r : {"success", "invalid", "not_found", "error"})
      writes_->Add({{"result", r}});
  }
  Status Apply(std::string_view ns, std::string_view name, const TrainerStatus& status) override {
    Status s = inner_->Apply(ns, name, status);
    const char* result = s.ok()                                                     ? "success"
                         : s.code() == StatusCode::kInvalid || s.http_code() == 400 ? "invalid"
                         : IsNotFound(s)                                            ? "not_found"
                                                                                    : "error";
    writes_->Add({{"result", result}}).Increment();
    return s;
  }

 private:
  std::unique_ptr<StatusWriter> inner_;
  prometheus::Family<prometheus::Counter>* writes_;
};

StatusOr<std::unique_ptr<kube::CurlClient>> Client(const kube::RestConfig& rest,
                                                   kube::ClientOptions options) {
  options.user_agent = "trainer-webhook/status-server";
  return kube::CurlClient::New(rest, std::move(options));
}

}  // namespace

StatusOr<std::unique_ptr<StatusServer>> StatusServer::New(const StatusServerOptions& options,
                                                          const kube::RestConfig& rest,
                                                          http::CertWatcher* certs,
                                                          service::Frame& frame) {
  std::unique_ptr<StatusServer> s(new StatusServer());
  RETURN_IF_ERROR(s->Init(options, rest, certs, frame));
  return s;
}

StatusServer::~StatusServer() { Stop(); }

Status StatusServer::Init(const StatusServerOptions& options, const kube::RestConfig& rest,
                          http::CertWatcher* certs, service::Frame& frame) {
  metrics::Registry& registry = frame.registry();
  ASSIGN_OR_RETURN(write_client_, Client(rest, {.qps = options.qps,
                                                .burst = options.burst,
                                                .read_timeout = 5s,
                                                .write_timeout = 8s,
                                                .max_retries = 1,
                                                .max_retry_after = 1s}));
  ASSIGN_OR_RETURN(issuer_client_,
                   Client(rest, {.connect_timeout = 3s, .read_timeout = 5s, .max_retries = 0}));

  auto* loaded = &registry
                      .Gauge("trainer_status_server_token_keys_loaded_timestamp_seconds",
                             "When the token issuer's keys were last loaded (0: never; status "
                             "reports are answered 500 until they are).")
                      .Add({});
  auto* load_errors =
      &registry
           .Counter("trainer_status_server_token_key_load_errors_total",
                    "Failed loads of the token issuer's discovery document or keys.")
           .Add({});
  issuer_ = std::make_unique<jwt::Issuer>(jwt::IssuerOptions{
      .fetch = [client =
                    issuer_client_.get()](std::string_view path) { return client->GetPath(path); },
      .on_load =
          [loaded, load_errors](const Status& s) {
            if (s.ok()) {
              loaded->Set(
                  std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                      .count());
            } else {
              load_errors->Increment();
            }
          }});
  if (options.require_pod_binding) {
    ASSIGN_OR_RETURN(pods_client_, Client(rest, {}));
    pods_ = std::make_unique<InformerPodDirectory>(*pods_client_);
  }
  authorizer_ = std::make_unique<ServiceAccountAuthorizer>(issuer_.get(), pods_.get());
  writer_ = std::make_unique<CountingWriter>(
      std::make_unique<KubeStatusWriter>(write_client_.get()), registry);
  if (options.write_interval.count() > 0) {
    coalescer_ = std::make_unique<Coalescer>(writer_.get(),
                                             CoalescerOptions{.interval = options.write_interval});
  }
  handler_ = std::make_unique<StatusHandler>(StatusHandlerOptions{.authorizer = authorizer_.get(),
                                                                  .writer = writer_.get(),
                                                                  .coalescer = coalescer_.get(),
                                                                  .registry = &registry});

  StatusHandler* handler = handler_.get();
  http::ServerOptions so{.address = options.address,
                         .tls = certs,
                         .threads = 8,
                         .max_body_bytes = kMaxBodyBytes,
                         .keep_alive_timeout = 120s,
                         .read_timeout = 10s,
                         .write_timeout = 10s,
                         .request_read_timeout = 10s,
                         .drain_timeout = 5s};
  // Replies the HTTP layer makes itself: 413 over the body limit, 404 for other methods.
  so.error_body = [handler](const http::Request& req, http::Response& res) {
    // httplib refuses a PUT or PATCH without a length (400); for Go's mux it is another method.
    const bool bodiless_write =
        res.status == 400 && (req.method == "PUT" || req.method == "PATCH") &&
        !req.has_header("Content-Length") && !req.has_header("Transfer-Encoding");
    StatusReply r;
    if (res.status == 413) {
      r = {413, StatusBody("Payload too large", "RequestEntityTooLarge", 413)};
    } else if (res.status == 404 || res.status == 405 || bodiless_write) {
      r = {404, StatusBody("Not found", "NotFound", 404)};
    } else {
      return;  // malformed HTTP: httplib's own answer
    }
    res.status = r.status;
    res.set_content(r.body, "application/json");
    handler->Count(r.status, 0);
  };
  http::Server& server = frame.AddServer("status-server", std::move(so));
  auto serve = [handler](const http::Request& req, http::Response& res) {
    StatusReply r = handler->Serve({.method = req.method,
                                    .path = req.path,
                                    .authorization = req.get_header_value("Authorization"),
                                    .body = req.body});
    res.status = r.status;
    res.set_content(r.body, "application/json");
  };
  server.PostPrefix("/", serve);
  server.GetPrefix("/", serve);
  log::Info("status server configured",
            {{"address", options.address},
             {"writeInterval", std::to_string(options.write_interval.count()) + "ms"},
             {"requirePodBinding", options.require_pod_binding ? "true" : "false"}});
  return OkStatus();
}

void StatusServer::Start() {
  issuer_->Start();
  if (coalescer_) coalescer_->Start();
  if (pods_) pods_->Start();
}

void StatusServer::Stop() {
  if (pods_) pods_->Stop();
  if (issuer_) issuer_->Stop();
  if (coalescer_) coalescer_->Stop();
}

}  // namespace trainer::statusserver
