// Strict decoding, defaults and validation of upstream's Configuration (see configuration.h).
#include "common/service/configuration.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/files/files.h"
#include "common/flags/flags.h"
#include "common/json/json.h"
#include "common/yaml/yaml.h"

namespace trainer::service {
namespace {

// ---- strict decoding: the schema of upstream's Configuration ----

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
  std::string_view go_struct = {};   // for kObject: upstream's Go type, in type errors
};

const std::vector<Field>& Schema() {
  static const std::vector<Field> schema = {
      {"apiVersion", Kind::kString},
      {"kind", Kind::kString},
      {"webhook",
       Kind::kObject,
       {{"port", Kind::kInt32}, {"host", Kind::kString}},
       "ControllerWebhook"},
      {"leaderElection",
       Kind::kObject,
       {{"leaderElect", Kind::kBool},
        {"leaseDuration", Kind::kDuration},
        {"renewDeadline", Kind::kDuration},
        {"retryPeriod", Kind::kDuration},
        {"resourceLock", Kind::kString},
        {"resourceName", Kind::kString},
        {"resourceNamespace", Kind::kString}},
       "LeaderElectionConfiguration"},
      {"metrics",
       Kind::kObject,
       {{"bindAddress", Kind::kString},
        {"secureServing", Kind::kBool},
        {"auth", Kind::kObject, {{"enabled", Kind::kBool}}, "ControllerMetricsAuth"}},  // [HEAD]
       "ControllerMetrics"},
      {"health",
       Kind::kObject,
       {{"healthProbeBindAddress", Kind::kString},
        {"readinessEndpointName", Kind::kString},
        {"livenessEndpointName", Kind::kString}},
       "ControllerHealth"},
      {"controller",
       Kind::kObject,
       {{"groupKindConcurrency", Kind::kMapInt32}},
       "ControllerConfigurationSpec"},
      {"certManagement",
       Kind::kObject,
       {{"enable", Kind::kBool},
        {"webhookServiceName", Kind::kString},
        {"webhookSecretName", Kind::kString}},
       "CertManagement"},
      {"clientConnection",
       Kind::kObject,
       {{"qps", Kind::kFloat}, {"burst", Kind::kInt32}},
       "ClientConnection"},
      {"statusServer",
       Kind::kObject,
       {{"port", Kind::kInt32}, {"qps", Kind::kFloat}, {"burst", Kind::kInt32}},
       "StatusServer"},
      {"featureGates", Kind::kMapBool},
      {"tls",
       Kind::kObject,
       {{"minVersion", Kind::kString},
        {"cipherSuites", Kind::kStringList},
        {"nextProtos", Kind::kStringList}},
       "TLSOptions"},
  };
  return schema;
}

std::string Path(std::string_view parent, std::string_view name) {
  return parent.empty() ? std::string(name) : std::string(parent) + "." + std::string(name);
}

bool IsInt32(const json::Value& v) {
  if (v.IsInt()) return v.AsInt() >= INT32_MIN && v.AsInt() <= INT32_MAX;
  if (v.IsDouble()) {
    double d = v.AsDouble();
    return std::floor(d) == d && d >= INT32_MIN && d <= INT32_MAX;
  }
  return false;
}

// A number as Go's encoding/json writes it (what upstream's YAML-to-JSON step hands its
// decoder).
std::string GoJsonNumber(const json::Value& v) {
  return v.IsInt() ? std::to_string(v.AsInt()) : json::GoJsonFloat(v.AsDouble());
}

// The members of an object by key: the order upstream's decoder meets them in.
std::vector<const json::Member*> Sorted(const json::Value& obj) {
  std::vector<const json::Member*> members;
  for (const json::Member& m : obj.members()) members.push_back(&m);
  std::sort(members.begin(), members.end(),
            [](const json::Member* a, const json::Member* b) { return a->first < b->first; });
  return members;
}

// What Go's encoding/json calls the JSON value in an UnmarshalTypeError.
std::string GoJsonKind(const json::Value& v) {
  if (v.IsNumber()) return "number";
  if (v.IsBool()) return "bool";
  if (v.IsString()) return "string";
  return v.IsArray() ? "array" : "object";  // null is never a type error
}

// The value of a numeric field's type error: a number that does not fit is named with its text
// ("number 1.5"), any other value by its kind.
std::string NotANumberOf(const json::Value& v) {
  return v.IsNumber() ? "number " + GoJsonNumber(v) : GoJsonKind(v);
}

// Checks a parsed Configuration against the schema as upstream's strict decoder does
// (sigs.k8s.io/json over the YAML turned into JSON, keys sorted): the first type error wins,
// a bad duration stops it at once, and otherwise the keys the YAML set twice (`duplicates`, as
// the YAML decoder reported them) and every unknown field are named. Lists the paths the file
// sets in `fields`, in that order.
class Checker {
 public:
  explicit Checker(std::vector<std::string>* fields) : fields_(fields) {}

