#!/usr/bin/env bash
# The default thread count under a real CPU quota: a cgroup (v1 cpu controller, or v2 with the cpu
# controller enabled) allowing one CPU, on a machine with more. Skipped (77) where this process
# cannot make a cgroup (not root, a read-only or absent hierarchy).
# Usage: cgroup_quota_test.sh PRINT_THREADS
set -uo pipefail
prog=$1
unset KB_NUM_THREADS OMP_NUM_THREADS
[ "$(nproc)" -ge 2 ] || { echo "one CPU: nothing to cap"; exit 77; }
dir=""
if [ -d /sys/fs/cgroup/cpu ] && [ -w /sys/fs/cgroup/cpu ]; then
  dir=/sys/fs/cgroup/cpu/kb_quota_test_$$
  mkdir "$dir" 2> /dev/null && echo 100000 > "$dir/cpu.cfs_period_us" &&
    echo 100000 > "$dir/cpu.cfs_quota_us" 2> /dev/null || dir=""
elif [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2> /dev/null; then
  dir=/sys/fs/cgroup/kb_quota_test_$$
  mkdir "$dir" 2> /dev/null && echo "100000 100000" > "$dir/cpu.max" 2> /dev/null || dir=""
fi
[ -n "$dir" ] || { echo "cannot make a cgroup with a CPU quota here"; exit 77; }
got=$(sh -c "echo \$\$ > '$dir/cgroup.procs' && exec '$prog'")
rc=$?
rmdir "$dir"
[ $rc -eq 0 ] || { echo "print_threads failed ($rc)"; exit 1; }
free=$("$prog")
echo "threads: $free without a quota, $got with a quota of one CPU"
[ "$got" = 1 ] || { echo "expected 1 thread under a quota of one CPU"; exit 1; }
