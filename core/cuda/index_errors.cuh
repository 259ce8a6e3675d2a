// Index errors found on the device, reported through a flag read back after the kernel, and the
// pieces of the kernels that index by data (gather, scatter, sparse): the index dtype dispatch,
// atomic sums.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <memory>
#include <type_traits>

#include "core/cuda/common.cuh"

namespace kb::cuda {

// kNoError marks "no bad index" for flags that hold a bad value; kNoRow for flags that hold the
// lowest bad row (atomicMin).
constexpr long long kNoError = (-9223372036854775807LL - 1);
constexpr long long kNoRow = 9223372036854775807LL;

struct ErrorFlag {
  explicit ErrorFlag(long long none_value = kNoError) : none(none_value) {
    check_cuda(cudaMemcpyAsync(ptr(), &none, sizeof none, cudaMemcpyHostToDevice, stream()),
               "copy");
  }
  long long none;
  std::shared_ptr<void> mem = scratch(sizeof(long long));
  long long* ptr() { return static_cast<long long*>(mem.get()); }
  long long read() {
    long long v = -1;
    check_cuda(cudaMemcpyAsync(&v, ptr(), sizeof v, cudaMemcpyDeviceToHost, stream()), "copy");
    check_cuda(cudaStreamSynchronize(stream()), "sync");
    return v;
  }
  // Fails with "<who>: <what> <bad> is out of range [0, limit)" when a kernel flagged an index.
  void check_ok(const char* who, const char* what, int64_t limit) {
    long long bad = read();
    check(bad == kNoError, Status::invalid_argument, who, ": ", what, " ", bad,
          " is out of range [0, ", limit, ")");
  }
};

template <class I>
__device__ bool index_ok(I v, int64_t limit, long long* bad) {
  if (v < 0 || int64_t(v) >= limit) {
    atomicExch(reinterpret_cast<unsigned long long*>(bad), static_cast<unsigned long long>(v));
    return false;
  }
  return true;
}

// Records row as bad: the flag (ErrorFlag(kNoRow)) ends up holding the lowest bad row.
__device__ inline void flag_row(long long* bad, int64_t row) { atomicMin(bad, (long long)row); }

template <class F>
Kernel with_index_type(DType t, F&& f) {
  if (t == DType::i32) return f(int32_t{});
  return f(int64_t{});
}

// *p += v for the dtypes with device atomics (half, bfloat16 (sm_80 and later), float, double,
// int32, int64).
template <class T>
__device__ void atomic_add(T* p, T v) {
  if constexpr (std::is_same_v<T, half>) {
    atomicAdd(reinterpret_cast<__half*>(p), __float2half(float(v)));
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    atomicAdd(reinterpret_cast<__nv_bfloat16*>(p), __float2bfloat16(float(v)));
  } else if constexpr (std::is_same_v<T, int64_t>) {
    // two's complement: the unsigned sum wraps to the signed one
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else {
    atomicAdd(p, v);
  }
}
template <class T>
constexpr bool has_atomic_add_v =
    is_narrow_float_v<T> || std::is_same_v<T, float> || std::is_same_v<T, double> ||
    std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>;

}  // namespace kb::cuda
