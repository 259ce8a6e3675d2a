// Shared pieces of the CUDA plugin: the stream, errors, launch sizes, registration, and the
// strided index arithmetic of broadcasting kernels.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/backend/device.h"
#include "core/backend/kernel.h"
#include "core/kernel_plans/pool_problem.h"
#include "core/kernel_plans/reduce_plan.h"
#include "core/kernel_plans/strided_map.h"
#include "core/graph/dispatch.h"

namespace kb::cuda {

// Makes the plugin's GPU the calling thread's current device (the CUDA runtime's current device
// is per host thread): before anything that binds to a device, such as a library handle.
void use_device();
cudaStream_t stream();  // the plugin's one stream (use_device() included)
void check_cuda(cudaError_t e, const char* what);
// Scratch memory from the plugin's caching allocator (stream-ordered reuse).
void* scratch_alloc(size_t bytes);
void scratch_free(void* p);
// Gives the allocator's idle blocks back to CUDA: for an allocation outside the allocator (a
// library's own) that failed while the cache held memory.
void release_cached_memory();
// A block of scratch memory, freed (for reuse by later work on the stream) with its last holder.
inline std::shared_ptr<void> scratch(size_t bytes) {
  return std::shared_ptr<void>(scratch_alloc(bytes ? bytes : 1), scratch_free);
}

// Reports the first index error the calling thread's kernels flagged since the last call (by
// throwing the CPU's error for it) and forgets them (index_errors.cuh).
void settle_checks();

// The data-parallel job, as the core handed it at init (core/backend/device.h).
const JobHost& job();
// Waits for the stream's work; while collectives are queued there, no longer than the job's
// deadline, failing the job past it (core/cuda/collectives.cu).
void wait_for_stream(const char* what);

// Elements [begin, begin + n) of a device buffer, on the host (waits for the stream). Settles
// first: data computed after an index error is not read unseen.
template <class T>
std::vector<T> host_copy(const Buffer& b, int64_t begin, int64_t n) {
  settle_checks();
  std::vector<T> v(static_cast<size_t>(n));
  if (n) {
    check_cuda(cudaMemcpyAsync(v.data(), b.as<T>() + begin, sizeof(T) * size_t(n),
                               cudaMemcpyDeviceToHost, stream()),
               "copy to host");
    wait_for_stream("copy to host");
  }
  return v;
}

// A library's handle, made once per process by create(&h) (true on success) on the plugin's GPU;
// each call site (a distinct `create` lambda) has its own. Libraries allocate device memory of
// their own when they make a handle: a failure is retried once with the allocator's cache given
// back, and a failed handle is tried again on the next call rather than kept as a failure.
template <class H, class Create>
H library_handle(Create create, const char* what) {
  use_device();
  static std::atomic<H> made{H{}};
  if (H h = made.load(std::memory_order_acquire); h != H{}) return h;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (H h = made.load(std::memory_order_relaxed); h != H{}) return h;
  H h{};
  if (!create(&h)) {
    release_cached_memory();
    h = H{};
    if (!create(&h)) h = H{};
  }
  check(h != H{}, Status::device, "cuda: ", what, " failed");
  made.store(h, std::memory_order_release);
  return h;
}

inline unsigned blocks_for(int64_t n, int threads = 256) {
  int64_t b = (n + threads - 1) / threads;
  if (b < 1) b = 1;
  return unsigned(b > 65535 * 16 ? 65535 * 16 : b);
}
inline void after_launch(const char* what) { check_cuda(cudaGetLastError(), what); }

// A grid-stride loop: each thread of the launch takes indices i < n, a grid's width apart.
#define KB_GRID_LOOP(i, n)                                                  \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += int64_t(gridDim.x) * blockDim.x)

// Calls f(E{}) with E the unsigned integer type of `bytes` bytes (1, 2, 4, 8): for kernels that
// only move elements, whatever their dtype.
template <class F>
void with_element_type(size_t bytes, F&& f) {
  switch (bytes) {
    case 1:
      f(uint8_t{});
      break;
    case 2:
      f(uint16_t{});
      break;
    case 4:
      f(uint32_t{});
      break;
    default:
      f(uint64_t{});
  }
}

// Kernels registered by the translation units of the plugin, handed to the core at init.
struct Registration {
  const char* op;
  KernelFactory factory;
};
std::vector<Registration>& registrations();
constexpr int kMaxDims = kMaxDeviceRank;

// Registers an op's factory: the op has a row in core/kernel_plans/cuda_ops.cpp, which the plugin
// asks first.
struct Registrar {
  Registrar(OpName op, KernelFactory f);
};

// out[out_base + offset0(i)] = in[in_base + offset1(i)] for i < n
// (core/kernel_plans/strided_map.h).
void strided_copy_on_device(const Buffer& in, int64_t in_base, Buffer& out, int64_t out_base,
                            const StridedMap& m, int64_t n);
void zero_on_device(Buffer& out);
// n bytes from src to dst, both device memory, queued on the stream.
void copy_on_device(void* dst, const void* src, size_t n);
// mode: 0 sum, 1 prod, 2 max, 3 min (core/ops/build.h ReduceMode).
void reduce_on_device(int mode, const ReducePlan& p, const Buffer& in, Buffer& out);

// Pool, PoolBackward or MaxPoolGradGrad through own kernels (core/cuda/pool.cu): any padding;
// empty for an unsupported dtype.
Kernel window_pool_kernel(const KernelArgs& k, PoolKernel which);

// out = in with axes permuted (out's dims are in's dims permuted by perm).
void transpose_on_device(const Buffer& in, Buffer& out, const std::vector<int64_t>& perm);

}  // namespace kb::cuda
