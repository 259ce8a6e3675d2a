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

}  // namespace kb
