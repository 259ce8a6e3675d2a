// int64 arithmetic on sizes a caller chose (dims, starts, steps, paddings, dilations, factors):
// a sum or product that does not fit fails with Status::invalid_argument and the caller's message
// instead of wrapping around into a plausible-looking negative or small dimension.
#pragma once
#include <cstdint>

#include "core/util/error.h"

namespace kb {

// The message parts are only formatted on overflow, so these cost one branch when nothing fails.
template <class... Parts>
int64_t checked_add(int64_t a, int64_t b, const Parts&... parts) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) fail(Status::invalid_argument, parts...);
  return r;
}

template <class... Parts>
int64_t checked_mul(int64_t a, int64_t b, const Parts&... parts) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail(Status::invalid_argument, parts...);
  return r;
}

// The extent of an axis of `size` padded by `before` and `after` (all non-negative).
template <class... Parts>
int64_t padded_size(int64_t size, int64_t before, int64_t after, const Parts&... parts) {
  return checked_add(checked_add(size, before, parts...), after, parts...);
}

}  // namespace kb
