// How many CPUs this process may keep busy: its affinity mask, capped by the CPU quota of its
// cgroup (a container's `--cpus`, a systemd CPUQuota, a Kubernetes limit). The machine's core
// count overstates it there, and every parallel region would wait for threads the quota has
// throttled.
#pragma once

#include <string>
#include <string_view>

namespace kb {

// The CPUs in the calling thread's affinity mask, capped by cgroup_cpu_limit("") when it is set.
int usable_cpus();

// The tightest CPU quota on this process' cgroup and its ancestors, rounded up to whole CPUs,
// or 0 when none is set. cgroup v2 (cpu.max) and v1 (cpu.cfs_quota_us / cpu.cfs_period_us);
// `root` prefixes every path read (/proc/self/cgroup, /proc/self/mountinfo, the cgroup files), so
// a test can lay out a tree of its own.
int cgroup_cpu_limit(const std::string& root);

// The CPUs a quota of `quota` microseconds per `period` allows, rounded up; 0 for no limit
// (a negative quota, as v1 writes "-1").
int cpus_of_quota(long long quota, long long period);
// The same from the text of a v2 cpu.max file: "max 100000" or "150000 100000".
int cpus_of_cpu_max(std::string_view text);

}  // namespace kb
