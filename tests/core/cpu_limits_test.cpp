// The CPU quota read from a cgroup tree laid out in a temporary folder (v1 and v2, nested
// limits, container mounts), and the parsers of its files.
#include "core/backend/cpu_limits.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "fake_root.h"

namespace {

using kbt::FakeRoot;

const char* kV2Mount = "30 24 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n";
const char* kV1Mounts =
    "31 24 0:27 / /sys/fs/cgroup/memory rw shared:9 - cgroup cgroup rw,memory\n"
    "32 24 0:28 / /sys/fs/cgroup/cpu,cpuacct rw shared:10 - cgroup cgroup rw,cpu,cpuacct\n";

TEST(CpuLimits, Parsers) {
  EXPECT_EQ(kb::cpus_of_quota(150000, 100000), 2);
  EXPECT_EQ(kb::cpus_of_quota(100000, 100000), 1);
  EXPECT_EQ(kb::cpus_of_quota(1000, 100000), 1);
  EXPECT_EQ(kb::cpus_of_quota(-1, 100000), 0);
  EXPECT_EQ(kb::cpus_of_quota(100000, 0), 0);
  EXPECT_EQ(kb::cpus_of_cpu_max("max 100000\n"), 0);
  EXPECT_EQ(kb::cpus_of_cpu_max("400000 100000\n"), 4);
  EXPECT_EQ(kb::cpus_of_cpu_max("50000 100000"), 1);
  EXPECT_EQ(kb::cpus_of_cpu_max(""), 0);
  EXPECT_EQ(kb::cpus_of_cpu_max("junk 100000"), 0);
  EXPECT_EQ(kb::cpus_of_cpu_max("99999999999999999999999 1"), 0);
}

TEST(CpuLimits, V2TightestAncestorWins) {
  FakeRoot r;
  r.write("/proc/self/mountinfo", kV2Mount);
  r.write("/proc/self/cgroup", "0::/user.slice/job/task\n");
  r.write("/sys/fs/cgroup/user.slice/cpu.max", "max 100000\n");
  r.write("/sys/fs/cgroup/user.slice/job/cpu.max", "300000 100000\n");
  r.write("/sys/fs/cgroup/user.slice/job/task/cpu.max", "max 100000\n");
  EXPECT_EQ(kb::cgroup_cpu_limit(r.dir()), 3);
  r.write("/sys/fs/cgroup/user.slice/job/task/cpu.max", "150000 100000\n");
  EXPECT_EQ(kb::cgroup_cpu_limit(r.dir()), 2);
}

TEST(CpuLimits, V2ContainerSeesItsOwnRoot) {
  // In a cgroup namespace the process sees "/" and the mount shows its own cgroup at the top.
  FakeRoot r;
  r.write("/proc/self/mountinfo", kV2Mount);
  r.write("/proc/self/cgroup", "0::/\n");
  r.write("/sys/fs/cgroup/cpu.max", "200000 100000\n");
  EXPECT_EQ(kb::cgroup_cpu_limit(r.dir()), 2);
}

TEST(CpuLimits, V1QuotaOfTheCpuHierarchy) {
  FakeRoot r;
  r.write("/proc/self/mountinfo", kV1Mounts);
  r.write("/proc/self/cgroup", "4:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc\n");
  r.write_cfs("/sys/fs/cgroup/cpu,cpuacct", "-1", "100000");
  r.write_cfs("/sys/fs/cgroup/cpu,cpuacct/docker/abc", "250000", "100000");
  EXPECT_EQ(kb::cgroup_cpu_limit(r.dir()), 3);
}

TEST(CpuLimits, V1MountOfASubtree) {
  // Docker mounts the container's own cgroup: mountinfo's root is the path /proc shows.
  FakeRoot r;
  r.write("/proc/self/mountinfo",
          "40 30 0:28 /docker/abc /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpuacct,cpu\n");
  r.write("/proc/self/cgroup", "2:cpuacct,cpu:/docker/abc\n");
  r.write_cfs("/sys/fs/cgroup/cpu", "100000", "100000");
  EXPECT_EQ(kb::cgroup_cpu_limit(r.dir()), 1);
}

TEST(CpuLimits, NoLimitOrNothingReadable) {
  FakeRoot r;
  EXPECT_EQ(kb::cgroup_cpu_limit(r.dir()), 0);  // no /proc at all
  r.write("/proc/self/mountinfo", kV2Mount);
  r.write("/proc/self/cgroup", "0::/a\n");
  r.write("/sys/fs/cgroup/a/cpu.max", "max 100000\n");
  EXPECT_EQ(kb::cgroup_cpu_limit(r.dir()), 0);
  r.write("/proc/self/cgroup", "garbage without colons\n0::\n");
  EXPECT_EQ(kb::cgroup_cpu_limit(r.dir()), 0);
}

TEST(CpuLimits, ThisProcess) {
  int n = kb::usable_cpus();
  EXPECT_GE(n, 1);
  EXPECT_LE(n, int(sysconf(_SC_NPROCESSORS_ONLN)));
}

}  // namespace
