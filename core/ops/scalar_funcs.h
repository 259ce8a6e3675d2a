// Scalar helpers used by expressions of the scalar-op table (device-neutral, header-only).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/util/convert_value.h"
#include "core/util/host_device.h"

namespace kb {

#ifndef __CUDA_ARCH__
// The pieces of exp_float (Cephes' expf), shared with the CPU's softmax exp.
// t = x - n ln2, with ln2 in two parts so that the product is exact enough.
inline float reduce_by_ln2(float x, float fn) {
  float t = x - fn * 0.693359375f;
  return t - fn * -2.12194440e-4f;
}

// e^t for t in [-ln2/2, ln2/2]: a degree-6 polynomial.
inline float exp_reduced(float t) {
  float y = 1.9875691500e-4f;
  y = y * t + 1.3981999507e-3f;
  y = y * t + 8.3334519073e-3f;
  y = y * t + 4.1665795894e-2f;
  y = y * t + 1.6666665459e-1f;
  y = y * t + 5.0000001201e-1f;
  // t * t of a tiny t (an argument near 0) would be subnormal, a microcode assist per element
  // (5x slower); below 2^-33 its term is far under an ulp of the result anyway. The square is
  // taken of t nudged by 1e-18, which leaves any t above 2^-33 unchanged (half its ulp is
  // larger) and keeps a tiny one's square normal; the tiny term is then selected away. (A
  // select before the product is folded by the compiler into a masked one that still
  // multiplies the subnormals.)
  bool tiny = t < 1.16415322e-10f && t > -1.16415322e-10f;
  float tq = t + (t < 0 ? -1e-18f : 1e-18f);
  float square_term = y * (tq * tq);
  return (tiny ? 0.0f : square_term) + t + 1.0f;
}

// y * 2^n for n in [-150, 129], as two normal factors.
inline float times_pow2(float y, int n) {
  int h = n >> 1;
  uint32_t b1 = uint32_t(h + 127) << 23, b2 = uint32_t(n - h + 127) << 23;
  float p1, p2;
  std::memcpy(&p1, &b1, sizeof p1);
  std::memcpy(&p2, &b2, sizeof p2);
  return y * p1 * p2;
}

// exp of a float without branches or library calls, so that loops over it vectorize (Cephes'
// expf: a degree-6 polynomial on [-ln2/2, ln2/2] scaled by 2^n; within 2 ulp of std::exp,
// overflow to inf, underflow through the subnormals to 0, NaN kept).
inline float exp_float(float x) {
  // A NaN takes the low bound here (its conversion to int below would be undefined) and comes
  // back through `nan`.
  float xc = x >= -104.0f ? (x > 89.0f ? 89.0f : x) : -104.0f;
  float fx = xc * 1.44269504088896341f + 0.5f;
  int n = int(fx);
  n -= float(n) > fx ? 1 : 0;  // floor
  float r = times_pow2(exp_reduced(reduce_by_ln2(xc, float(n))), n);
  float nan = x != x ? x : 0.0f;  // added rather than selected: vectorizes for AVX2 too
  return r + nan;
}

// tanh of a float, branch-free as exp_float (Cephes' tanhf: an odd polynomial below 0.625,
// 1 - 2 / (exp(2|x|) + 1) above).
inline float tanh_float(float x) {
  float ax = x < 0 ? -x : x;
  // Below 2^-13 the odd terms are under half an ulp of x and x is the result. The polynomial
  // runs on x nudged by 1e-12, which leaves any x above 2^-13 unchanged and keeps a tiny x's
  // products normal (subnormals cost a microcode assist per element; see exp_float).
  bool tiny = ax < 1.220703125e-4f;
  float xs = x + (x < 0 ? -1e-12f : 1e-12f);
  float z = xs * xs;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  float small = tiny ? x : p * z * xs + xs;
  float e = exp_float(2.0f * ax);
  float large = 1.0f - 2.0f / (e + 1.0f);
  large = x < 0 ? -large : large;
  float r = ax < 0.625f ? small : large;
  return x == 0.0f ? x : r;  // keeps -0
}
#endif

// exp and tanh as the table computes them: float on the CPU without library calls.
template <class T>
KB_HD inline T scalar_exp(T a) {
#ifndef __CUDA_ARCH__
  if constexpr (std::is_same_v<T, float>) return exp_float(a);
#endif
  return std::exp(a);
}

template <class T>
KB_HD inline T scalar_tanh(T a) {
#ifndef __CUDA_ARCH__
  if constexpr (std::is_same_v<T, float>) return tanh_float(a);
#endif
  return std::tanh(a);
}

template <class T>
KB_HD inline T scalar_sigmoid(T a) {
  T e = scalar_exp(a < T(0) ? a : -a);  // exp(-|a|)
  // One division: selecting between two quotients made vectorized loops compute both.
  T num = a >= T(0) ? T(1) : e;
  return num / (T(1) + e);
}

template <class T>
KB_HD inline T scalar_softplus(T a) {
  return a > T(0) ? a + std::log1p(std::exp(-a)) : std::log1p(std::exp(a));
}

// maximum and minimum propagate a NaN in either operand, as NumPy's (and so clip and
// l2_normalize keep a NaN instead of replacing it with a bound).
template <class T>
KB_HD inline T scalar_max(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return a >= b ? a : b;
  else
    return a >= b || a != a ? a : b;
}
template <class T>
KB_HD inline T scalar_min(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return a <= b ? a : b;
  else
    return a <= b || a != a ? a : b;
}

// Integer division truncates and yields 0 for a zero divisor instead of trapping; the lowest
// value divided by -1 wraps to itself (two's complement) instead of trapping.
template <class T>
KB_HD inline T scalar_div(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    if (b == T(-1)) return T(U(0) - U(a));
    return b == T(0) ? T(0) : T(a / b);
  } else if constexpr (std::is_integral_v<T>) {
    return b == T(0) ? T(0) : T(a / b);
  } else {
    return a / b;
  }
}

}  // namespace kb
