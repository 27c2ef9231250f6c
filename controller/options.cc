// Flags and the upstream Configuration file.
#include "controller/options.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "common/yaml/yaml.h"

namespace trainer::controller {

namespace {

// ---- strict decoding ----

enum class Kind {
  kString,
  kBool,
  kInt32,
  kFloat,
  kDuration,
  kStringList,
  kObject,
  kMapInt32,
  kMapBool
};

struct Field {
  std::string_view name;
  Kind kind;
  std::vector<Field> children = {};  // for kObject
};

const std::vector<Field>& Schema() {
  static const std::vector<Field> schema = {
      {"apiVersion", Kind::kString},
      {"kind", Kind::kString},
      {"webhook", Kind::kObject, {{"port", Kind::kInt32}, {"host", Kind::kString}}},
      {"leaderElection",
       Kind::kObject,
       {{"leaderElect", Kind::kBool},
        {"leaseDuration", Kind::kDuration},
        {"renewDeadline", Kind::kDuration},
        {"retryPeriod", Kind::kDuration},
        {"resourceLock", Kind::kString},
        {"resourceName", Kind::kString},
        {"resourceNamespace", Kind::kString}}},
      {"metrics",
       Kind::kObject,
       {{"bindAddress", Kind::kString},
        {"secureServing", Kind::kBool},
        {"auth", Kind::kObject, {{"enabled", Kind::kBool}}}}},  // [HEAD]
      {"health",
       Kind::kObject,
       {{"healthProbeBindAddress", Kind::kString},
        {"readinessEndpointName", Kind::kString},
        {"livenessEndpointName", Kind::kString}}},
      {"controller", Kind::kObject, {{"groupKindConcurrency", Kind::kMapInt32}}},
      {"certManagement",
       Kind::kObject,
       {{"enable", Kind::kBool},
        {"webhookServiceName", Kind::kString},
        {"webhookSecretName", Kind::kString}}},
      {"clientConnection", Kind::kObject, {{"qps", Kind::kFloat}, {"burst", Kind::kInt32}}},
      {"statusServer",
       Kind::kObject,
       {{"port", Kind::kInt32}, {"qps", Kind::kFloat}, {"burst", Kind::kInt32}}},
      {"featureGates", Kind::kMapBool},
      {"tls",
       Kind::kObject,
       {{"minVersion", Kind::kString},
        {"cipherSuites", Kind::kStringList},
        {"nextProtos", Kind::kStringList}}},
  };
  return schema;
}

std::string Path(std::string_view parent, std::string_view name) {
  return parent.empty() ? std::string(name) : std::string(parent) + "." + std::string(name);
}

Status TypeError(std::string_view path, std::string_view want, const json::Value& v) {
  return InvalidArgumentError("json: cannot unmarshal " + std::string(json::DescribeType(v)) +
                              " into field " + std::string(path) + " of type " + std::string(want));
}

Status CheckValue(const Field& f, const json::Value& v, const std::string& path);

Status CheckObject(const std::vector<Field>& fields, const json::Value& obj,
                   const std::string& path) {
  for (const json::Member& m : obj.members()) {
    const Field* field = nullptr;
    for (const Field& f : fields) {
      if (f.name == m.first) field = &f;
    }
    if (field == nullptr) {
      return InvalidArgumentError("strict decoding error: unknown field \"" + Path(path, m.first) +
                                  "\"");
    }
    RETURN_IF_ERROR(CheckValue(*field, m.second, Path(path, m.first)));
  }
  return OkStatus();
}

bool IsInt32(const json::Value& v) {
  if (v.IsInt()) return v.AsInt() >= INT32_MIN && v.AsInt() <= INT32_MAX;
  if (v.IsDouble()) {
    double d = v.AsDouble();
    return std::floor(d) == d && d >= INT32_MIN && d <= INT32_MAX;
  }
  return false;
}

Status CheckValue(const Field& f, const json::Value& v, const std::string& path) {
  if (v.IsNull()) return OkStatus();
  switch (f.kind) {
    case Kind::kString:
      return v.IsString() ? OkStatus() : TypeError(path, "string", v);
    case Kind::kBool:
      return v.IsBool() ? OkStatus() : TypeError(path, "bool", v);
    case Kind::kInt32:
      return IsInt32(v) ? OkStatus() : TypeError(path, "int32", v);
    case Kind::kFloat:
      return v.IsNumber() ? OkStatus() : TypeError(path, "float32", v);
    case Kind::kDuration:
      if (!v.IsString()) return TypeError(path, "Duration", v);
      return ParseGoDuration(v.AsString()).status().ok()
                 ? OkStatus()
                 : InvalidArgumentError("time: invalid duration \"" + v.AsString() + "\"");
    case Kind::kStringList:
      if (!v.IsArray()) return TypeError(path, "[]string", v);
      for (const json::Value& e : v.elements()) {
        if (!e.IsString()) return TypeError(path, "string", e);
      }
      return OkStatus();
    case Kind::kObject:
      if (!v.IsObject()) return TypeError(path, "object", v);
      return CheckObject(f.children, v, path);
    case Kind::kMapInt32:
    case Kind::kMapBool:
      if (!v.IsObject()) return TypeError(path, "map", v);
      for (const json::Member& m : v.members()) {
        bool ok = f.kind == Kind::kMapInt32 ? IsInt32(m.second) : m.second.IsBool();
        if (!ok) {
          return TypeError(Path(path, m.first), f.kind == Kind::kMapInt32 ? "int32" : "bool",
                           m.second);
        }
      }
      return OkStatus();
  }
  return OkStatus();
}

const json::Value* At(const json::Value& doc, std::string_view a, std::string_view b) {
  const json::Value* o = doc.Find(a);
  if (o == nullptr || !o->IsObject()) return nullptr;
  const json::Value* v = o->Find(b);
  return v != nullptr && !v->IsNull() ? v : nullptr;
}

std::string FormatNumber(double d) {
  std::ostringstream s;
  s << d;
  return s.str();
}

// Validates <section>.qps and <section>.burst: both must be >= 0, as upstream's config
// validation says (clientConnection and statusServer share the rule).
void CheckQpsBurst(const json::Value& doc, std::string_view section,
                   std::vector<std::string>& errs) {
  const json::Value* qps = At(doc, section, "qps");
  if (qps != nullptr && qps->AsDouble() < 0) {
    errs.push_back(std::string(section) + ".qps: Invalid value: " + FormatNumber(qps->AsDouble()) +
                   ": must be greater than or equal to 0");
  }
  const json::Value* burst = At(doc, section, "burst");
  if (burst != nullptr && burst->AsInt() < 0) {
    errs.push_back(std::string(section) + ".burst: Invalid value: " +
                   std::to_string(burst->AsInt()) + ": must be greater than or equal to 0");
  }
}

// ---- flags ----

struct FlagDef {
  std::string_view name;
  bool is_bool;
  std::string_view help;
};

const std::vector<FlagDef>& Flags() {
  static const std::vector<FlagDef> flags = {
      {"config", false, "Configuration file (config.trainer.kubeflow.org/v1alpha1 Configuration)."},
      {"kubeconfig", false, "Kubeconfig file; default $KUBECONFIG, in-cluster, ~/.kube/config."},
      {"feature-gates", false, "Accepted for compatibility; no gate changes this binary."},
      {"trainjob-workers", false,
       "Concurrent TrainJob reconciles (default 5, or the file's groupKindConcurrency)."},
      {"kube-api-qps", false, "Client-side QPS limit; 0 = off (default; or the file's)."},
      {"kube-api-burst", false, "Client-side burst."},
      {"leader-elect", true, "Elect a leader before reconciling (Lease)."},
      {"leader-election-id", false, "Lease name (default trainer.kubeflow.org)."},
      {"leader-election-namespace", false, "Lease namespace (default: the pod's namespace)."},
      {"health-probe-bind-address", false, "/healthz and /readyz address (default :8081)."},
      {"metrics-bind-address", false, "/metrics address (default :8443; \"0\" disables)."},
      {"metrics-secure-serving", true, "Serve /metrics over TLS (needs --metrics-cert-dir)."},
      {"metrics-cert-dir", false, "Directory with tls.crt and tls.key for /metrics."},
      {"lifecycle-conditions", true,
       "Add Created and Running conditions to TrainJobs. Off by default: the Kubeflow SDK "
       "(0.5.0) shows a TrainJob with any condition as Created until it completes."},
      {"protect-runtimes-in-use", true,
       "Keep the trainer.kubeflow.org/resource-in-use finalizer on runtimes while TrainJobs "
       "reference them (v2.2 behaviour). Off: the finalizer is removed (v2.3.0)."},
      {"v", false, "Log verbosity."},
      {"log-format", false, "text or json."},
      {"zap-log-level", false, "Accepted for compatibility: a number sets the verbosity."},
      {"zap-devel", true, "Accepted for compatibility."},
      {"zap-encoder", false, "Accepted for compatibility: json selects JSON logs."},
      {"zap-stacktrace-level", false, "Accepted for compatibility."},
      {"zap-time-encoding", false, "Accepted for compatibility."},
      {"help", true, "Print this help."},
  };
  return flags;
}

StatusOr<bool> ParseBool(std::string_view flag, std::string_view v) {
  if (v == "true" || v == "1" || v == "t" || v == "True" || v == "TRUE") return true;
  if (v == "false" || v == "0" || v == "f" || v == "False" || v == "FALSE") return false;
  return InvalidArgumentError("invalid boolean value \"" + std::string(v) + "\" for flag --" +
                              std::string(flag));
}

StatusOr<int64_t> ParseInt(std::string_view flag, std::string_view v) {
  std::string s(v);
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0) {
    return InvalidArgumentError("invalid value \"" + s + "\" for flag --" + std::string(flag));
  }
  return static_cast<int64_t>(n);
}

StatusOr<double> ParseDouble(std::string_view flag, std::string_view v) {
  std::string s(v);
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(d)) {
    return InvalidArgumentError("invalid value \"" + s + "\" for flag --" + std::string(flag));
  }
  return d;
}

}  // namespace

