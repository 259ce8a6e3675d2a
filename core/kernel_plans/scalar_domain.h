// Which storage types an elementwise kernel of the scalar-op table runs on; a device declines
// the others.
#pragma once
#include <type_traits>

#include "core/graph/dispatch.h"
#include "core/ops/scalar_ops.h"

namespace kb {

// Whether a scalar-op domain (core/ops/scalar_ops.h) admits storage type T.
template <ScalarDomain D, class T>
constexpr bool in_domain() {
  if constexpr (D == ScalarDomain::F) {
    return is_float_v<T>;
  } else if constexpr (D == ScalarDomain::N) {
    return !std::is_same_v<T, bool>;
  } else {
    return true;
  }
}

// f(value of the storage type) for the dtypes domain D admits; R{} (a declined kernel) for the
// others.
template <ScalarDomain D, class R, class F>
R dispatch_in_domain(DType t, F&& f) {
  return dispatch_dtype(t, [&](auto z) -> R {
    if constexpr (in_domain<D, decltype(z)>())
      return f(z);
    else
      return R{};
  });
}

}  // namespace kb
