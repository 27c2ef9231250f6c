// ParseOptions (see options.h).
#include "webhook/options.h"

#include <charconv>
#include <functional>
#include <map>
#include <type_traits>

namespace trainer::webhook {
namespace {

Status ParseInt(std::string_view flag, const std::string& value, int64_t lo, int64_t hi,
                int64_t* out) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || ptr != value.data() + value.size()) {
    return InvalidArgumentError(std::string(flag) + ": expected an integer, got \"" + value + "\"");
  }
  if (v < lo || v > hi) {
    return InvalidArgumentError(std::string(flag) + ": " + value + " is out of range [" +
                                std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  *out = v;
  return OkStatus();
}

}  // namespace

std::string Usage() {
  return "usage: trainer-webhook [flags]\n"
         "  --port=9443                        webhook HTTPS port\n"
         "  --cert-dir=DIR                     tls.crt and tls.key (default "
         "/tmp/k8s-webhook-server/serving-certs), reloaded on change\n"
         "  --metrics-bind-address=:8080       metrics server address; 0 disables\n"
         "  --health-probe-bind-address=:8081  /healthz and /readyz address; 0 disables\n"
         "  --kubeconfig=PATH                  kubeconfig (else $KUBECONFIG, else in-cluster)\n"
         "  -v=N                               log verbosity\n"
         "  --log-format=text|json             log format\n"
         "  --webhook-threads=16               HTTPS threads kept when idle (each open connection\n"
         "                                     has one; more start on demand)\n"
         "  --offline-runtimes=FILE            serve runtimes from manifests instead of the "
         "cluster (development, benchmarks); repeatable\n";
}

StatusOr<Options> ParseOptions(const std::vector<std::string>& args) {
  Options o;
  using Setter = std::function<Status(const std::string&)>;
  auto integer = [](std::string_view flag, int64_t lo, int64_t hi, auto* dest) {
    return Setter([flag, lo, hi, dest](const std::string& v) {
      int64_t n = 0;
      RETURN_IF_ERROR(ParseInt(flag, v, lo, hi, &n));
      *dest = static_cast<std::remove_pointer_t<decltype(dest)>>(n);
      return OkStatus();
    });
  };
  auto text = [](std::string* dest) {
    return Setter([dest](const std::string& v) {
      *dest = v;
      return OkStatus();
    });
  };
  const std::map<std::string, Setter, std::less<>> setters = {
      {"port", integer("--port", 1, 65535, &o.port)},
      {"cert-dir", text(&o.cert_dir)},
      {"metrics-bind-address", text(&o.metrics_bind_address)},
      {"health-probe-bind-address", text(&o.health_probe_bind_address)},
      {"kubeconfig", text(&o.kubeconfig)},
      {"v", integer("-v", 0, 10, &o.verbosity)},
      {"log-format",
       [&o](const std::string& v) {
         if (v != "text" && v != "json") {
           return InvalidArgumentError("--log-format: expected text or json, got \"" + v + "\"");
         }
         o.log_format = v;
         return OkStatus();
       }},
      {"webhook-threads", integer("--webhook-threads", 1, 512, &o.threads)},
      {"offline-runtimes",
       [&o](const std::string& v) {
         o.offline_runtimes.push_back(v);
         return OkStatus();
       }},
  };
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    if (a == "-h" || a == "--help" || a == "-help") {
      o.help = true;
      continue;
    }
    if (a.size() < 2 || a[0] != '-') {
      return InvalidArgumentError("unexpected argument \"" + std::string(a) + "\"");
    }
    a.remove_prefix(a[1] == '-' ? 2 : 1);
    std::string name(a.substr(0, a.find('=')));
    auto it = setters.find(name);
    if (it == setters.end()) {
      return InvalidArgumentError("unknown flag \"" + args[i] + "\"");
    }
    std::string value;
    if (size_t eq = a.find('='); eq != std::string_view::npos) {
      value = std::string(a.substr(eq + 1));
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return InvalidArgumentError("flag \"" + args[i] + "\" needs a value");
    }
    RETURN_IF_ERROR(it->second(value));
  }
  return o;
}

}  // namespace trainer::webhook
