// Scalar helpers used by expressions of the scalar-op table (device-neutral, header-only).
#pragma once
#include <cmath>
#include <type_traits>

namespace kb {

template <class T>
inline T scalar_sigmoid(T a) {
  if (a >= T(0)) return T(1) / (T(1) + std::exp(-a));
  T e = std::exp(a);
  return e / (T(1) + e);
}

template <class T>
inline T scalar_softplus(T a) {
  return a > T(0) ? a + std::log1p(std::exp(-a)) : std::log1p(std::exp(a));
}

// Integer division truncates and yields 0 for a zero divisor instead of trapping.
template <class T>
inline T scalar_div(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return b == T(0) ? T(0) : T(a / b);
  } else {
    return a / b;
  }
}

}  // namespace kb
