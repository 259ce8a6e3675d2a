// Scalar helpers used by expressions of the scalar-op table (device-neutral, header-only).
#pragma once
#include <cmath>
#include <limits>
#include <type_traits>

#ifdef __CUDACC__
#define KB_HD __host__ __device__
#else
#define KB_HD
#endif

namespace kb {

template <class T>
KB_HD inline T scalar_sigmoid(T a) {
  if (a >= T(0)) return T(1) / (T(1) + std::exp(-a));
  T e = std::exp(a);
  return e / (T(1) + e);
}

template <class T>
KB_HD inline T scalar_softplus(T a) {
  return a > T(0) ? a + std::log1p(std::exp(-a)) : std::log1p(std::exp(a));
}

// Integer division truncates and yields 0 for a zero divisor instead of trapping.
template <class T>
KB_HD inline T scalar_div(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return b == T(0) ? T(0) : T(a / b);
  } else {
    return a / b;
  }
}

// Value conversion between arithmetic types as NumPy casts: to bool is "!= 0"; floating to
// integer truncates, NaN gives 0 and out-of-range values saturate.
template <class S, class D>
KB_HD inline D convert_value(S x) {
  if constexpr (std::is_same_v<D, bool>) {
    return x != S(0);
  } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<S>) {
    if (x != x) return D(0);
    if (double(x) >= double(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
    if (double(x) <= double(std::numeric_limits<D>::lowest()))
      return std::numeric_limits<D>::lowest();
    return D(x);
  } else {
    return D(x);
  }
}

}  // namespace kb
