// Row kernels (core/cpu/row_kernels.h). The loops keep several independent float partial results
// per lane (an add chain through one register is latency-bound) and are written so that the
// compiler vectorizes them; softmax uses exp_nonpositive, a leaner exp_float for x - max <= 0.
#include "core/cpu/row_kernels.h"

#include <immintrin.h>

#include <cmath>
#include <cstdint>
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
  // A row shorter than the lanes is the tail alone (the same sum in the same order): clearing and
  // adding up the lanes took 0.15 us per row, 4 us for the 32 rows of 10 of a batch's loss.
  if (n < kLanes) {
    double tail = 0;
    for (int64_t j = 0; j < n; ++j) tail += double(f(x[j]));
    return tail;
  }
  double total[kLanes] = {};
  float lane[kLanes];
  int64_t j = 0;
  for (; j + kBlock <= n; j += kBlock) {
    // The next block's lines are asked for now: one thread streaming rows from memory kept too
    // few reads in flight (a sum of 64 MiB rows ran 10-15% faster alone with this).
    for (int64_t p = 0; p < kBlock; p += 16) __builtin_prefetch(x + j + kBlock + p);
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

namespace {

// GCC's vector extensions, lowered to each clone's ISA: values that loops over arrays left in
// memory (the compiler kept such arrays on the stack and added through loads and stores) stay
// in registers. aligned(4) / aligned(8): loads and stores anywhere.
typedef float f32x4 __attribute__((vector_size(16), aligned(4)));
typedef double f64x4 __attribute__((vector_size(32), aligned(8)));
typedef float f32x8 __attribute__((vector_size(32), aligned(4)));
typedef int32_t i32x8 __attribute__((vector_size(32), aligned(4)));

// sum += v[0..3] in double (by reference: returning an f64x4 would change the baseline ABI).
__attribute__((always_inline)) inline void add_widened(f64x4& sum, const float* v) {
  sum += __builtin_convertvector(*reinterpret_cast<const f32x4*>(v), f64x4);
}

}  // namespace

KB_SIMD_CLONES void add_rows_f32(const float* __restrict x, int64_t rows, int64_t inner,
                                 double* __restrict acc) {
  // Narrow rows (a bias gradient over 16 or 32 channels): blocks of 16 columns, each summed over
  // all rows in registers, even and odd rows apart (two add chains); row after row through
  // memory, the sums waited on their own store and load every row.
  int64_t c0 = 0;
  if (inner <= 64)
    for (; c0 + 16 <= inner; c0 += 16) {
      // Columns c0 + 4q .. c0 + 4q + 3 of the even rows in e<q>, of the odd rows in o<q>.
      f64x4* sum = reinterpret_cast<f64x4*>(acc + c0);  // (typed: auto would drop aligned(8))
      f64x4 e0 = sum[0], e1 = sum[1], e2 = sum[2], e3 = sum[3], o0{}, o1{}, o2{}, o3{};
      const float* p = x + c0;
      int64_t r = 0;
      for (; r + 2 <= rows; r += 2, p += 2 * inner) {
        add_widened(e0, p), add_widened(e1, p + 4), add_widened(e2, p + 8);
        add_widened(e3, p + 12);
        add_widened(o0, p + inner), add_widened(o1, p + inner + 4);
        add_widened(o2, p + inner + 8), add_widened(o3, p + inner + 12);
      }
      if (r < rows)
        add_widened(e0, p), add_widened(e1, p + 4), add_widened(e2, p + 8), add_widened(e3, p + 12);
      sum[0] = e0 + o0, sum[1] = e1 + o1, sum[2] = e2 + o2, sum[3] = e3 + o3;
    }
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * inner;
#pragma omp simd
    for (int64_t i = c0; i < inner; ++i) acc[i] += double(row[i]);
  }
}

