#include "core/backend/threads.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "core/util/error.h"

namespace kb {
namespace {

std::atomic<int> chosen_threads{0};  // 0: the default

int default_threads() {
  static const int n = [] {
    if (const char* v = std::getenv("KB_NUM_THREADS")) {
      int k = std::atoi(v);
      if (k >= 1) return k;
    }
    return std::max(1, omp_get_max_threads());
  }();
  return n;
}

}  // namespace

void set_num_threads(int n) {
  check(n >= 0, Status::invalid_argument,
        "set_num_threads: the number of threads must be >= 1 (or 0 for the default), got ", n);
  chosen_threads = n;
  use_num_threads();
}

int num_threads() {
  int n = chosen_threads;
  return n > 0 ? n : default_threads();
}

void use_num_threads() {
  int n = num_threads();
  if (omp_get_max_threads() != n) omp_set_num_threads(n);
}

}  // namespace kb
