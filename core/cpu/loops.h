// Loop helpers for CPU kernels: parallel flat loops and strided (broadcasting) row iteration.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "core/graph/shape.h"
#include "core/util/small_vector.h"

namespace kb::cpu {

// Elements of simple work (one add streamed from memory, about 0.17 ns here; costlier operations
// count several) per share of a parallel loop; a loop of fewer than two shares (about 10 us) runs
// on the calling thread.
constexpr int64_t kParallelGrain = 1 << 15;

// Shares below which a loop also runs on the calling thread while the pool's threads sleep (about
// 90 us of work): OpenMP's threads spin about 50 us after a region (see
// core/startup/omp_wait_policy.c), and a region that starts then costs 1-3 us, but one that wakes
// them costs 20-50 us on a 2-vCPU VM. A training step of a small model opens few regions, far
// apart (a CNN's 34 us batch norm gradient took 67 us on two threads); an LSTM's loop opens them
// back to back, each step's products keeping them awake.
constexpr int64_t kColdGrains = 16;
// Whether a parallel region (a parallel_for, or oneDNN's or Eigen's outside a serial SerialScope)
// ended within the last 50 us, its threads likely still spinning; note_parallel_end records one.
bool pool_awake();
void note_parallel_end();

// The size of the team the calling thread's next parallel region gets.
int64_t omp_max_threads();
// Grains of work from which a parallel_for keeps the whole pool while other processes take CPUs.
constexpr int64_t kWholePoolGrains = 64;
// The team of a parallel_for over `grains` grains: 1 inside a SerialScope or a parallel region;
// the whole pool for a long one, even while other processes take CPUs (kb::threads_left_free
// shrinks the calling thread's OpenMP team then), as its chunks are claimed in turn and a thread
// that gets a share of a busy CPU still adds that share (W1 beside a busy core: 70 against 83
// ms); the calling thread's team for a short one, which a late thread would only delay (an LSTM
// step's gates: W6 fwd+bwd 194 against 168 ms with the whole pool).
int64_t parallel_for_threads(int64_t grains);

// Multiply-adds below which a GEMM or a oneDNN primitive runs on the calling thread alone: there
// a parallel region costs more than it saves, and on a busy machine the calling thread waits for
// a descheduled worker for a whole time slice (a Keras MLP step on 32x64 matrices took 7 ms with
// two threads instead of 0.2 ms with one while other processes kept both cores busy).
constexpr int64_t kSerialWork = int64_t(1) << 20;

// While alive with `serial` true, the OpenMP regions the calling thread opens (Eigen's GEMM,
// oneDNN, parallel_for) use one thread; the thread's setting is restored after. Other threads
// are not affected (the thread count is a per-thread OpenMP setting, and the scope's depth is
// per thread).
class SerialScope {
 public:
  explicit SerialScope(bool serial);
  ~SerialScope();
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;

 private:
  int saved_ = 0;
  bool serial_ = false;
};

// Chunks per thread of a parallel_for: a thread that the scheduler has taken away (another
// process on its core) leaves its chunks to the others, instead of the region waiting for its one
// share; more chunks balance finer but claim more often.
constexpr int64_t kChunksPerThread = 8;

// Calls body(begin, end) over [0, n) split into chunks of at least `grain` that the OpenMP threads
// claim in turn when n is large. The body must not depend on how [0, n) is split.
template <class F>
void parallel_for(int64_t n, F&& body, int64_t grain = kParallelGrain) {
  if (n < grain * 2) {
    body(int64_t(0), n);
    return;
  }
  if (n / grain < kColdGrains && !pool_awake()) {
    body(int64_t(0), n);
    return;
  }
  int64_t threads = parallel_for_threads(n / grain);
  if (threads == 1) {
    body(int64_t(0), n);
    return;
  }
  int64_t chunks = n / grain < threads * kChunksPerThread ? n / grain : threads * kChunksPerThread;
  std::atomic<int64_t> next{0};
#pragma omp parallel num_threads(int(threads))
  {
    for (int64_t c = next.fetch_add(1, std::memory_order_relaxed); c < chunks;
         c = next.fetch_add(1, std::memory_order_relaxed))
      body(n * c / chunks, n * (c + 1) / chunks);
  }
  note_parallel_end();
}

// Iterates over `out` dims (row-major), K operands with the given element strides. For each
// innermost row calls row(offsets, inner_strides, length), offsets[0..K). Dims and strides may
// be any indexable containers; nothing is allocated for tensors of rank 8 or less.
template <size_t K, class D, class S, class F>
void strided_rows(const D& out, const std::array<S, K>& strides, F&& row) {
  using Small = SmallVector<int64_t, 8>;
  // Collapse adjacent dims that are contiguous for every operand.
  Small d;
  std::array<Small, K> s;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 1) continue;
    bool merge = !d.empty();
    for (size_t k = 0; merge && k < K; ++k) merge = s[k].back() == strides[k][i] * out[i];
    if (merge) {
      d.back() *= out[i];
      for (size_t k = 0; k < K; ++k) s[k].back() = strides[k][i];
    } else {
      d.push_back(out[i]);
      for (size_t k = 0; k < K; ++k) s[k].push_back(strides[k][i]);
    }
  }
  if (d.empty()) {
    d.push_back(1);
    for (size_t k = 0; k < K; ++k) s[k].push_back(0);
  }
  for (int64_t x : d)
    if (x == 0) return;
  size_t r = d.size();
  int64_t inner = d[r - 1];
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < r; ++i) rows *= d[i];
  std::array<int64_t, K> inner_s;
  for (size_t k = 0; k < K; ++k) inner_s[k] = s[k][r - 1];
  auto run = [&](int64_t rb, int64_t re) {
    Small idx(r, 0);
    int64_t rem = rb;
    for (size_t i = r - 1; i-- > 0;) {
      idx[i] = rem % d[i];
      rem /= d[i];
    }
    std::array<int64_t, K> off{};
    for (size_t k = 0; k < K; ++k)
      for (size_t i = 0; i + 1 < r; ++i) off[k] += idx[i] * s[k][i];
    for (int64_t row_i = rb; row_i < re; ++row_i) {
      row(off, inner_s, inner);
      for (size_t i = r - 1; i-- > 0;) {
        ++idx[i];
        for (size_t k = 0; k < K; ++k) off[k] += s[k][i];
        if (idx[i] < d[i]) break;
        for (size_t k = 0; k < K; ++k) off[k] -= s[k][i] * d[i];
        idx[i] = 0;
      }
    }
  };
  int64_t grain = inner > 0 ? (kParallelGrain + inner - 1) / inner : rows;
  parallel_for(rows, run, grain);
}

}  // namespace kb::cpu
