// The step profile (core/compile/step_profile.h): totals per primitive name behind one mutex;
// nested time is tracked per thread so that a step's exclusive time excludes its inner plans.
#include "core/compile/step_profile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

namespace kb {
namespace {

struct Totals {
  std::mutex mu;
  std::map<std::string, std::pair<long, double>> by_op;  // calls, exclusive ns
  ~Totals() {
    std::vector<std::pair<double, std::string>> rows;
    double all = 0;
    for (auto& [name, v] : by_op) {
      rows.push_back({v.second, name});
      all += v.second;
    }
    if (rows.empty()) return;
    std::sort(rows.rbegin(), rows.rend());
    std::fprintf(stderr, "kbackend step profile (exclusive time per primitive):\n");
    for (auto& [ns, name] : rows)
      std::fprintf(stderr, "  %-32s %10ld calls %10.3f ms %5.1f%%\n", name.c_str(),
                   by_op[name].first, ns * 1e-6, 100.0 * ns / all);
  }
};

Totals& totals() {
  static Totals t;
  return t;
}

thread_local double child_ns = 0;  // time of the steps nested in the current one

}  // namespace

int profile_level() {
  static const int level = [] {
    const char* v = std::getenv("KB_PROFILE");
    int l = v ? std::atoi(v) : 0;
    if (l > 0) totals();  // constructed before any use, so destroyed (and printed) after
    return l;
  }();
  return level;
}

StepTimer::StepTimer(const std::string& op_name, const Buffer& out,
                     const std::vector<const Buffer*>& in)
    : on_(profile_level() > 0) {
  if (!on_) return;
  enter_ = std::chrono::steady_clock::now();
  key_ = profile_level() > 1 ? op_name + " " + dims_str(out.dims) : op_name;
  if (profile_level() > 2) {
    key_ += " <-";
    for (const Buffer* b : in) key_ += " " + dims_str(b->dims);
  }
  child_ns_saved_ = child_ns;
  child_ns = 0;
  start_ = std::chrono::steady_clock::now();
}

StepTimer::~StepTimer() {
  if (!on_) return;
  double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start_).count();
  double exclusive = ns - child_ns;
  {
    std::lock_guard<std::mutex> lock(totals().mu);
    auto& v = totals().by_op[key_];
    v.first += 1;
    v.second += exclusive;
  }
  // The enclosing step excludes this whole timer, the profiler's own key building and
  // bookkeeping included: a Loop's time is its own work, not the profiling of its body.
  auto exit = std::chrono::steady_clock::now();
  child_ns = child_ns_saved_ + std::chrono::duration<double, std::nano>(exit - enter_).count();
}

}  // namespace kb