StatusOr<std::chrono::milliseconds> ParseGoDuration(std::string_view text) {
  std::string_view s = text;
  if (s == "0") return std::chrono::milliseconds(0);
  if (s.empty()) return InvalidArgumentError("time: invalid duration \"\"");
  double total_ms = 0;
  while (!s.empty()) {
    size_t i = 0;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == 0) return InvalidArgumentError("time: invalid duration \"" + std::string(text) + "\"");
    double n = std::strtod(std::string(s.substr(0, i)).c_str(), nullptr);
    s.remove_prefix(i);
    size_t j = 0;
    while (j < s.size() && std::isalpha(static_cast<unsigned char>(s[j]))) ++j;
    std::string_view unit = s.substr(0, j);
    s.remove_prefix(j);
    double scale = 0;
    if (unit == "ns")
      scale = 1e-6;
    else if (unit == "us" || unit == "µs")
      scale = 1e-3;
    else if (unit == "ms")
      scale = 1;
    else if (unit == "s")
      scale = 1000;
    else if (unit == "m")
      scale = 60000;
    else if (unit == "h")
      scale = 3600000;
    else
      return InvalidArgumentError("time: invalid duration \"" + std::string(text) + "\"");
    total_ms += n * scale;
  }
  return std::chrono::milliseconds(static_cast<int64_t>(total_ms));
}

