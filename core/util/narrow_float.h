// The 16-bit float storage types (float16, bfloat16): stored in 16 bits, computed in float.
#pragma once
#include <type_traits>

#include "core/util/bfloat16.h"
#include "core/util/half.h"

namespace kb {

template <class T>
constexpr bool is_narrow_float_v = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

}  // namespace kb
