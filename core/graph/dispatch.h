// Calls a generic lambda with a value of the C++ storage type matching a DType.
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/graph/dtype.h"
#include "core/util/error.h"
#include "core/util/narrow_float.h"

namespace kb {

// Compute type for a storage type: float16 and bfloat16 compute in float, bool in bool.
template <class T>
using compute_t = std::conditional_t<is_narrow_float_v<T>, float, T>;

template <class F>
decltype(auto) dispatch_dtype(DType t, F&& f) {
  switch (t) {
    case DType::f16:
      return f(half{});
    case DType::f32:
      return f(float{});
    case DType::f64:
      return f(double{});
    case DType::i8:
      return f(int8_t{});
    case DType::i16:
      return f(int16_t{});
    case DType::i32:
      return f(int32_t{});
    case DType::i64:
      return f(int64_t{});
    case DType::u8:
      return f(uint8_t{});
    case DType::b8:
      return f(bool{});
    case DType::bf16:
      return f(bfloat16{});
  }
  fail(Status::dtype, "unknown dtype ", int(t));
}

template <class T>
constexpr bool is_float_v = std::is_floating_point_v<T> || is_narrow_float_v<T>;

// f(value of the storage type) for a floating dtype; R{} (a declined kernel, say) for the others.
template <class R, class F>
R dispatch_float(DType t, F&& f) {
  return dispatch_dtype(t, [&](auto z) -> R {
    if constexpr (is_float_v<decltype(z)>)
      return f(z);
    else
      return R{};
  });
}

// f(value of the storage type) for every dtype but bool; R{} for bool (no order, no sum).
template <class R, class F>
R dispatch_non_bool(DType t, F&& f) {
  return dispatch_dtype(t, [&](auto z) -> R {
    if constexpr (std::is_same_v<decltype(z), bool>)
      return R{};
    else
      return f(z);
  });
}

}  // namespace kb
