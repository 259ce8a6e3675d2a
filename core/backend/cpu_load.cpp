#include "core/backend/cpu_load.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

namespace kb {
namespace {

// Shorter windows than a few clock ticks (10 ms each) would measure mostly rounding.
constexpr double kWindowSeconds = 0.2;

double seconds_now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace

double free_cpus(double mask_cpus, double busy, double own, double window) {
  if (window <= 0) return mask_cpus;
  double others = std::max(0.0, busy - own) / window;
  return std::clamp(mask_cpus - others, 0.0, mask_cpus);
}

bool mask_cpu_times(const std::string& root, double* busy, double* total, int* cpus) {
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0) return false;
  std::ifstream f(root + "/proc/stat");
  *busy = *total = 0;
  *cpus = 0;
  // "cpuN user nice system idle iowait irq softirq steal ..." in clock ticks.
  for (std::string line; std::getline(f, line);) {
    if (line.compare(0, 3, "cpu") != 0 || line.size() < 4 || !std::isdigit(uint8_t(line[3])))
      continue;
    std::istringstream s(line.substr(3));
    int n = -1;
    double v[8] = {};
    s >> n;
    for (double& x : v) s >> x;
    if (!s || n < 0 || n >= CPU_SETSIZE || !CPU_ISSET(n, &mask)) continue;
    double all = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
    *total += all;
    *busy += all - v[3] - v[4];  // less idle and iowait
    ++*cpus;
  }
  return *cpus > 0;
}

std::string_view stat_fields(std::string_view line) {
  size_t close = line.rfind(')');
  if (close == std::string_view::npos || close + 2 > line.size()) return {};
  return line.substr(close + 2);
}

bool own_cpu_time(const std::string& root, double* ticks) {
  std::ifstream f(root + "/proc/self/stat");
  std::string line;
  if (!std::getline(f, line)) return false;
  // After the name: state (field 3) ... utime (14), stime (15).
  std::istringstream s{std::string(stat_fields(line))};
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && s >> field; ++i) {
    if (i == 14) utime = std::strtod(field.c_str(), nullptr);
    if (i == 15) stime = std::strtod(field.c_str(), nullptr);
  }
  if (!s) return false;
  *ticks = utime + stime;
  return true;
}

int threads_left_free(int pool) {
  static const bool enabled = [] {
    const char* e = std::getenv("KB_ADAPT_THREADS");
    return !(e && std::strcmp(e, "0") == 0);
  }();
  static std::atomic<int> taken{0};  // CPUs of the mask that others kept busy
  static std::atomic<bool> readable{true};
  if (!enabled || pool <= 1 || !readable) return pool;
  // Checked on every call without a lock; the sample itself takes one, and a thread that finds
  // it taken goes on with the last answer.
  static std::atomic<double> due{0};
  double now = seconds_now();
  if (now < due.load(std::memory_order_relaxed)) return std::max(1, pool - taken);
  static std::mutex m;
  static double last_busy = 0, last_total = 0, last_own = 0;
  std::unique_lock<std::mutex> lock(m, std::try_to_lock);
  if (lock.owns_lock() && now >= due) {
    double busy, total, own;
    int cpus;
    if (!mask_cpu_times("", &busy, &total, &cpus) || !own_cpu_time("", &own)) {
      readable = false;
      return pool;
    }
    if (last_total > 0 && total > last_total) {
      double window = (total - last_total) / cpus;
      double free = free_cpus(cpus, busy - last_busy, own - last_own, window);
      taken = int(std::lround(cpus - free));
    }
    due = now + kWindowSeconds;
    last_busy = busy;
    last_total = total;
    last_own = own;
  }
  return std::max(1, pool - taken);
}

}  // namespace kb