StatusOr<Configuration> ParseConfiguration(std::string_view text) {
  StatusOr<json::Value> parsed = yaml::ParseYaml(text);
  if (!parsed.ok()) {
    return parsed.status().WithContext("failed to decode config file");
  }
  const json::Value& doc = *parsed;
  if (!doc.IsObject()) {
    return InvalidArgumentError("failed to decode config file: expected a Configuration object");
  }
  const json::Value* api_version = doc.Find("apiVersion");
  const json::Value* kind = doc.Find("kind");
  if (api_version == nullptr || !api_version->IsString() || kind == nullptr || !kind->IsString() ||
      kind->AsString().empty()) {
    return InvalidArgumentError(
        "failed to decode config file: Object 'Kind' is missing in config file");
  }
  if (api_version->AsString() != kConfigAPIVersion || kind->AsString() != "Configuration") {
    return InvalidArgumentError("failed to decode config file: no kind \"" + kind->AsString() +
                                "\" is registered for version \"" + api_version->AsString() + "\"");
  }
  Status schema = CheckObject(Schema(), doc, "");
  if (!schema.ok()) {
    return schema.WithContext("failed to decode config file");
  }

  Configuration cfg;
  std::vector<std::string> errs;
  if (const json::Value* v = At(doc, "webhook", "port")) {
    cfg.webhook_port = static_cast<int32_t>(v->AsInt());
    if (cfg.webhook_port < 1 || cfg.webhook_port > 65535) {
      errs.push_back("webhook.port: Invalid value: " + std::to_string(cfg.webhook_port) +
                     ": must be between 1 and 65535");
    }
  }
  if (const json::Value* v = At(doc, "webhook", "host")) cfg.webhook_host = v->AsString();
  if (const json::Value* le = doc.Find("leaderElection"); le != nullptr && le->IsObject()) {
    Configuration::LeaderElection l;
    // Upstream copies leaseDuration etc. as they are: an unset one is 0 there and
    // controller-runtime then uses its defaults (15 s / 10 s / 2 s), which ours already are.
    if (const json::Value* v = le->Find("leaderElect"); v && v->IsBool())
      l.leader_elect = v->AsBool();
    if (const json::Value* v = le->Find("resourceLock"); v && v->IsString())
      l.resource_lock = v->AsString();
    if (const json::Value* v = le->Find("resourceName"); v && v->IsString())
      l.resource_name = v->AsString();
    if (const json::Value* v = le->Find("resourceNamespace"); v && v->IsString()) {
      l.resource_namespace = v->AsString();
    }
    for (auto [name, out] : {std::pair{"leaseDuration", &l.lease_duration},
                             std::pair{"renewDeadline", &l.renew_deadline},
                             std::pair{"retryPeriod", &l.retry_period}}) {
      if (const json::Value* v = le->Find(name); v && v->IsString()) {
        StatusOr<std::chrono::milliseconds> d = ParseGoDuration(v->AsString());
        if (d.ok() && d->count() > 0) *out = *d;
      }
    }
    cfg.leader_election = l;
  }
  if (const json::Value* v = At(doc, "metrics", "bindAddress"); v && !v->AsString().empty()) {
    cfg.metrics_bind_address = v->AsString();
  }
  if (const json::Value* v = At(doc, "metrics", "secureServing")) {
    cfg.metrics_secure_serving = v->AsBool();
  }
  if (const json::Value* v = At(doc, "health", "healthProbeBindAddress");
      v && !v->AsString().empty()) {
    cfg.health_probe_bind_address = v->AsString();
  }
  CheckQpsBurst(doc, "clientConnection", errs);
  if (const json::Value* v = At(doc, "clientConnection", "qps")) cfg.qps = v->AsDouble();
  if (const json::Value* v = At(doc, "clientConnection", "burst")) {
    cfg.burst = static_cast<int32_t>(v->AsInt());
  }
  if (const json::Value* gkc = At(doc, "controller", "groupKindConcurrency")) {
    for (const json::Member& m : gkc->members()) {
      int32_t n = static_cast<int32_t>(m.second.AsInt());
      cfg.group_kind_concurrency[m.first] = n;
      if (n < 1) {
        errs.push_back("controller.groupKindConcurrency[" + m.first +
                       "]: Invalid value: " + std::to_string(n) + ": must be greater than 0");
      }
    }
  }
  if (const json::Value* v = At(doc, "statusServer", "port")) {
    if (v->AsInt() < 1 || v->AsInt() > 65535) {
      errs.push_back("statusServer.port: Invalid value: " + std::to_string(v->AsInt()) +
                     ": must be between 1 and 65535");
    }
  }
  CheckQpsBurst(doc, "statusServer", errs);
  if (const json::Value* fg = doc.Find("featureGates"); fg != nullptr && fg->IsObject()) {
    for (const json::Member& m : fg->members()) cfg.feature_gates[m.first] = m.second.AsBool();
  }
  if (!errs.empty()) {
    // field.ErrorList.ToAggregate(): one error as is, several as "[a, b]".
    std::string msg;
    if (errs.size() == 1) {
      msg = errs[0];
    } else {
      msg = "[";
      for (size_t i = 0; i < errs.size(); ++i) msg += (i ? ", " : "") + errs[i];
      msg += "]";
    }
    return InvalidArgumentError("invalid configuration: " + msg);
  }
  if (!cfg.qps) cfg.qps = 50;
  if (!cfg.burst) cfg.burst = 100;
  return cfg;
}

