// common/http/cpus.h: the cgroup CPU limit that caps UsableCpus, on cgroup v1 and v2 layouts
// written into a temporary directory.
#include "common/http/cpus.h"

#include <catch2/catch.hpp>
#include <thread>

#include "common/files/testing/temp_dir.h"

namespace trainer::http {
namespace {

// A cgroup file system root: files written with Write, read by CgroupCpuLimit.
struct CgroupRoot : files::testing::TempDir {
  int Limit(std::string_view self) { return CgroupCpuLimit(path.string(), self); }
  // cgroup v1's cpu.cfs_quota_us of `dir` (under a cpu controller's mount), period 100 ms.
  void V1Quota(const std::string& dir, const std::string& quota_us) const {
    Write(dir + "/cpu.cfs_quota_us", quota_us + "\n");
    Write(dir + "/cpu.cfs_period_us", "100000\n");
  }
};

TEST_CASE("cpu.max: quota over period, rounded up; max is no limit", "[cpus]") {
  CHECK(CpusOfCpuMax("max 100000\n") == 0);
  CHECK(CpusOfCpuMax("100000 100000\n") == 1);
  CHECK(CpusOfCpuMax("150000 100000") == 2);
  CHECK(CpusOfCpuMax("50000 100000") == 1);
  CHECK(CpusOfCpuMax("400000 100000") == 4);
  CHECK(CpusOfCpuMax("") == 0);
  CHECK(CpusOfCpuMax("garbage") == 0);
  CHECK(CpusOfCpuMax("100000 0") == 0);
}

TEST_CASE("cgroup v2: the process's own cgroup, else the mount's root", "[cpus]") {
  CgroupRoot root;
  const std::string self = "0::/kubepods/pod1/c1\n";
  CHECK(root.Limit(self) == 0);  // no file at all: no limit known
  root.Write("cpu.max", "max 100000\n");
  CHECK(root.Limit(self) == 0);  // a container's namespace: its own cgroup at the root
  root.Write("kubepods/pod1/c1/cpu.max", "100000 100000\n");
  CHECK(root.Limit(self) == 1);
  CHECK(root.Limit("0::/\n") == 0);  // "/": the root's file
}

TEST_CASE("cgroup v2: the tightest limit on the way up, a pod-level one included", "[cpus]") {
  CgroupRoot root;
  const std::string self = "0::/kubepods/pod1/c1\n";
  root.Write("kubepods/pod1/c1/cpu.max", "max 100000\n");
  root.Write("kubepods/pod1/cpu.max", "200000 100000\n");  // the pod's limit, the container none
  CHECK(root.Limit(self) == 2);
  root.Write("kubepods/cpu.max", "100000 100000\n");
  CHECK(root.Limit(self) == 1);
  root.Write("kubepods/pod1/c1/cpu.max", "400000 100000\n");  // looser below: the parent's holds
  CHECK(root.Limit(self) == 1);
}

TEST_CASE("a hybrid host: a v2 cgroup without cpu.max leaves the limit to v1", "[cpus]") {
  CgroupRoot root;
  root.V1Quota("cpu,cpuacct/kubepods/c1", "100000");
  CHECK(root.Limit("4:cpu,cpuacct:/kubepods/c1\n0::/kubepods/c1\n") == 1);
}

TEST_CASE("cgroup v1: cfs quota and period of the cpu controller", "[cpus]") {
  CgroupRoot root;
  const std::string self =
      "12:memory:/kubepods/pod1/c1\n4:cpu,cpuacct:/kubepods/pod1/c1\n1:name=systemd:/x\n";
  root.V1Quota("cpu,cpuacct/kubepods/pod1/c1", "250000");
  CHECK(root.Limit(self) == 3);
  root.V1Quota("cpu,cpuacct/kubepods/pod1/c1", "-1");
  CHECK(root.Limit(self) == 0);  // -1: unlimited
  root.V1Quota("cpu,cpuacct/kubepods/pod1", "150000");  // the pod's
  CHECK(root.Limit(self) == 2);
}

TEST_CASE("cgroup v1 inside a container: the mount's root is its cgroup", "[cpus]") {
  CgroupRoot root;
  root.V1Quota("cpu", "100000");
  CHECK(root.Limit("3:cpu:/kubepods/pod1/c1\n") == 1);
  CHECK(root.Limit("3:memory:/kubepods/pod1/c1\n") == 0);  // no cpu controller listed
}

TEST_CASE("UsableCpus is at least 1 and at most the hardware's", "[cpus]") {
  CHECK(UsableCpus() >= 1);
  CHECK(UsableCpus() <= static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

}  // namespace
}  // namespace trainer::http
