// Registry wrapper, bucket presets and the /proc-based process collector (see metrics.h).
#include "common/metrics/metrics.h"

#include <dirent.h>
#include <prometheus/check_names.h>
#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

namespace trainer::metrics {
namespace {

[[noreturn]] void Die(std::string_view what, std::string_view name, std::string_view why) {
  std::fprintf(stderr, "metrics: %.*s %.*s: %.*s\n", static_cast<int>(what.size()), what.data(),
               static_cast<int>(name.size()), name.data(), static_cast<int>(why.size()),
               why.data());
  std::abort();
}

// prometheus-cpp throws on misuse (bad names, a name reused with another type); our names are
// constants, so this is a bug in the caller, reported at the first call.
template <typename Builder>
auto& RegisterOrDie(Builder builder, std::string_view name, prometheus::Registry& registry) {
  if (!prometheus::CheckMetricName(std::string(name))) {
    Die("invalid metric name", name, "must match [a-zA-Z_:][a-zA-Z0-9_:]*");
  }
  try {
    return builder.Name(std::string(name)).Register(registry);
  } catch (const std::exception& e) {
    Die("registering", name, e.what());
  }
}

}  // namespace

const Buckets& DefBuckets() {
  static const Buckets kBuckets = {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};
  return kBuckets;
}

const Buckets& ReconcileTimeBuckets() {
  static const Buckets kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3,  0.35,
                                   0.4,   0.45, 0.5,   0.6,  0.7, 0.8,  0.9, 1.0,  1.25, 1.5,
                                   1.75,  2.0,  2.5,   3.0,  3.5, 4.0,  4.5, 5,    6,    7,
                                   8,     9,    10,    15,   20,  25,   30,  40,   50,   60};
  return kBuckets;
}

Buckets ExponentialBuckets(double start, double factor, int count) {
  Buckets out;
  double v = start;
  for (int i = 0; i < count; ++i) {
    out.push_back(v);
    v *= factor;
  }
  return out;
}

Registry::Registry() : registry_(std::make_shared<prometheus::Registry>()) {}

prometheus::Family<prometheus::Counter>& Registry::Counter(std::string_view name,
                                                           std::string_view help) {
  return RegisterOrDie(prometheus::BuildCounter().Help(std::string(help)), name, *registry_);
}

prometheus::Family<prometheus::Gauge>& Registry::Gauge(std::string_view name,
                                                       std::string_view help) {
  return RegisterOrDie(prometheus::BuildGauge().Help(std::string(help)), name, *registry_);
}

prometheus::Family<prometheus::Histogram>& Registry::Histogram(std::string_view name,
                                                               std::string_view help) {
  return RegisterOrDie(prometheus::BuildHistogram().Help(std::string(help)), name, *registry_);
}

void Registry::AddCollectable(std::shared_ptr<prometheus::Collectable> collectable) {
  std::lock_guard<std::mutex> lock(mu_);
  extra_.push_back(std::move(collectable));
}

std::string Registry::Text() const {
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& c : extra_) {
      std::vector<prometheus::MetricFamily> more = c->Collect();
      families.insert(families.end(), std::make_move_iterator(more.begin()),
                      std::make_move_iterator(more.end()));
    }
  }
  // A family with no metric yet (labels never used) would be a HELP/TYPE pair with no sample;
  // leave it out as client_golang does.
  std::erase_if(families, [](const prometheus::MetricFamily& f) { return f.metric.empty(); });
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

Registry& DefaultRegistry() {
  static Registry* registry = new Registry();  // never destroyed: used from detached threads
  return *registry;
}

namespace {

prometheus::MetricFamily GaugeFamily(std::string name, std::string help, double value,
                                     prometheus::MetricType type = prometheus::MetricType::Gauge) {
  prometheus::MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(std::move(m));
  return f;
}

// Reads what the Go process collector reports, from /proc/self.
class ProcessCollector final : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> out;
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
    std::ifstream stat_file("/proc/self/stat");
    std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
    // Fields after the command name "(comm)", which may itself contain spaces.
    size_t close = stat.rfind(')');
    if (close != std::string::npos && ticks > 0) {
      std::istringstream fields(stat.substr(close + 2));
      std::vector<std::string> f((std::istream_iterator<std::string>(fields)),
                                 std::istream_iterator<std::string>());
      // f[0] is field 3 (state): utime=14, stime=15, starttime=22, vsize=23, rss=24.
      if (f.size() > 21) {
        double cpu =
            (std::strtod(f[11].c_str(), nullptr) + std::strtod(f[12].c_str(), nullptr)) / ticks;
        out.push_back(GaugeFamily("process_cpu_seconds_total",
                                  "Total user and system CPU time spent in seconds.", cpu,
                                  prometheus::MetricType::Counter));
        out.push_back(GaugeFamily("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                                  std::strtod(f[20].c_str(), nullptr)));
        out.push_back(GaugeFamily("process_resident_memory_bytes", "Resident memory size in bytes.",
                                  std::strtod(f[21].c_str(), nullptr) * page));
        double boot = BootTime();
        if (boot > 0) {
          out.push_back(GaugeFamily("process_start_time_seconds",
                                    "Start time of the process since unix epoch in seconds.",
                                    boot + std::strtod(f[19].c_str(), nullptr) / ticks));
        }
      }
    }
    out.push_back(GaugeFamily("process_open_fds", "Number of open file descriptors.", OpenFds()));
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0) {
      out.push_back(GaugeFamily("process_max_fds", "Maximum number of open file descriptors.",
                                static_cast<double>(lim.rlim_cur)));
    }
    return out;
  }

 private:
  static double BootTime() {
    std::ifstream in("/proc/stat");
    std::string key;
    while (in >> key) {
      if (key == "btime") {
        double v = 0;
        in >> v;
        return v;
      }
      in.ignore(1 << 20, '\n');
    }
    return 0;
  }

  static double OpenFds() {
    DIR* dir = opendir("/proc/self/fd");
    if (dir == nullptr) {
      return 0;
    }
    int n = 0;
    while (struct dirent* e = readdir(dir)) {
      if (e->d_name[0] != '.') {
        ++n;
      }
    }
    closedir(dir);
    return n - 1;  // the fd opendir itself holds
  }
};

}  // namespace

void RegisterProcessCollector(Registry& registry) {
  registry.AddCollectable(std::make_shared<ProcessCollector>());
}

}  // namespace trainer::metrics
