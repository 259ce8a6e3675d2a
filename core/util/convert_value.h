// One scalar converted between arithmetic types as NumPy casts it, without the undefined
// behaviour of a plain static_cast from a floating value out of the integer type's range.
#pragma once
#include <limits>
#include <type_traits>

#include "core/util/host_device.h"

namespace kb {

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
