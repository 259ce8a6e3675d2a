#include "core/backend/threads.h"

#include <omp.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/backend/cpu_limits.h"
#include "core/backend/cpu_load.h"
#include "core/util/error.h"

namespace kb {
namespace {

std::atomic<int> chosen_threads{0};  // 0: the default
// The largest team this process has shown it can start (see start_probe_threads).
std::atomic<int> proven_threads{1};

int default_threads() {
  static const int n = [] {
    if (const char* v = std::getenv("KB_NUM_THREADS")) {
      long k = std::strtol(v, nullptr, 10);
      if (k >= 1) return int(std::min<long>(k, max_threads()));
    }
    int n = omp_get_max_threads();
    // OpenMP counts the affinity mask's CPUs; a cgroup's quota may allow fewer.
    if (!std::getenv("OMP_NUM_THREADS")) n = std::min(n, usable_cpus());
    return std::clamp(n, 1, max_threads());
  }();
  return n;
}

// Starts n - 1 threads that all exist at once, then lets them finish. The OpenMP runtime ends
// the process when it cannot create a team's threads ("Thread creation failed"), so a count the
// process cannot reach (a task or pids limit, address space for their stacks) is refused here,
// where it can still be reported. Returns how many could be started.
int start_probe_threads(int n) {
  struct Gate {
    std::mutex m;
    std::condition_variable opened;
    bool open = false;
  } gate;
  auto wait_for_gate = [](void* p) -> void* {
    auto* g = static_cast<Gate*>(p);
    std::unique_lock<std::mutex> lock(g->m);
    g->opened.wait(lock, [g] { return g->open; });
    return nullptr;
  };
  std::vector<pthread_t> started;
  started.reserve(size_t(n));
  for (int i = 1; i < n; ++i) {
    pthread_t t;
    if (pthread_create(&t, nullptr, wait_for_gate, &gate) != 0) break;
    started.push_back(t);
  }
  {
    std::lock_guard<std::mutex> lock(gate.m);
    gate.open = true;
  }
  gate.opened.notify_all();
  for (pthread_t t : started) pthread_join(t, nullptr);
  return int(started.size()) + 1;
}

}  // namespace

int max_threads() {
  // libgomp starts a team with per-thread data on the starting thread's stack, so a huge count
  // overflows it (100000 did); more than a few threads per CPU only adds waiting.
  static const int n = [] {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long limit = std::max<long>(64, 4 * std::max<long>(cpus, 1));
    return int(std::min<long>({limit, long(omp_get_thread_limit()), 4096L}));
  }();
  return n;
}

void set_num_threads(int n) {
  check(n >= 0 && n <= max_threads(), Status::invalid_argument,
        "set_num_threads: the number of threads must be between 1 and ", max_threads(),
        " (or 0 for the default), got ", n);
  if (n > proven_threads) {
    int reached = start_probe_threads(n);
    check(reached >= n, Status::out_of_memory, "set_num_threads: cannot start ", n,
          " threads: the process could start only ", reached,
          " (a limit on its tasks or memory); the thread count stays ", num_threads());
    int seen = proven_threads;
    while (seen < n && !proven_threads.compare_exchange_weak(seen, n)) {
    }
  }
  chosen_threads = n;
  use_num_threads();
}

int num_threads() {
  int n = chosen_threads;
  return n > 0 ? n : default_threads();
}

void use_num_threads() {
  int n = threads_left_free(num_threads());
  if (omp_get_max_threads() != n) omp_set_num_threads(n);
}

}  // namespace kb
