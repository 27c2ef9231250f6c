// How many CPUs this process may use: the CPUs it may run on (its affinity), capped by its
// cgroup's CPU quota, as Go's runtime sets GOMAXPROCS since 1.25. A pod with `limits.cpu: 1` on
// a 64-core node may run on 64 CPUs but gets one CPU's time: the busy poll's limits
// (server.h: BusyPollLimit, BusyPollActiveLimit) must count one, or their spinning threads spend
// the quota and the kernel throttles the whole process.
#pragma once

#include <string>
#include <string_view>

namespace trainer::http {

// The CPUs this process may use, at least 1; read once.
int UsableCpus();

// The CPU limit of the cgroup that /proc/self/cgroup (`proc_self_cgroup`'s text) names, with the
// cgroup file systems mounted under `cgroup_root` (/sys/fs/cgroup): cgroup v2's cpu.max, else
// v1's cpu.cfs_quota_us / cpu.cfs_period_us, quota divided by period and rounded up. The
// tightest limit of the process's own cgroup and its ancestors under the mount, the mount's root
// included (a container's cgroup namespace or its v1 mounts show it its own cgroup there; a
// pod-level limit sits on the container's parent), as the kernel applies them all. 0: no limit,
// or none found.
int CgroupCpuLimit(const std::string& cgroup_root, std::string_view proc_self_cgroup);

// cgroup v2's cpu.max ("max 100000", "150000 100000") as CPUs, rounded up; 0 when unlimited or
// not understood.
int CpusOfCpuMax(std::string_view cpu_max);

}  // namespace trainer::http