  Status Check(const json::Value& doc, const std::vector<yaml::DuplicateKey>& duplicates) {
    RETURN_IF_ERROR(Object(Schema(), doc, "", "Configuration"));
    if (!type_error_.ok()) return type_error_;
    std::vector<std::string> strict;
    if (!duplicates.empty()) {
      std::string yaml_errors = "yaml: unmarshal errors:";
      for (const yaml::DuplicateKey& d : duplicates) {
        yaml_errors +=
            "\n  line " + std::to_string(d.line) + ": key " + d.key + " already set in map";
      }
      strict.push_back(std::move(yaml_errors));
    }
    for (const std::string& field : unknown_) {
      strict.push_back("unknown field \"" + field + "\"");
    }
    if (strict.empty()) return OkStatus();
    std::string msg = "strict decoding error: ";
    for (size_t i = 0; i < strict.size(); ++i) {
      msg += (i > 0 ? ", " : "") + strict[i];
    }
    return InvalidArgumentError(msg);
  }

 private:
  Status Object(const std::vector<Field>& schema, const json::Value& obj, const std::string& path,
                std::string_view go_struct) {
    for (const json::Member* m : Sorted(obj)) {
      const Field* field = nullptr;
      for (const Field& f : schema) {
        if (f.name == m->first) field = &f;
      }
      if (field == nullptr) {
        unknown_.push_back(Path(path, m->first));
        continue;
      }
      RETURN_IF_ERROR(Value(*field, m->second, Path(path, m->first), go_struct));
    }
    return OkStatus();
  }

  // Go's UnmarshalTypeError; only the first is kept, as encoding/json keeps it.
  void TypeError(std::string_view go_struct, const std::string& path, std::string value,
                 std::string_view go_type) {
    if (!type_error_.ok()) return;
    type_error_ = InvalidArgumentError("json: cannot unmarshal " + value +
                                       " into Go struct field " + std::string(go_struct) + "." +
                                       path + " of type " + std::string(go_type));
  }

  Status Value(const Field& f, const json::Value& v, const std::string& path,
               std::string_view go_struct) {
    if (v.IsNull()) return OkStatus();
    switch (f.kind) {
      case Kind::kObject:
        if (!v.IsObject()) {
          TypeError(go_struct, path, GoJsonKind(v), "v1alpha1." + std::string(f.go_struct));
          return OkStatus();
        }
        return Object(f.children, v, path, f.go_struct);
      case Kind::kMapInt32:
      case Kind::kMapBool:
        Map(f, v, path, go_struct);
        return OkStatus();
      case Kind::kDuration:
        if (!v.IsString()) {
          TypeError(go_struct, path, GoJsonKind(v), "string");  // metav1.Duration reads a string
          return OkStatus();
        }
        // metav1.Duration's own error: encoding/json stops at it.
        RETURN_IF_ERROR(flags::ParseGoDuration(v.AsString()).status());
        break;
      default:
        if (!Scalar(f.kind, v, path, go_struct)) return OkStatus();
    }
    // An empty string is Go's zero value: as good as unset (the shipped file has host: "").
    if (!(v.IsString() && v.AsString().empty())) fields_->push_back(path);
    return OkStatus();
  }

  // Map values are named by the map's path, as encoding/json names them.
  void Map(const Field& f, const json::Value& v, const std::string& path,
           std::string_view go_struct) {
    const bool int32 = f.kind == Kind::kMapInt32;
    if (!v.IsObject()) {
      TypeError(go_struct, path, GoJsonKind(v), int32 ? "map[string]int32" : "map[string]bool");
      return;
    }
    for (const json::Member* m : Sorted(v)) {
      const Kind kind = int32 ? Kind::kInt32 : Kind::kBool;
      if (!m->second.IsNull() && !Scalar(kind, m->second, path, go_struct)) continue;
      fields_->push_back(path + "[" + m->first + "]");
    }
  }

