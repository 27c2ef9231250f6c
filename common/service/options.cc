// FrameFlags and LoadConfiguration (see options.h).
#include "common/service/options.h"

#include "common/strings/ascii.h"

namespace trainer::service {
namespace {

// controller-runtime's --zap-log-level: debug, info, error, panic or an integer > 0 (a debug
// level: our verbosity). Returns the verbosity it means.
StatusOr<int> ZapVerbosity(std::string_view text) {
  const std::string level = strings::AsciiLower(text);
  if (level == "debug") return 1;
  if (level == "info" || level == "error" || level == "panic") return 0;
  StatusOr<int64_t> n = flags::ParseInt(text, 1, 127);
  if (!n.ok()) return InvalidArgumentError("invalid log level \"" + std::string(text) + "\"");
  return static_cast<int>(*n);
}

std::vector<flags::Flag> ZapFlags(FrameOptions::Zap& z) {
  return {
      {"zap-log-level",
       "Upstream's log level: debug, info, error, panic or an integer > 0 (the verbosity); -v "
       "wins.",
       {.placeholder = "LEVEL",
        .set = [&z](std::string_view t) {
          StatusOr<int> v = ZapVerbosity(t);
          if (v.ok()) z.verbosity = *v;
          return v.status();
        }}},
      {"zap-encoder", "Upstream's log encoder: json (JSON logs) or console; --log-format wins.",
       flags::OneOf(&z.encoder, {"json", "console"})},
      {"zap-devel",
       "Upstream's development mode: text logs at debug level (true) or JSON logs at info level "
       "(false); --zap-encoder and --zap-log-level win.",
       {.set =
            [&z](std::string_view t) {
              z.devel = std::string(t);
              return flags::ParseBool(t).status();
            },
        .is_bool = true}},
      {"zap-stacktrace-level",
       "Accepted for upstream's command lines (records carry no stack traces).",
       flags::OneOf(&z.stacktrace_level, {"debug", "info", "error", "panic"})},
      {"zap-time-encoding",
       "Format of the ts field: epoch, millis, nano, iso8601, rfc3339 or rfc3339nano (default: "
       "RFC 3339 with microseconds).",
       flags::OneOf(&z.time_encoding,
                    {"epoch", "millis", "nano", "iso8601", "rfc3339", "rfc3339nano"})},
  };
}

// The zap flags where -v and --log-format were not given. --zap-devel picks zap's development
// defaults (console logs at debug level) or its production ones (JSON at info level), and
// --zap-encoder and --zap-log-level win over those, as in controller-runtime's Options.
void ApplyZap(const flags::FlagSet& fs, FrameOptions& o) {
  std::optional<bool> devel;
  if (!o.zap.devel.empty()) devel = flags::ParseBool(o.zap.devel).value_or(false);
  std::optional<int> verbosity = o.zap.verbosity;
  if (!verbosity && devel) verbosity = *devel ? 1 : 0;
  std::string encoder = o.zap.encoder;
  if (encoder.empty() && devel) encoder = *devel ? "console" : "json";
  if (verbosity && !fs.Given("v")) o.verbosity = *verbosity;
  if (!encoder.empty() && !fs.Given("log-format")) {
    o.log_format = encoder == "json" ? "json" : "text";
  }
}

}  // namespace

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
  for (flags::Flag& f : frame) all.push_back(std::move(f));
  for (flags::Flag& f : ZapFlags(o.zap)) all.push_back(std::move(f));
  return all;
}

StatusOr<std::optional<Configuration>> LoadConfiguration(
    const flags::FlagSet& fs, std::initializer_list<std::string_view> applicable, FrameOptions& o) {
  ApplyZap(fs, o);
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