namespace {

// The maxima of channels c..c+7 over a window's k >= 1 cells and the first cell holding each.
struct Max8 {
  f32x8 best;
  i32x8 at;
};
__attribute__((always_inline)) inline Max8 window_max8(const float* x, const int64_t* cell,
                                                       int64_t k, int64_t c) {
  Max8 m{*reinterpret_cast<const f32x8*>(x + cell[0] + c), i32x8{}};
  for (int64_t j = 1; j < k; ++j) {
    f32x8 v = *reinterpret_cast<const f32x8*>(x + cell[j] + c);
    i32x8 more = v > m.best;  // strictly: the first maximum stays (and a NaN never replaces)
    m.best = more ? v : m.best;
    m.at = more ? i32x8{} + int32_t(j) : m.at;
  }
  return m;
}

// The same for channel c alone.
__attribute__((always_inline)) inline int64_t window_argmax1(const float* x, const int64_t* cell,
                                                             int64_t k, int64_t c) {
  int64_t at = 0;
  float best = x[cell[0] + c];
  for (int64_t j = 1; j < k; ++j)
    if (x[cell[j] + c] > best) best = x[cell[j] + c], at = j;
  return at;
}

}  // namespace

KB_SIMD_CLONES void max_windows_forward_f32(const float* x, const int64_t* cell, int64_t k,
                                            int64_t windows, int64_t step, float* __restrict y,
                                            int64_t n) {
  for (int64_t w = 0; w < windows; ++w, x += step, y += n) {
    int64_t c = 0;
    for (; c + 8 <= n; c += 8) *reinterpret_cast<f32x8*>(y + c) = window_max8(x, cell, k, c).best;
    for (; c < n; ++c) y[c] = x[cell[window_argmax1(x, cell, k, c)] + c];
  }
}

KB_SIMD_CLONES void max_windows_backward_f32(const float* x, float* dx, const int64_t* cell,
                                             int64_t k, int64_t windows, int64_t step,
                                             const float* __restrict dy, int64_t n) {
  for (int64_t w = 0; w < windows; ++w, x += step, dx += step, dy += n) {
    int64_t c = 0;
    for (; c + 8 <= n; c += 8) {
      i32x8 at = window_max8(x, cell, k, c).at;
      f32x8 g = *reinterpret_cast<const f32x8*>(dy + c), zero = {};
      for (int64_t j = 0; j < k; ++j)
        *reinterpret_cast<f32x8*>(dx + cell[j] + c) = at == int32_t(j) ? g : zero;
    }
    for (; c < n; ++c) {
      int64_t at = window_argmax1(x, cell, k, c);
      for (int64_t j = 0; j < k; ++j) dx[cell[j] + c] = j == at ? dy[c] : 0.0f;
    }
  }
}

KB_SIMD_CLONES float row_max_f32(const float* __restrict x, int64_t n) {
  constexpr float lowest = -std::numeric_limits<float>::infinity();
  if (n < kLanes) {  // the tail alone, as lane_sum
    float m = lowest;
    for (int64_t j = 0; j < n; ++j) m = x[j] > m ? x[j] : m;
    return m;
  }
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

namespace {

// o[j] = a[j] * scale + shift with non-temporal stores (no read of the lines written, no
// eviction of what the caches hold), for results too large to be read again from a cache.
// Written with intrinsics (compilers ignore OpenMP's nontemporal), chosen by the CPU.
__attribute__((target("avx512f"))) void stream_affine_avx512(const float* a, float* o, int64_t n,
                                                             float scale, float shift) {
  int64_t j = 0;
  for (; j < n && (reinterpret_cast<uintptr_t>(o + j) & 63) != 0; ++j) o[j] = a[j] * scale + shift;
  __m512 s = _mm512_set1_ps(scale), t = _mm512_set1_ps(shift);
  for (; j + 16 <= n; j += 16)
    _mm512_stream_ps(o + j, _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(a + j), s), t));
  for (; j < n; ++j) o[j] = a[j] * scale + shift;
  _mm_sfence();
}

