#include "core/backend/cpu_limits.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

namespace kb {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t b = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.emplace_back(s.substr(b, i - b));
      b = i + 1;
    }
  return out;
}

// Where a cgroup hierarchy is mounted and which of its paths the mount shows.
struct Mount {
  std::string root;   // the cgroup path the mount point shows (e.g. "/" or a container's own)
  std::string point;  // where it is mounted
};

// The mount of the v2 hierarchy (v1_controller empty) or of the v1 hierarchy that has the
// controller. A mountinfo line: id parent major:minor root point options [tags] - type source
// super-options.
bool find_mount(const std::string& mountinfo, const std::string& v1_controller, Mount* m) {
  std::istringstream lines(mountinfo);
  for (std::string line; std::getline(lines, line);) {
    auto f = split(line, ' ');
    auto dash = std::find(f.begin(), f.end(), "-");
    if (f.size() < 5 || dash == f.end() || f.end() - dash < 4) continue;
    const std::string& type = dash[1];
    bool wanted = v1_controller.empty() ? type == "cgroup2" : type == "cgroup";
    if (wanted && !v1_controller.empty()) {
      auto opts = split(dash[3], ',');
      wanted = std::find(opts.begin(), opts.end(), v1_controller) != opts.end();
    }
    if (wanted) {
      *m = {f[3], f[4]};
      return true;
    }
  }
  return false;
}

// The folder of `path` (a line of /proc/self/cgroup) under the mount, or "" when the mount does
// not show it.
std::string folder_of(const Mount& m, const std::string& path) {
  std::string rel;
  if (m.root == "/")
    rel = path;
  else if (path.compare(0, m.root.size(), m.root) == 0)
    rel = path.substr(m.root.size());
  else
    return "";
  while (!rel.empty() && rel.back() == '/') rel.pop_back();
  return m.point + rel;
}

long long read_number(const std::string& path, bool* ok) {
  std::istringstream s(read_text(path));
  long long v = 0;
  *ok = bool(s >> v);
  return v;
}

// The smallest positive limit of `limit_at(folder)` from `folder` up to the mount point.
template <class F>
int tightest(const std::string& folder, const std::string& point, F limit_at) {
  int best = 0;
  for (std::string d = folder; d.size() >= point.size();) {
    int cpus = limit_at(d);
    if (cpus > 0 && (best == 0 || cpus < best)) best = cpus;
    size_t slash = d.find_last_of('/');
    if (d.size() == point.size() || slash == std::string::npos || slash < point.size()) break;
    d.resize(slash);
  }
  return best;
}

}  // namespace

int cpus_of_quota(long long quota, long long period) {
  if (quota <= 0 || period <= 0) return 0;
  return int(std::min<long long>((quota + period - 1) / period, 1 << 20));
}

int cpus_of_cpu_max(std::string_view text) {
  std::istringstream s{std::string(text)};
  std::string quota;
  long long period = 100000;
  if (!(s >> quota) || quota == "max") return 0;
  s >> period;
  try {
    return cpus_of_quota(std::stoll(quota), period);
  } catch (const std::exception&) {
    return 0;  // not a number: no limit we can read
  }
}

int cgroup_cpu_limit(const std::string& root) {
  std::string mountinfo = read_text(root + "/proc/self/mountinfo");
  std::istringstream lines(read_text(root + "/proc/self/cgroup"));
  int best = 0;
  auto take = [&](int cpus) {
    if (cpus > 0 && (best == 0 || cpus < best)) best = cpus;
  };
  // A line: hierarchy-id:controllers:path; v2's has id 0 and no controllers.
  for (std::string line; std::getline(lines, line);) {
    size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    Mount m;
    if (controllers.empty()) {
      if (!find_mount(mountinfo, "", &m)) continue;
      std::string folder = folder_of(m, path);
      if (folder.empty()) continue;
      take(tightest(root + folder, root + m.point, [](const std::string& d) {
        return cpus_of_cpu_max(read_text(d + "/cpu.max"));
      }));
    } else {
      auto names = split(controllers, ',');
      if (std::find(names.begin(), names.end(), "cpu") == names.end()) continue;
      if (!find_mount(mountinfo, "cpu", &m)) continue;
      std::string folder = folder_of(m, path);
      if (folder.empty()) continue;
      take(tightest(root + folder, root + m.point, [](const std::string& d) {
        bool q_ok = false, p_ok = false;
        long long q = read_number(d + "/cpu.cfs_quota_us", &q_ok);
        long long p = read_number(d + "/cpu.cfs_period_us", &p_ok);
        return q_ok && p_ok ? cpus_of_quota(q, p) : 0;
      }));
    }
  }
  return best;
}

int usable_cpus() {
  cpu_set_t set;
  int cpus = 0;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cpus = CPU_COUNT(&set);
  // A machine past CPU_SETSIZE (1024) fails the call: then its online CPUs are the bound.
  if (cpus <= 0) cpus = int(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  int quota = cgroup_cpu_limit("");
  return quota > 0 ? std::min(cpus, quota) : cpus;
}

}  // namespace kb
