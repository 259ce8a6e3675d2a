#include "core/cpu/loops.h"

#include <omp.h>

#include <atomic>
#include <chrono>

#include "core/backend/threads.h"

namespace kb::cpu {
namespace {
thread_local int serial_depth = 0;
std::atomic<int64_t> last_parallel_end_ns{0};

int64_t now_ns() {
  using namespace std::chrono;
  return duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count();
}
}  // namespace

bool pool_awake() {
  return now_ns() - last_parallel_end_ns.load(std::memory_order_relaxed) < 50'000;
}

void note_parallel_end() { last_parallel_end_ns.store(now_ns(), std::memory_order_relaxed); }

int64_t omp_max_threads() { return omp_get_max_threads(); }

int64_t parallel_for_threads(int64_t grains) {
  if (serial_depth > 0 || omp_in_parallel()) return 1;
  return grains >= kWholePoolGrains ? num_threads() : omp_get_max_threads();
}

SerialScope::SerialScope(bool serial) {
  if (!serial) return;
  serial_ = true;
  ++serial_depth;
  saved_ = omp_get_max_threads();
  if (saved_ > 1)
    omp_set_num_threads(1);
  else
    saved_ = 0;
}

SerialScope::~SerialScope() {
  if (saved_ > 0) omp_set_num_threads(saved_);
  if (serial_)
    --serial_depth;
  else if (serial_depth == 0 && omp_get_max_threads() > 1)
    note_parallel_end();  // what ran in the scope may have used the pool
}

}  // namespace kb::cpu