StatusOr<Configuration> LoadConfiguration(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return InvalidArgumentError("failed to read config file: open " + path +
                                ": no such file or directory");
  }
  std::stringstream buf;
  buf << in.rdbuf();
  return ParseConfiguration(buf.str());
}

std::string Usage() {
  std::string out = "Usage: trainer-controller [flags]\n\nFlags:\n";
  for (const FlagDef& f : Flags()) {
    out += "  --" + std::string(f.name) + (f.is_bool ? "" : " value") + "\n      " +
           std::string(f.help) + "\n";
  }
  return out;
}

StatusOr<Options> ParseOptions(int argc, const char* const* argv) {
  std::map<std::string, std::string> given;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.rfind("--", 0) != 0 && arg.rfind("-", 0) == 0)
      arg.remove_prefix(1);  // -v=2
    else if (arg.rfind("--", 0) == 0)
      arg.remove_prefix(2);
    else
      return InvalidArgumentError("unexpected argument \"" + std::string(arg) + "\"");
    std::string name(arg.substr(0, arg.find('=')));
    const FlagDef* def = nullptr;
    for (const FlagDef& f : Flags()) {
      if (f.name == name) def = &f;
    }
    if (def == nullptr) return InvalidArgumentError("unknown flag: --" + name);
    std::string value;
    if (size_t eq = arg.find('='); eq != std::string_view::npos) {
      value = std::string(arg.substr(eq + 1));
    } else if (def->is_bool) {
      value = "true";
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return InvalidArgumentError("flag needs an argument: --" + name);
    }
    given[name] = value;
  }

  Options o;
  auto has = [&](const char* n) { return given.count(n) > 0; };
  if (has("help")) {
    ASSIGN_OR_RETURN(o.help, ParseBool("help", given["help"]));
  }
  if (has("config")) o.config_file = given["config"];
  if (!o.config_file.empty()) {
    ASSIGN_OR_RETURN(Configuration cfg, LoadConfiguration(o.config_file));
    if (auto it = cfg.group_kind_concurrency.find(kTrainJobGroupKind);
        it != cfg.group_kind_concurrency.end()) {
      o.trainjob_workers = it->second;
    }
    o.kube_api_qps = cfg.qps.value_or(0);
    o.kube_api_burst = cfg.burst.value_or(0);
    if (cfg.leader_election) {
      o.leader_elect = cfg.leader_election->leader_elect;
      if (!cfg.leader_election->resource_name.empty()) {
        o.leader_election_id = cfg.leader_election->resource_name;
      }
      o.leader_election_namespace = cfg.leader_election->resource_namespace;
      o.lease_duration = cfg.leader_election->lease_duration;
      o.renew_deadline = cfg.leader_election->renew_deadline;
      o.retry_period = cfg.leader_election->retry_period;
    }
    o.metrics_bind_address = cfg.metrics_bind_address;
    o.metrics_secure_serving = cfg.metrics_secure_serving;
    o.health_probe_bind_address = cfg.health_probe_bind_address;
  }
  if (has("kubeconfig")) o.kubeconfig = given["kubeconfig"];
  if (has("feature-gates")) o.feature_gates = given["feature-gates"];
  if (has("trainjob-workers")) {
    ASSIGN_OR_RETURN(int64_t n, ParseInt("trainjob-workers", given["trainjob-workers"]));
    o.trainjob_workers = static_cast<int>(n);
  }
  if (o.trainjob_workers < 1 || o.trainjob_workers > 1000) {
    return InvalidArgumentError("--trainjob-workers must be between 1 and 1000");
  }
  if (has("kube-api-qps")) {
    ASSIGN_OR_RETURN(o.kube_api_qps, ParseDouble("kube-api-qps", given["kube-api-qps"]));
  }
  if (has("kube-api-burst")) {
    ASSIGN_OR_RETURN(int64_t n, ParseInt("kube-api-burst", given["kube-api-burst"]));
    o.kube_api_burst = static_cast<int>(n);
  }
  if (o.kube_api_qps < 0 || o.kube_api_burst < 0) {
    return InvalidArgumentError("--kube-api-qps and --kube-api-burst must be >= 0");
  }
  if (has("leader-elect")) {
    ASSIGN_OR_RETURN(o.leader_elect, ParseBool("leader-elect", given["leader-elect"]));
  }
  if (has("leader-election-id")) o.leader_election_id = given["leader-election-id"];
  if (has("leader-election-namespace")) {
    o.leader_election_namespace = given["leader-election-namespace"];
  }
  if (has("health-probe-bind-address")) {
    o.health_probe_bind_address = given["health-probe-bind-address"];
  }
  if (has("metrics-bind-address")) o.metrics_bind_address = given["metrics-bind-address"];
  if (has("metrics-secure-serving")) {
    ASSIGN_OR_RETURN(o.metrics_secure_serving,
                     ParseBool("metrics-secure-serving", given["metrics-secure-serving"]));
  }
  if (has("metrics-cert-dir")) o.metrics_cert_dir = given["metrics-cert-dir"];
  if (has("lifecycle-conditions")) {
    ASSIGN_OR_RETURN(o.lifecycle_conditions,
                     ParseBool("lifecycle-conditions", given["lifecycle-conditions"]));
  }
  if (has("protect-runtimes-in-use")) {
    ASSIGN_OR_RETURN(o.protect_runtimes_in_use,
                     ParseBool("protect-runtimes-in-use", given["protect-runtimes-in-use"]));
  }
  if (has("zap-log-level")) {
    StatusOr<int64_t> n = ParseInt("zap-log-level", given["zap-log-level"]);
    if (n.ok()) o.verbosity = static_cast<int>(*n);
  }
  if (has("zap-encoder") && given["zap-encoder"] == "json") o.log_format = "json";
  if (has("v")) {
    ASSIGN_OR_RETURN(int64_t n, ParseInt("v", given["v"]));
    o.verbosity = static_cast<int>(n);
  }
  if (has("log-format")) {
    o.log_format = given["log-format"];
    if (o.log_format != "text" && o.log_format != "json") {
      return InvalidArgumentError("--log-format must be text or json");
    }
  }
  return o;
}

}  // namespace trainer::controller
