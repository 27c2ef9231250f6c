// ParseOptions (see options.h).
#include "webhook/options.h"

#include "common/flags/flags.h"
#include "common/service/options.h"

namespace trainer::webhook {
namespace {

flags::FlagSet Flags(Options& o, std::string* gates) {
  std::vector<flags::Flag> own = {
      {"port", "Webhook HTTPS port.", flags::Int(&o.port, 1, 65535)},
      {"cert-dir", "Directory with tls.crt and tls.key of the webhook server, reloaded on change.",
       flags::String(&o.cert_dir, "DIR")},
      {"kubeconfig", "Kubeconfig file; default $KUBECONFIG, in-cluster, then ~/.kube/config.",
       flags::String(&o.kubeconfig, "FILE")},
      {"webhook-threads",
       "HTTPS threads kept when idle; each open connection has one and more start on demand.",
       flags::Int(&o.threads, 1, 512)},
      {"busy-poll",
       "After each answer, poll the connection this long for the next request before sleeping "
       "(at most one thread per two CPUs at once): CPU for latency, as a request arriving in "
       "time is read without waking a sleeping thread. 0 disables.",
       flags::Duration(&o.busy_poll, std::chrono::microseconds(0), std::chrono::milliseconds(10))},
      {"cert-management",
       "Issue, renew and rotate the serving certificate in-process, kept in Secret "
       "--webhook-secret-name, and keep caBundle of both webhook configurations (instead of "
       "reading --cert-dir).",
       flags::Bool(&o.cert_management)},
      {"webhook-service-name",
       "The webhook Service: the certificate is for <name>.<namespace>.svc (cert management).",
       flags::String(&o.webhook_service_name, "NAME")},
      {"webhook-secret-name", "The Secret holding the certificates (cert management).",
       flags::String(&o.webhook_secret_name, "NAME")},
      {"webhook-secret-namespace",
       "Namespace of the Secret and the Service (cert management); default the pod's, or the "
       "kubeconfig context's, else kubeflow-system.",
       flags::String(&o.webhook_secret_namespace, "NAMESPACE")},
      {"mutating-webhook-configuration",
       "MutatingWebhookConfiguration whose caBundle is kept (cert management).",
       flags::String(&o.mutating_webhook_configuration, "NAME")},
      {"validating-webhook-configuration",
       "ValidatingWebhookConfiguration whose caBundle is kept (cert management).",
       flags::String(&o.validating_webhook_configuration, "NAME")},
      {"cert-propagation-delay",
       "During a CA rotation: how long both configurations trust the new CA before a "
       "certificate of it is served (cert management).",
       flags::Duration(&o.cert_propagation, std::chrono::seconds(1))},
      {"cert-report-interval",
       "During a CA rotation: how often each replica reports which CA it serves; the old CA "
       "leaves caBundle once every replica reporting within three intervals serves the new one "
       "(cert management).",
       flags::Duration(&o.cert_report_interval, std::chrono::seconds(1))},
      {"offline-runtimes",
       "Serve the runtimes in this manifest file instead of the cluster's (development and "
       "benchmarks); repeatable.",
       flags::Append(&o.offline_runtimes, "FILE")},
      {"feature-gates",
       "Comma-separated Name=bool pairs over the file's featureGates. TrainJobStatus=true serves "
       "the TrainJob status server (alpha, off by default).",
       flags::String(gates, "GATES")},
      {"status-server-port", "Status server HTTPS port (or the file's statusServer.port).",
       flags::Int(&o.status_server_port, 1, 65535)},
      {"status-write-interval",
       "Write a TrainJob's reported status at most once per this interval, the latest report "
       "winning; 0 writes every report (upstream).",
       flags::Duration(&o.status_write_interval)},
      {"status-server-require-pod-binding",
       "Accept only tokens bound to a live pod of the reporting TrainJob (needs list and watch "
       "on pods).",
       flags::Bool(&o.status_server_require_pod_binding)},
  };
  return flags::FlagSet("trainer-webhook",
                        "Serves trainer-cpp's admission webhooks for TrainJobs and runtimes over "
                        "HTTPS, with probes and Prometheus metrics.",
                        service::ServiceFlags(o.frame, std::move(own)));
}

// What follows the parse: the Configuration file under the flags given.
Status Settle(const flags::FlagSet& fs, const std::string& gates, Options& o) {
  ASSIGN_OR_RETURN(
      std::optional<service::Configuration> cfg,
      service::LoadConfiguration(
          fs, {"webhook.port", "webhook.host", "certManagement", "featureGates", "statusServer"},
          o.frame));
  ASSIGN_OR_RETURN(
      o.feature_gates,
      features::FromConfigAndFlag(cfg ? cfg->feature_gates : std::map<std::string, bool>{}, gates));
  if (!cfg) {
    return OkStatus();
  }
  if (cfg->Has("webhook.port") && !fs.Given("port")) {
    o.port = cfg->webhook_port;
  }
  o.host = cfg->webhook_host;
  if (cfg->Has("certManagement.enable") && !fs.Given("cert-management")) {
    o.cert_management = cfg->cert_management_enable;
  }
  if (cfg->Has("certManagement.webhookServiceName") && !fs.Given("webhook-service-name")) {
    o.webhook_service_name = cfg->webhook_service_name;
  }
  if (cfg->Has("certManagement.webhookSecretName") && !fs.Given("webhook-secret-name")) {
    o.webhook_secret_name = cfg->webhook_secret_name;
  }
  if (!fs.Given("status-server-port")) o.status_server_port = cfg->status_server_port;
  o.status_server_qps = cfg->status_server_qps.value_or(5);
  o.status_server_burst = cfg->status_server_burst.value_or(10);
  return OkStatus();
}

}  // namespace

std::string Options::Address() const {
  if (host.find(':') != std::string::npos) {
    return "[" + host + "]:" + std::to_string(port);
  }
  return host + ":" + std::to_string(port);
}

std::string Options::StatusServerAddress() const {
  Options o = *this;
  o.port = status_server_port;
  return o.Address();
}

std::string Usage() { return service::ServiceUsage<Options>(Flags); }

StatusOr<Options> ParseOptions(const std::vector<std::string>& args) {
  return service::ParseServiceOptions<Options>(args, Flags, Settle);
}

}  // namespace trainer::webhook
