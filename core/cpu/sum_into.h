// Sums of scattered terms (gather's gradient, densified duplicates, sparse products) into a
// result, in compute_t<T>: a 16-bit float result is summed in a float copy and rounded once at
// the end, as the GPU sums it (float atomics), so that a row gathered a thousand times keeps
// float's precision in its gradient instead of stalling where 16-bit spacing exceeds a term.
#pragma once
#include <algorithm>
#include <type_traits>

#include "core/backend/kernel.h"
#include "core/cpu/scratch.h"
#include "core/cpu/widen.h"
#include "core/graph/dispatch.h"

namespace kb::cpu {

struct SumIntoScratch;

// add(acc) adds the terms into acc (out.numel() accumulators, zero beforehand) with
// acc[k] = C(acc[k] + term); out then holds the sums.
template <class T, class F>
void sum_into(Buffer& out, F&& add) {
  using C = compute_t<T>;
  int64_t n = out.numel();
  T* o = out.as<T>();
  if constexpr (std::is_same_v<C, T>) {
    std::fill(o, o + n, T(0));
    add(o);
  } else {
    ThreadScratch<C, SumIntoScratch> acc{size_t(n)};
    std::fill(acc.data(), acc.data() + n, C(0));
    add(acc.data());
    narrow_into(out.dtype, acc.data(), o, n);
  }
}

}  // namespace kb::cpu
