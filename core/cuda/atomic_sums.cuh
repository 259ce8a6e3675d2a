// Scattered sums on the device (gather's gradient, densified duplicates, scatter_nd, sparse
// products) through atomics, in accumulators of sum_t<T>, with the sums the CPU's
// core/cpu/sum_into.h gives:
// - a 16-bit float result sums in float and is rounded into once every term is in (a 16-bit
//   atomic per term would round twice per term, the product then the sum, and stall where the
//   type's spacing exceeds a term);
// - an int8, int16, uint8 or bool result sums in int32 and is narrowed once: the CPU's sum in
//   the type itself wraps modulo 2^bits at every term, which ends at the same value, and a bool
//   sum (an OR) is true exactly when the int32 count of true terms is not zero.
#pragma once
#include <memory>
#include <type_traits>

#include "core/cuda/common.cuh"
#include "core/ops/scalar_funcs.h"
#include "core/graph/dispatch.h"

namespace kb::cuda {

// The type a sum into T accumulates in: one with device atomics.
template <class T>
using sum_t =
    std::conditional_t<is_narrow_float_v<T>, float,
                       std::conditional_t<(std::is_integral_v<T> && sizeof(T) < 4), int32_t, T>>;

// *p += v for the accumulator types (float, double, int32, int64).
template <class A>
__device__ void atomic_add(A* p, A v) {
  static_assert(std::is_same_v<sum_t<A>, A>, "not an accumulator type");
  if constexpr (std::is_same_v<A, int64_t>) {
    // two's complement: the unsigned sum wraps to the signed one
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else {
    atomicAdd(p, v);
  }
}

template <class T>
__global__ void narrow_sums_kernel(const sum_t<T>* acc, T* out, int64_t n) {
  KB_GRID_LOOP(i, n) {
    if constexpr (is_narrow_float_v<T>)
      out[i] = convert_value<float, T>(acc[i]);
    else
      out[i] = T(acc[i]);  // modulo 2^bits; a bool is whether the count is not zero
  }
}

// The accumulators of a sum into `out`, all zero: out itself, or scratch ones of sum_t<T> that
// finish() narrows into it. Call finish() once the terms are in (also when there were none).
template <class T>
class SumTarget {
 public:
  using A = sum_t<T>;
  explicit SumTarget(Buffer& out) : out_(out) {
    if constexpr (std::is_same_v<A, T>) {
      zero_on_device(out);
      acc_ = out.as<T>();
    } else {
      size_t bytes = sizeof(A) * size_t(out.numel());
      mem_ = scratch(bytes);
      check_cuda(cudaMemsetAsync(mem_.get(), 0, bytes, stream()), "memset");
      acc_ = static_cast<A*>(mem_.get());
    }
  }
  A* acc() const { return acc_; }
  void finish() {
    if constexpr (!std::is_same_v<A, T>) {
      int64_t n = out_.numel();
      if (n == 0) return;
      narrow_sums_kernel<<<blocks_for(n), 256, 0, stream()>>>(acc_, out_.as<T>(), n);
      after_launch("sum");
    }
  }

 private:
  Buffer& out_;
  std::shared_ptr<void> mem_;
  A* acc_ = nullptr;
};

}  // namespace kb::cuda
