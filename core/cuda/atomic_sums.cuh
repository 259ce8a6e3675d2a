// Scattered sums on the device (gather's gradient, densified duplicates, scatter_nd, sparse
// products) through atomics, in compute_t<T> as core/cpu/sum_into.h sums them: a 16-bit float
// result gets float accumulators in scratch memory, rounded into it once every term is in. A
// 16-bit atomic per term would round twice per term (the product, then the sum), and stall where
// the type's spacing exceeds a term.
#pragma once
#include <memory>
#include <type_traits>

#include "core/cuda/common.cuh"
#include "core/ops/scalar_funcs.h"
#include "core/util/atomic_sum.h"
#include "core/util/dispatch.h"

namespace kb::cuda {

// *p += v for the accumulator types (float, double, int32, int64).
template <class A>
__device__ void atomic_add(A* p, A v) {
  static_assert(!is_narrow_float_v<A>, "16-bit floats sum into float accumulators");
  if constexpr (std::is_same_v<A, int64_t>) {
    // two's complement: the unsigned sum wraps to the signed one
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else {
    atomicAdd(p, v);
  }
}

template <class T>
__global__ void round_sums_kernel(const float* acc, T* out, int64_t n) {
  KB_GRID_LOOP(i, n) out[i] = convert_value<float, T>(acc[i]);
}

// The accumulators of a sum into `out` (a dtype of has_atomic_add_v), all zero: out itself, or
// float ones for a 16-bit float out, which finish() rounds into it. Call finish() once the terms
// are in (also when there were none).
template <class T>
class SumTarget {
 public:
  using A = compute_t<T>;
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
      round_sums_kernel<<<blocks_for(n), 256, 0, stream()>>>(acc_, out_.as<T>(), n);
      after_launch("sum");
    }
  }

 private:
  Buffer& out_;
  std::shared_ptr<void> mem_;
  A* acc_ = nullptr;
};

}  // namespace kb::cuda
