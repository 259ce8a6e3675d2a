// Softmax and log-softmax as the device computes them (core/cuda/reduce.cu), shared with the
// emulated device that runs them on the host. A row (the axis is the last) takes a block of
// kReduceThreads threads: each finds the max of its share (positions t, t + kReduceThreads, ...;
// NaN passed over), the shares combine in a tree, a max that is not finite counts as 0; then each
// sums exp(x - max) over its share and those sums combine in a tree. A line across a strided axis
// takes one thread, in order.
#pragma once
#include <cmath>
#include <cstdint>

#include "core/kernel_plans/device_reduce.h"
#include "core/util/host_device.h"

namespace kb {

template <class C>
KB_HD C softmax_max_of(C a, C b) {
  return b > a ? b : a;
}

// A max that is not finite (no value but NaN or infinities) shifts nothing.
template <class C>
KB_HD C softmax_shift(C mx) {
  return mx - mx == C(0) ? mx : C(0);
}

template <class C, class T>
KB_HD C softmax_share_max(const T* p, int64_t n, int t) {
  C mx = C(-INFINITY);
  for (int64_t j = t; j < n; j += kReduceThreads) mx = softmax_max_of(mx, C(p[j]));
  return mx;
}

template <class C, class T>
KB_HD C softmax_share_sum(const T* p, int64_t n, int t, C mx) {
  C sum = 0;
  for (int64_t j = t; j < n; j += kReduceThreads) sum += std::exp(C(p[j]) - mx);
  return sum;
}

template <bool Log, class C>
KB_HD C softmax_value(C v, C mx, C sum) {
  return Log ? v - mx - std::log(sum) : std::exp(v - mx) / sum;
}

// A line of n values `inner` apart.
template <bool Log, class C, class T>
KB_HD void softmax_line(const T* x, T* out, int64_t n, int64_t inner) {
  C mx = C(-INFINITY);
  for (int64_t j = 0; j < n; ++j) mx = softmax_max_of(mx, C(x[j * inner]));
  mx = softmax_shift(mx);
  C sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += std::exp(C(x[j * inner]) - mx);
  for (int64_t j = 0; j < n; ++j) out[j * inner] = T(softmax_value<Log>(C(x[j * inner]), mx, sum));
}

}  // namespace kb
