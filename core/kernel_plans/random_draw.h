// The numbers of the Random primitive (core/ops/random_ops.cpp), shared by the CPU and CUDA
// kernels so that both devices draw the same values. Every element has its own Philox counter
// (element index, re-draw attempt, run number) under the key `seed`, so the numbers do not
// depend on how the work is split, and run r of a node always gives the same numbers.
//   uniform: float64 takes 53 bits (two words), float32 24 bits, float16 11 bits and bfloat16
//            8 bits (one word each): kUniformBits; the value is a + (b - a) * u;
//   normal:  Box-Muller on two 53-bit uniforms of one block (u1 in (0, 1]);
//   truncated normal: as normal, re-drawn with the next attempt's block while |z| > 2.
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/graph/dispatch.h"
#include "core/ops/random_spec.h"
#include "core/util/host_device.h"
#include "core/util/philox.h"

namespace kb {

struct RandomDraw {
  uint32_t k0, k1;
  uint64_t run;

  KB_HD void block(uint64_t index, uint32_t attempt, uint32_t* w) const {
    w[0] = uint32_t(index);
    w[1] = uint32_t((index >> 32) & 0xFFFFu) | (attempt << 16);
    w[2] = uint32_t(run);
    w[3] = uint32_t(run >> 32);
    philox4x32_10(w, k0, k1);
  }
};

inline RandomDraw random_draw(uint64_t seed, uint64_t run) {
  return {uint32_t(seed), uint32_t(seed >> 32), run};
}

KB_HD inline double random_u53(uint32_t hi, uint32_t lo) {  // [0, 1)
  return double((uint64_t(hi >> 5) << 26) | (lo >> 6)) * (1.0 / 9007199254740992.0);
}

KB_HD inline double random_std_normal(const uint32_t* b) {
  double u1 = 1.0 - random_u53(b[0], b[1]);  // (0, 1]
  double u2 = random_u53(b[2], b[3]);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// The random bits of a uniform u in [0, 1) of dtype T: as many as T's significand holds, so u is
// exact in T (more bits would round a u just below 1 up to 1).
template <class T>
constexpr int kUniformBits = std::is_same_v<T, double>     ? 53
                             : std::is_same_v<T, float>    ? 24
                             : std::is_same_v<T, bfloat16> ? 8
                                                           : 11;
// The same for a floating dtype known at run time.
inline int uniform_bits(DType t) {
  return dispatch_dtype(t, [](auto z) { return kUniformBits<decltype(z)>; });
}

// Uniform draws: elements per Philox block (float64 takes two words each).
template <class T>
constexpr int64_t kUniformPerBlock = std::is_same_v<T, double> ? 2 : 4;

// Element j of a uniform block w, in [a, b).
template <class T>
KB_HD T random_uniform_element(const uint32_t* w, int64_t j, double a, double b) {
  double u;
  if constexpr (std::is_same_v<T, double>)
    u = random_u53(w[2 * j], w[2 * j + 1]);
  else
    u = double(w[j] >> (32 - kUniformBits<T>)) * (1.0 / double(1u << kUniformBits<T>));
  using C = compute_t<T>;
  return T(C(a) + (C(b) - C(a)) * C(u));
}

// The number of uniform blocks of an n-element draw.
template <class T>
KB_HD constexpr int64_t random_uniform_blocks(int64_t n) {
  return (n + kUniformPerBlock<T> - 1) / kUniformPerBlock<T>;
}

// Uniform block i of an n-element draw in [a, b): o[i * per, min((i + 1) * per, n)).
template <class T>
KB_HD void random_uniform_block(const RandomDraw& d, int64_t i, T* o, int64_t n, double a,
                                double b) {
  constexpr int64_t per = kUniformPerBlock<T>;
  uint32_t w[4];
  d.block(uint64_t(i), 0, w);
  for (int64_t j = 0; j < per && i * per + j < n; ++j)
    o[i * per + j] = random_uniform_element<T>(w, j, a, b);
}

// Element i of a normal (mean a, stddev b) or truncated normal draw.
template <class T>
KB_HD T random_normal_element(const RandomDraw& d, uint64_t i, int64_t dist, double a, double b) {
  uint32_t w[4];
  d.block(i, 0, w);
  double z = random_std_normal(w);
  // Truncated: re-draw beyond 2 stddev (P = 4.6% per attempt).
  for (uint32_t att = 1; dist == kTruncatedNormal && std::abs(z) > 2.0 && att < 0xFFFFu; ++att) {
    d.block(i, att, w);
    z = random_std_normal(w);
  }
  if (dist == kTruncatedNormal && std::abs(z) > 2.0) z = 0.0;
  return T(compute_t<T>(a + b * z));
}

}  // namespace kb
