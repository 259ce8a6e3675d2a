// The CPUs other work leaves free: the arithmetic, the /proc parsers over a fake tree, and a
// live reading beside a spinning child process.
#include "core/backend/cpu_load.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "fake_root.h"

namespace {

using kbt::FakeRoot;

TEST(CpuLoad, FreeCpus) {
  EXPECT_DOUBLE_EQ(kb::free_cpus(2, 100, 100, 100), 2);  // all the busy time was ours
  EXPECT_DOUBLE_EQ(kb::free_cpus(2, 200, 100, 100), 1);  // another process kept one CPU
  EXPECT_DOUBLE_EQ(kb::free_cpus(2, 500, 0, 100), 0);    // clamped
  EXPECT_DOUBLE_EQ(kb::free_cpus(8, 150, 0, 100), 6.5);
  EXPECT_DOUBLE_EQ(kb::free_cpus(4, 10, 50, 100), 4);  // own time counted elsewhere: none taken
  EXPECT_DOUBLE_EQ(kb::free_cpus(4, 10, 0, 0), 4);     // no window yet
}

TEST(CpuLoad, StatFields) {
  EXPECT_EQ(kb::stat_fields("12 (a b) c) R 1 2"), "R 1 2");
  EXPECT_EQ(kb::stat_fields("12 (kb) S 7"), "S 7");
  EXPECT_EQ(kb::stat_fields("garbage"), "");
  EXPECT_EQ(kb::stat_fields("1 (x)"), "");
}

TEST(CpuLoad, ParsesProc) {
  FakeRoot p;
  cpu_set_t mask;
  ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
  int first = -1;
  for (int i = 0; i < CPU_SETSIZE && first < 0; ++i)
    if (CPU_ISSET(i, &mask)) first = i;
  ASSERT_GE(first, 0);
  // user nice system idle iowait irq softirq steal: busy = all but idle and iowait.
  p.write("/proc/stat", "cpu  9 9 9 9 9 9 9 9 0 0\ncpu" + std::to_string(first) +
                            " 10 1 4 100 5 1 1 3 0 0\ncpu99999 1 1 1 1 1 1 1 1\nintr 5\n");
  double busy = 0, total = 0, own = 0;
  int cpus = 0;
  ASSERT_TRUE(kb::mask_cpu_times(p.dir(), &busy, &total, &cpus));
  EXPECT_EQ(cpus, 1);
  EXPECT_DOUBLE_EQ(busy, 20);
  EXPECT_DOUBLE_EQ(total, 125);
  p.write("/proc/self/stat", "42 (my (odd) name) R 1 42 42 0 -1 4194560 100 0 0 0 70 30 0 0");
  ASSERT_TRUE(kb::own_cpu_time(p.dir(), &own));
  EXPECT_DOUBLE_EQ(own, 100);
  p.write("/proc/self/stat", "42 (short) R 1 2");
  EXPECT_FALSE(kb::own_cpu_time(p.dir(), &own));
  FakeRoot empty;
  EXPECT_FALSE(kb::mask_cpu_times(empty.dir(), &busy, &total, &cpus));
  EXPECT_FALSE(kb::own_cpu_time(empty.dir(), &own));
}

// A child spinning on one of this process' CPUs shows as at least half a CPU taken (more load
// elsewhere only takes more).
TEST(CpuLoad, SeesAnotherProcess) {
  cpu_set_t mask;
  ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
  int cpu = -1;
  for (int i = 0; i < CPU_SETSIZE; ++i)
    if (CPU_ISSET(i, &mask)) cpu = i;
  double busy0, total0, own0, busy1, total1, own1;
  int cpus;
  ASSERT_TRUE(kb::mask_cpu_times("", &busy0, &total0, &cpus));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof(one), &one);
    volatile unsigned long spins = 0;
    for (;;) spins = spins + 1;
  }
  ASSERT_TRUE(kb::mask_cpu_times("", &busy0, &total0, &cpus));
  ASSERT_TRUE(kb::own_cpu_time("", &own0));
  usleep(400000);
  ASSERT_TRUE(kb::mask_cpu_times("", &busy1, &total1, &cpus));
  ASSERT_TRUE(kb::own_cpu_time("", &own1));
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  double window = (total1 - total0) / cpus;
  double free = kb::free_cpus(cpus, busy1 - busy0, own1 - own0, window);
  EXPECT_LE(free, cpus - 0.5) << "busy " << busy1 - busy0 << " of " << total1 - total0;
}

TEST(CpuLoad, TeamStaysWithinThePool) {
  for (int pool : {1, 2, 7}) {
    int t = kb::threads_left_free(pool);
    EXPECT_GE(t, 1);
    EXPECT_LE(t, pool);
  }
}

}  // namespace
