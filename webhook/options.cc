// ParseOptions (see options.h).
#include "webhook/options.h"

#include "common/flags/flags.h"
#include "common/service/options.h"

namespace trainer::webhook {
namespace {

flags::FlagSet Flags(Options& o) {
  std::vector<flags::Flag> own = {
      {"port", "Webhook HTTPS port.", flags::Int(&o.port, 1, 65535)},
      {"cert-dir", "Directory with tls.crt and tls.key of the webhook server, reloaded on change.",
       flags::String(&o.cert_dir, "DIR")},
      {"kubeconfig", "Kubeconfig file; default $KUBECONFIG, in-cluster, then ~/.kube/config.",
       flags::String(&o.kubeconfig, "FILE")},
      {"webhook-threads",
       "HTTPS threads kept when idle; each open connection has one and more start on demand.",
       flags::Int(&o.threads, 1, 512)},
      {"offline-runtimes",
       "Serve the runtimes in this manifest file instead of the cluster's (development and "
       "benchmarks); repeatable.",
       flags::Append(&o.offline_runtimes, "FILE")},
  };
  return flags::FlagSet("trainer-webhook",
                        "Serves trainer-cpp's admission webhooks for TrainJobs and runtimes over "
                        "HTTPS, with probes and Prometheus metrics.",
                        service::ServiceFlags(o.frame, std::move(own)));
}

}  // namespace

std::string Options::Address() const {
  if (host.find(':') != std::string::npos) {
    return "[" + host + "]:" + std::to_string(port);
  }
  return host + ":" + std::to_string(port);
}

std::string Usage() {
  Options o;
  return Flags(o).Usage();
}

StatusOr<Options> ParseOptions(const std::vector<std::string>& args) {
  Options o;
  flags::FlagSet fs = Flags(o);
  RETURN_IF_ERROR(fs.Parse(args));
  o.help = fs.help();
  ASSIGN_OR_RETURN(std::optional<service::Configuration> cfg,
                   service::LoadConfiguration(fs, {"webhook.port", "webhook.host"}, o.frame));
  if (cfg && cfg->Has("webhook.port") && !fs.Given("port")) {
    o.port = cfg->webhook_port;
  }
  if (cfg) {
    o.host = cfg->webhook_host;
  }
  return o;
}

}  // namespace trainer::webhook
