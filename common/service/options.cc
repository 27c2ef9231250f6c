// FrameFlags and LoadConfiguration (see options.h).
#include "common/service/options.h"

namespace trainer::service {

std::vector<flags::Flag> ServiceFlags(FrameOptions& o, std::vector<flags::Flag> own) {
  std::vector<flags::Flag> all = {
      {"config",
       "Upstream's Configuration file (config.trainer.kubeflow.org/v1alpha1, kind "
       "Configuration). Flags given explicitly win over it; fields this binary does not use are "
       "logged at start-up.",
       flags::String(&o.config_file, "FILE")},
  };
  for (flags::Flag& f : own) {
    all.push_back(std::move(f));
  }
  std::vector<flags::Flag> frame = {
      {"health-probe-bind-address", "Address of /healthz and /readyz; 0 disables.",
       flags::String(&o.health_probe_bind_address, "ADDRESS")},
      {"metrics-bind-address", "Address of /metrics; 0 disables.",
       flags::String(&o.metrics_bind_address, "ADDRESS")},
      {"metrics-secure-serving",
       "Serve /metrics over TLS with the certificate in --metrics-cert-dir.",
       flags::Bool(&o.metrics_secure_serving)},
      {"metrics-cert-dir", "Directory with tls.crt and tls.key for /metrics.",
       flags::String(&o.metrics_cert_dir, "DIR")},
      {"v", "Log verbosity.", flags::Int(&o.verbosity, 0, 10)},
      {"log-format", "Log format.", flags::OneOf(&o.log_format, {"text", "json"})},
  };
  for (flags::Flag& f : frame) {
    all.push_back(std::move(f));
  }
  return all;
}

StatusOr<std::optional<Configuration>> LoadConfiguration(
    const flags::FlagSet& fs, std::initializer_list<std::string_view> applicable, FrameOptions& o) {
  if (o.config_file.empty()) {
    return std::optional<Configuration>();
  }
  ASSIGN_OR_RETURN(Configuration cfg, LoadConfiguration(o.config_file));
  if (cfg.Has("metrics.bindAddress") && !fs.Given("metrics-bind-address")) {
    o.metrics_bind_address = cfg.metrics_bind_address;
  }
  if (cfg.Has("metrics.secureServing") && !fs.Given("metrics-secure-serving")) {
    o.metrics_secure_serving = cfg.metrics_secure_serving;
  }
  if (cfg.Has("health.healthProbeBindAddress") && !fs.Given("health-probe-bind-address")) {
    o.health_probe_bind_address = cfg.health_probe_bind_address;
  }
  std::vector<std::string_view> used = {"metrics.bindAddress", "metrics.secureServing",
                                        "health.healthProbeBindAddress"};
  used.insert(used.end(), applicable.begin(), applicable.end());
  o.ignored_config_fields = IgnoredFields(cfg, used);
  return std::optional<Configuration>(std::move(cfg));
}

}  // namespace trainer::service
