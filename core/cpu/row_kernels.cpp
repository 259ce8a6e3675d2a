// Row kernels (core/cpu/row_kernels.h). The loops keep several independent float partial results
// per lane (an add chain through one register is latency-bound) and are written so that the
// compiler vectorizes them; exp is the scalar table's branch-free exp_float.
#include "core/cpu/row_kernels.h"

#include <cmath>
#include <limits>

#include "core/cpu/simd_targets.h"
#include "core/ops/scalar_funcs.h"

namespace kb::cpu {
namespace {

constexpr int64_t kLanes = 64;           // four AVX-512 registers, eight AVX2 ones
constexpr int64_t kBlock = kLanes * 16;  // elements summed in float before joining the double sum

// Sum of f(x[j]) for j in [0, n): float lanes over blocks of kBlock, each block's lanes added to
// double lanes, so the rounding error stays that of 16-term float sums.
template <class F>
__attribute__((always_inline)) inline double lane_sum(const float* __restrict x, int64_t n, F f) {
  double total[kLanes] = {};
  float lane[kLanes];
  int64_t j = 0;
  for (; j + kBlock <= n; j += kBlock) {
    for (int64_t l = 0; l < kLanes; ++l) lane[l] = 0.0f;
    for (int64_t k = 0; k < kBlock; k += kLanes)
#pragma omp simd
      for (int64_t l = 0; l < kLanes; ++l) lane[l] += f(x[j + k + l]);
    for (int64_t l = 0; l < kLanes; ++l) total[l] += double(lane[l]);
  }
  for (int64_t l = 0; l < kLanes; ++l) lane[l] = 0.0f;
  for (; j + kLanes <= n; j += kLanes)
#pragma omp simd
    for (int64_t l = 0; l < kLanes; ++l) lane[l] += f(x[j + l]);
  double tail = 0;
  for (; j < n; ++j) tail += double(f(x[j]));
  for (int64_t l = 0; l < kLanes; ++l) total[l] += double(lane[l]);
  double s = 0;
  for (int64_t l = 0; l < kLanes; ++l) s += total[l];
  return s + tail;
}

}  // namespace

KB_SIMD_CLONES double row_sum_f32(const float* __restrict x, int64_t n) {
  return lane_sum(x, n, [](float v) { return v; });
}

KB_SIMD_CLONES float row_max_f32(const float* __restrict x, int64_t n) {
  constexpr float lowest = -std::numeric_limits<float>::infinity();
  float lane[kLanes];
  for (int64_t l = 0; l < kLanes; ++l) lane[l] = lowest;
  int64_t j = 0;
  // v > m ? v : m keeps m for a NaN v (the maxps rule), so NaNs are skipped.
  for (; j + kLanes <= n; j += kLanes)
#pragma omp simd
    for (int64_t l = 0; l < kLanes; ++l) lane[l] = x[j + l] > lane[l] ? x[j + l] : lane[l];
  float m = lowest;
  for (; j < n; ++j) m = x[j] > m ? x[j] : m;
  for (int64_t l = 0; l < kLanes; ++l) m = lane[l] > m ? lane[l] : m;
  return m;
}

KB_SIMD_CLONES void softmax_row_f32(const float* __restrict x, float* __restrict out, int64_t n,
                                    bool log) {
  float mx = row_max_f32(x, n);
  // An infinite maximum would turn every difference into NaN or -inf; subtracting nothing keeps
  // exp's overflow where it belongs (inf / inf = NaN only for the infinite entries' row).
  if (!std::isfinite(mx)) mx = 0.0f;
  if (log) {
    double sum = lane_sum(x, n, [mx](float v) { return exp_float(v - mx); });
    float shift = float(std::log(sum)) + mx;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) out[j] = x[j] - shift;
    return;
  }
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) out[j] = exp_float(x[j] - mx);
  float inv = float(1.0 / lane_sum(out, n, [](float v) { return v; }));
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) out[j] *= inv;
}

}  // namespace kb::cpu
