// The dtypes that the GPU's kernels sum into memory with atomics (16-bit floats from sm_80 on).
// Sparse sums of the other dtypes (int8, int16, uint8, bool) are declined there and run on the
// CPU; the emulated device declines the same ones.
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/util/narrow_float.h"

namespace kb {

template <class T>
constexpr bool has_atomic_add_v =
    is_narrow_float_v<T> || std::is_same_v<T, float> || std::is_same_v<T, double> ||
    std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>;

}  // namespace kb