__attribute__((target("avx2"))) void stream_affine_avx2(const float* a, float* o, int64_t n,
                                                        float scale, float shift) {
  int64_t j = 0;
  for (; j < n && (reinterpret_cast<uintptr_t>(o + j) & 31) != 0; ++j) o[j] = a[j] * scale + shift;
  __m256 s = _mm256_set1_ps(scale), t = _mm256_set1_ps(shift);
  for (; j + 8 <= n; j += 8)
    _mm256_stream_ps(o + j, _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(a + j), s), t));
  for (; j < n; ++j) o[j] = a[j] * scale + shift;
  _mm_sfence();
}

KB_SIMD_CLONES void affine(const float* __restrict a, float* __restrict o, int64_t n, float scale,
                           float shift) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) o[j] = a[j] * scale + shift;
}

void store_affine(const float* a, float* o, int64_t n, float scale, float shift, bool stream) {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (stream && avx512) return stream_affine_avx512(a, o, n, scale, shift);
  if (stream && avx2) return stream_affine_avx2(a, o, n, scale, shift);
  affine(a, o, n, scale, shift);
}

// exp(x) for x <= 0 or NaN (a softmax's x - max): exp_float without the work that range does
// not need (no overflow, round-to-nearest in one instruction for the floor-of-x+0.5 sequence).
// Within 2 ulp of std::exp; below -104 the result is 0 through the subnormals as exp_float's. A
// NaN is clamped too (its conversion to int would be undefined) and added back, as exp_float's.
inline float exp_nonpositive(float x) {
  float xc = x >= -104.0f ? x : -104.0f;
  float fn = std::nearbyint(xc * 1.44269504088896341f);
  float nan = x != x ? x : 0.0f;
  return times_pow2(exp_reduced(reduce_by_ln2(xc, fn)), int(fn)) + nan;
}

KB_SIMD_CLONES_FMA float exp_shifted_row(const float* __restrict x, float* __restrict e, int64_t n,
                                         float mx) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) e[j] = exp_nonpositive(x[j] - mx);
  return float(1.0 / lane_sum(e, n, [](float v) { return v; }));
}

// log(sum(exp(x - mx))), and the shifted row x - mx into `shifted`.
KB_SIMD_CLONES_FMA float log_sum_exp_shifted(const float* __restrict x, float* __restrict shifted,
                                             int64_t n, float mx) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) shifted[j] = x[j] - mx;
  return float(std::log(lane_sum(shifted, n, [](float v) { return exp_nonpositive(v); })));
}

}  // namespace

void softmax_row_f32(const float* x, float* out, float* scratch, int64_t n, bool log, bool stream) {
  float mx = row_max_f32(x, n);
  if (mx == std::numeric_limits<float>::infinity()) {
    // As the plain loop: exp(inf) / inf = NaN at the infinite entries, 0 elsewhere (log: NaN and
    // -inf), NaN everywhere when the row holds a NaN.
    bool nan = false;
    for (int64_t j = 0; j < n; ++j) nan = nan || x[j] != x[j];
    constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
    const float rest = log ? -std::numeric_limits<float>::infinity() : 0.0f;
    for (int64_t j = 0; j < n; ++j) out[j] = nan || x[j] == mx ? kNaN : rest;
    return;
  }
  // A maximum of -inf (every entry -inf) would make every difference NaN; subtracting nothing
  // gives exp(-inf) = 0 and 0 / 0 = NaN, as the plain loop.
  if (!std::isfinite(mx)) mx = 0.0f;
  if (log) {
    // (x - mx) - log(sum), in that order: x - (mx + log(sum)) loses log(sum) beside a large mx
    // (log_softmax of three equal entries of 1e30 came out 0). s * 1 - ls is s - ls exactly.
    float ls = log_sum_exp_shifted(x, scratch, n, mx);
    store_affine(scratch, out, n, 1.0f, -ls, stream);
    return;
  }
  // The exponentials go to a scratch row that stays in the cache; only the result goes out
  // (e * inv + 0 is e * inv exactly: e >= 0).
  float inv = exp_shifted_row(x, scratch, n, mx);
  store_affine(scratch, out, n, inv, 0.0f, stream);
}

}  // namespace kb::cpu
