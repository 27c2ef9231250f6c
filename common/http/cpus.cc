// UsableCpus and the cgroup CPU limit (see cpus.h).
#include "common/http/cpus.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <thread>
#include <vector>

#include "common/files/files.h"

namespace trainer::http {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return s;
}

std::optional<long long> ParseInt(std::string_view s) {
  s = Trim(s);
  long long v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

int CpusOf(long long quota, long long period) {
  if (quota <= 0 || period <= 0) return 0;
  return static_cast<int>(std::min<long long>((quota + period - 1) / period, 1 << 20));
}

std::optional<std::string> Read(const std::string& path) {
  StatusOr<std::string> text = files::ReadFile(path);
  if (!text.ok()) return std::nullopt;
  return std::move(text).value();
}

// Whether the comma-separated `list` holds `item`.
bool ListHas(std::string_view list, std::string_view item) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    if (list.substr(0, comma) == item) return true;
    list = comma == std::string_view::npos ? "" : list.substr(comma + 1);
  }
  return false;
}

// The cgroup path of v1 `controller` in /proc/self/cgroup's "hierarchy:controllers:path" lines,
// or with "" cgroup v2's ("0::path"); nullopt if the process has none.
std::optional<std::string> CgroupPath(std::string_view proc_self_cgroup,
                                      std::string_view controller) {
  while (!proc_self_cgroup.empty()) {
    size_t nl = proc_self_cgroup.find('\n');
    std::string_view line = proc_self_cgroup.substr(0, nl);
    proc_self_cgroup = nl == std::string_view::npos ? "" : proc_self_cgroup.substr(nl + 1);
    size_t a = line.find(':');
    size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    std::string_view controllers = line.substr(a + 1, b - a - 1);
    bool match = controller.empty() ? line.substr(0, a) == "0" && controllers.empty()
                                    : ListHas(controllers, controller);
    if (match) return std::string(line.substr(b + 1));
  }
  return std::nullopt;
}

// The directories to look in: the process's cgroup under `mount` and each of its ancestors up
// to `mount` itself (a container's cgroup namespace, or its v1 mounts, show it its own cgroup at
// the mount's root; the levels that do not exist there are simply not found).
std::vector<std::string> Dirs(const std::string& mount, const std::optional<std::string>& path) {
  std::vector<std::string> out;
  std::string_view p = path.has_value() ? std::string_view(*path) : std::string_view();
  while (!p.empty() && p != "/") {
    out.push_back(mount + std::string(p));
    size_t slash = p.rfind('/');
    p = slash == std::string_view::npos ? std::string_view() : p.substr(0, slash);
  }
  out.push_back(mount);
  return out;
}

// The smaller of two limits, 0 meaning none.
int Tighter(int a, int b) { return a == 0 ? b : b == 0 ? a : std::min(a, b); }

}  // namespace

int CpusOfCpuMax(std::string_view cpu_max) {
  cpu_max = Trim(cpu_max);
  size_t sp = cpu_max.find(' ');
  if (sp == std::string_view::npos) return 0;
  std::optional<long long> quota = ParseInt(cpu_max.substr(0, sp));
  std::optional<long long> period = ParseInt(cpu_max.substr(sp + 1));
  return quota && period ? CpusOf(*quota, *period) : 0;  // "max": unlimited
}

int CgroupCpuLimit(const std::string& cgroup_root, std::string_view proc_self_cgroup) {
  int limit = 0;
  bool v2_found = false;  // hybrid hosts list a v2 cgroup without its cpu controller: then v1's
  if (std::optional<std::string> v2 = CgroupPath(proc_self_cgroup, ""); v2.has_value()) {
    for (const std::string& dir : Dirs(cgroup_root, v2)) {
      if (std::optional<std::string> max = Read(dir + "/cpu.max")) {
        limit = Tighter(limit, CpusOfCpuMax(*max));
        v2_found = true;
      }
    }
  }
  if (v2_found) return limit;
  std::optional<std::string> v1 = CgroupPath(proc_self_cgroup, "cpu");
  if (!v1.has_value()) return 0;
  for (const char* mount : {"/cpu", "/cpu,cpuacct", "/cpuacct,cpu"}) {
    for (const std::string& dir : Dirs(cgroup_root + mount, v1)) {
      std::optional<std::string> quota = Read(dir + "/cpu.cfs_quota_us");
      std::optional<std::string> period = Read(dir + "/cpu.cfs_period_us");
      if (!quota || !period) continue;
      std::optional<long long> q = ParseInt(*quota), p = ParseInt(*period);
      limit = Tighter(limit, q && p ? CpusOf(*q, *p) : 0);
    }
  }
  return limit;
}

int UsableCpus() {
  static const int cpus = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    int n = sched_getaffinity(0, sizeof(set), &set) == 0
                ? CPU_COUNT(&set)
                : static_cast<int>(std::thread::hardware_concurrency());
    std::optional<std::string> self = Read("/proc/self/cgroup");
    int limit = self ? CgroupCpuLimit("/sys/fs/cgroup", *self) : 0;
    if (limit > 0) n = std::min(n, limit);
    return std::max(1, n);
  }();
  return cpus;
}

}  // namespace trainer::http