  // False after recording the type error of a value that is not of `kind`.
  bool Scalar(Kind kind, const json::Value& v, const std::string& path,
              std::string_view go_struct) {
    switch (kind) {
      case Kind::kString:
        if (v.IsString()) return true;
        TypeError(go_struct, path, GoJsonKind(v), "string");
        return false;
      case Kind::kBool:
        if (v.IsBool()) return true;
        TypeError(go_struct, path, GoJsonKind(v), "bool");
        return false;
      case Kind::kInt32:
        if (IsInt32(v)) return true;
        TypeError(go_struct, path, NotANumberOf(v), "int32");
        return false;
      case Kind::kFloat:
        if (v.IsNumber() && std::fabs(v.AsDouble()) <= 3.4028234663852886e38) return true;
        TypeError(go_struct, path, NotANumberOf(v), "float32");
        return false;
      case Kind::kStringList: {
        if (!v.IsArray()) {
          TypeError(go_struct, path, GoJsonKind(v), "[]string");
          return false;
        }
        bool ok = true;
        for (const json::Value& e : v.elements()) {
          if (!e.IsNull()) ok = Scalar(Kind::kString, e, path, go_struct) && ok;
        }
        return ok;
      }
      default:
        return true;
    }
  }

  std::vector<std::string>* fields_;
  Status type_error_;
  std::vector<std::string> unknown_;
};

// ---- reading the sections, with upstream's validation ----

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

void CheckPort(const json::Value& doc, std::string_view section, std::vector<std::string>& errs) {
  if (const json::Value* v = At(doc, section, "port");
      v && (v->AsInt() < 1 || v->AsInt() > 65535)) {
    errs.push_back(std::string(section) + ".port: Invalid value: " + std::to_string(v->AsInt()) +
                   ": must be between 1 and 65535");
  }
}

// <section>.qps and <section>.burst must be >= 0 (clientConnection and statusServer share it).
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

void ReadLeaderElection(const json::Value& le, Configuration& cfg) {
  Configuration::LeaderElection l;
  // An unset or zero leaseDuration etc. keeps our default (15 s / 10 s / 2 s, controller-runtime's);
  // upstream passes it on as 0 and client-go refuses it. trainer-controller checks the timings
  // it ends up with as client-go does (controller/options.cc).
  if (const json::Value* v = le.Find("leaderElect"); v && v->IsBool()) l.leader_elect = v->AsBool();
  for (auto [name, out] :
       {std::pair{"resourceLock", &l.resource_lock}, std::pair{"resourceName", &l.resource_name},
        std::pair{"resourceNamespace", &l.resource_namespace}}) {
    if (const json::Value* v = le.Find(name); v && v->IsString()) *out = v->AsString();
  }
  for (auto [name, out] :
       {std::pair{"leaseDuration", &l.lease_duration},
        std::pair{"renewDeadline", &l.renew_deadline}, std::pair{"retryPeriod", &l.retry_period}}) {
    if (const json::Value* v = le.Find(name); v && v->IsString()) {
      StatusOr<std::chrono::milliseconds> d = flags::ParseGoDuration(v->AsString());
      // 0 is unset (upstream defaults it); a negative one is refused with client-go's words.
      if (d.ok() && d->count() != 0) *out = *d;
    }
  }
  cfg.leader_election = l;
}

// Upstream's ValidateConfiguration, in its order.
std::vector<std::string> Validate(const json::Value& doc) {
  std::vector<std::string> errs;
  CheckPort(doc, "webhook", errs);
  CheckQpsBurst(doc, "clientConnection", errs);
  if (const json::Value* gkc = At(doc, "controller", "groupKindConcurrency")) {
    for (const json::Member& m : gkc->members()) {
      if (m.second.AsInt() < 1) {
        errs.push_back("controller.groupKindConcurrency[" + m.first + "]: Invalid value: " +
                       std::to_string(m.second.AsInt()) + ": must be greater than 0");
      }
    }
  }
  CheckPort(doc, "statusServer", errs);
  CheckQpsBurst(doc, "statusServer", errs);
  return errs;
}

void ReadServing(const json::Value& doc, Configuration& cfg) {
  if (const json::Value* v = At(doc, "webhook", "port")) cfg.webhook_port = v->AsInt();
  if (const json::Value* v = At(doc, "webhook", "host")) cfg.webhook_host = v->AsString();
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
  if (const json::Value* v = At(doc, "certManagement", "enable")) {
    cfg.cert_management_enable = v->AsBool();
  }
  if (const json::Value* v = At(doc, "certManagement", "webhookServiceName");
      v && !v->AsString().empty()) {
    cfg.webhook_service_name = v->AsString();
  }
  if (const json::Value* v = At(doc, "certManagement", "webhookSecretName");
      v && !v->AsString().empty()) {
    cfg.webhook_secret_name = v->AsString();
  }
}

void ReadControllers(const json::Value& doc, Configuration& cfg) {
  if (const json::Value* v = At(doc, "clientConnection", "qps")) cfg.qps = v->AsDouble();
  if (const json::Value* v = At(doc, "clientConnection", "burst")) cfg.burst = v->AsInt();
  if (const json::Value* gkc = At(doc, "controller", "groupKindConcurrency")) {
    for (const json::Member& m : gkc->members()) {
      cfg.group_kind_concurrency[m.first] = static_cast<int32_t>(m.second.AsInt());
    }
  }
  if (const json::Value* v = At(doc, "statusServer", "port")) {
    cfg.status_server_port = static_cast<int32_t>(v->AsInt());
  }
  if (const json::Value* v = At(doc, "statusServer", "qps")) cfg.status_server_qps = v->AsDouble();
  if (const json::Value* v = At(doc, "statusServer", "burst")) {
    cfg.status_server_burst = static_cast<int32_t>(v->AsInt());
  }
  if (const json::Value* fg = doc.Find("featureGates"); fg != nullptr && fg->IsObject()) {
    for (const json::Member& m : fg->members()) cfg.feature_gates[m.first] = m.second.AsBool();
  }
  if (const json::Value* le = doc.Find("leaderElection"); le != nullptr && le->IsObject()) {
    ReadLeaderElection(*le, cfg);
  }
}

// Upstream decodes into a Configuration (runtime.DecodeInto), which fills an absent apiVersion or
// kind from it: a file without them, or an empty one, is a Configuration of defaults.
Status CheckHeader(const json::Value& doc) {
  if (!doc.IsObject()) {
    return InvalidArgumentError("couldn't get version/kind: expected a Configuration object, got " +
                                std::string(json::DescribeType(doc)));
  }
  auto field = [&doc](const char* key, std::string_view absent) {
    const json::Value* v = doc.Find(key);
    return v != nullptr && v->IsString() && !v->AsString().empty() ? v->AsString()
                                                                  : std::string(absent);
  };
  const std::string api_version = field("apiVersion", kConfigAPIVersion);
  const std::string kind = field("kind", "Configuration");
  if (api_version != kConfigAPIVersion || kind != "Configuration") {
    return InvalidArgumentError("no kind \"" + kind + "\" is registered for version \"" +
                                api_version + "\"");
  }
  return OkStatus();
}

// field.ErrorList.ToAggregate(): one error as is, several as "[a, b]".
std::string Aggregate(const std::vector<std::string>& errs) {
  if (errs.size() == 1) return errs[0];
  std::string msg = "[";
  for (size_t i = 0; i < errs.size(); ++i) msg += (i ? ", " : "") + errs[i];
  return msg + "]";
}

}  // namespace

