// Reading and writing single scalars of any dtype (constants, attributes).
#include "core/graph/scalar.h"

#include "core/util/convert_value.h"
#include "core/graph/dispatch.h"

namespace kb {

void write_scalar(DType t, void* p, double v) {
  dispatch_dtype(t, [&](auto z) {
    using T = decltype(z);
    if constexpr (is_narrow_float_v<T>)
      *static_cast<T*>(p) = T(static_cast<float>(v));
    else
      *static_cast<T*>(p) = convert_value<double, T>(v);
  });
}

double read_scalar(DType t, const void* p) {
  return dispatch_dtype(t, [&](auto z) -> double {
    using T = decltype(z);
    if constexpr (is_narrow_float_v<T>)
      return static_cast<float>(*static_cast<const T*>(p));
    else
      return static_cast<double>(*static_cast<const T*>(p));
  });
}

}  // namespace kb
