// The arithmetic of the device reductions (core/cuda/reduce.cu), shared with the emulated device
// that runs it on the host: identities, the combining step, the accumulation type, each thread's
// share of a row and a column's walk. A block of kReduceThreads threads reduces a row (or a chunk
// of one): thread t takes positions begin + t, begin + t + kReduceThreads, ..., then the threads'
// partial results combine in a tree, part[t] with part[t + s] for s = kReduceThreads / 2, ..., 1.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/graph/dispatch.h"
#include "core/util/host_device.h"

namespace kb {

constexpr int kReduceThreads = 256;

// Floating types accumulate in double and integers in int64, as on the CPU, so that both devices
// round a sum once.
template <class T>
using reduce_acc_t = std::conditional_t<is_float_v<T>, double, int64_t>;

// The identity of mode (0 sum, 1 prod, 2 max, 3 min) for values of T accumulated in A: an integer
// max or min over an empty axis is T's lowest or highest value, not int64's.
template <class A, class T>
KB_HD A reduce_identity(int mode) {
  if (mode == 0) return A(0);
  if (mode == 1) return A(1);
  if constexpr (std::is_floating_point_v<A>) {
    return mode == 2 ? A(-INFINITY) : A(INFINITY);
  } else {
    return mode == 2 ? A(std::numeric_limits<T>::lowest()) : A(std::numeric_limits<T>::max());
  }
}

// NaN wins a max or min, as on the CPU.
template <class A>
KB_HD A reduce_combine(int mode, A acc, A v) {
  switch (mode) {
    case 0:
      return acc + v;
    case 1:
      return acc * v;
    case 2:
      return (v > acc || v != v) ? v : acc;
    default:
      return (v < acc || v != v) ? v : acc;
  }
}

// An accumulated value as O: a 16-bit float through float, as the CPU rounds it.
template <class O, class A>
KB_HD O reduce_narrow(A a) {
  if constexpr (is_float_v<O>) {
    return O(compute_t<O>(a));
  } else {
    return O(a);
  }
}

// Thread t's share of x[begin, end): E is the element type being reduced (x may hold partial
// results in A already).
template <class E, class A, class X>
KB_HD A reduce_thread_share(const X* x, int64_t begin, int64_t end, int t, int mode) {
  A acc = reduce_identity<A, E>(mode);
  for (int64_t j = begin + t; j < end; j += kReduceThreads)
    acc = reduce_combine<A>(mode, acc, A(x[j]));
  return acc;
}

// Chunk `part` of `parts` of a row of length r: [begin, end).
KB_HD inline void reduce_chunk(int64_t r, int64_t parts, int64_t part, int64_t* begin,
                               int64_t* end) {
  int64_t chunk = (r + parts - 1) / parts;
  *begin = part * chunk;
  *end = *begin + chunk < r ? *begin + chunk : r;
}

// One column: r values `inner` apart, in order.
template <class A, class T>
KB_HD A reduce_column(const T* p, int64_t r, int64_t inner, int mode) {
  A acc = reduce_identity<A, T>(mode);
  for (int64_t j = 0; j < r; ++j) acc = reduce_combine<A>(mode, acc, A(p[j * inner]));
  return acc;
}

}  // namespace kb