bool Configuration::Has(std::string_view path) const {
  for (const std::string& f : fields) {
    if (f == path) return true;
  }
  return false;
}

StatusOr<Configuration> ParseConfiguration(std::string_view text) {
  std::vector<yaml::DuplicateKey> duplicates;
  StatusOr<json::Value> parsed = yaml::ParseYamlKeepingLast(text, &duplicates);
  if (!parsed.ok()) {
    return parsed.status().WithContext("failed to decode config file");
  }
  if (parsed->IsNull()) *parsed = json::Value::Object();  // an empty file
  const json::Value& doc = *parsed;
  Configuration cfg;
  RETURN_IF_ERROR(CheckHeader(doc).WithContext("failed to decode config file"));
  RETURN_IF_ERROR(
      Checker(&cfg.fields).Check(doc, duplicates).WithContext("failed to decode config file"));
  if (std::vector<std::string> errs = Validate(doc); !errs.empty()) {
    return InvalidArgumentError("invalid configuration: " + Aggregate(errs));
  }
  ReadServing(doc, cfg);
  ReadControllers(doc, cfg);
  if (!cfg.qps) cfg.qps = 50;
  if (!cfg.burst) cfg.burst = 100;
  return cfg;
}

StatusOr<Configuration> LoadConfiguration(const std::string& path) {
  StatusOr<std::string> text = files::ReadFile(path);
  if (!text.ok()) {
    return InvalidArgumentError("failed to read config file: " + text.status().message());
  }
  return ParseConfiguration(*text);
}

std::vector<std::string> IgnoredFields(const Configuration& cfg,
                                       const std::vector<std::string_view>& applicable) {
  auto covered = [&](std::string_view field) {
    if (field == "apiVersion" || field == "kind") return true;
    for (std::string_view a : applicable) {
      if (field.starts_with(a) &&
          (field.size() == a.size() || field[a.size()] == '.' || field[a.size()] == '[')) {
        return true;
      }
    }
    return false;
  };
  std::vector<std::string> out;
  for (const std::string& f : cfg.fields) {
    if (!covered(f)) out.push_back(f);
  }
  return out;
}

}  // namespace trainer::service
