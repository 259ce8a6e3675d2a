// CUDA pooling through the per-element functions of core/kernel_plans/pool_windows.h (the CPU
// reference loops' own): Pool and PoolBackward where cuDNN cannot describe the padding (asymmetric
// 'same') or the size, max pooling's gradient (the first of tied maxima, as the CPU's), and
// MaxPoolGradGrad. One thread per output cell (forward, MaxPoolGradGrad) or input cell
// (backward: it gathers the outputs reading it, no atomics).
#include "core/cuda/common.cuh"
#include "core/kernel_plans/pool_problem.h"

namespace kb::cuda {
namespace {

template <class T>
__global__ void pool_forward_kernel(PoolWindows g, bool avg, const T* x, T* y, int64_t n) {
  KB_GRID_LOOP(e, n) y[e] = pool_forward_at<compute_t<T>, pool_acc_t<T>>(g, avg, x, e);
}

template <class T>
__global__ void pool_backward_kernel(PoolWindows g, bool avg, const T* dy, const T* x, T* dx,
                                     int64_t n) {
  KB_GRID_LOOP(e, n) dx[e] = pool_backward_at<compute_t<T>>(g, avg, dy, x, e);
}

template <class T>
__global__ void max_pool_grad_grad_kernel(PoolWindows g, const T* gx, const T* x, T* out,
                                          int64_t n) {
  KB_GRID_LOOP(e, n) out[e] = max_pool_grad_grad_at<compute_t<T>>(g, gx, x, e);
}

template <class T>
Kernel typed_kernel(const PoolWindows& g, bool avg, PoolKernel which) {
  return [g, avg, which](const std::vector<const Buffer*>& in, Buffer& out) {
    int64_t n = out.numel();
    if (n == 0) return;
    if (which == PoolKernel::forward)
      pool_forward_kernel<<<blocks_for(n), 256, 0, stream()>>>(g, avg, in[0]->as<T>(), out.as<T>(),
                                                               n);
    else if (which == PoolKernel::backward)
      pool_backward_kernel<<<blocks_for(n), 256, 0, stream()>>>(g, avg, in[0]->as<T>(),
                                                                in[1]->as<T>(), out.as<T>(), n);
    else
      max_pool_grad_grad_kernel<<<blocks_for(n), 256, 0, stream()>>>(
          g, in[0]->as<T>(), in[1]->as<T>(), out.as<T>(), n);
    after_launch("pooling");
  };
}

Kernel make_max_pool_grad_grad(const KernelArgs& k) {
  return window_pool_kernel(k, PoolKernel::max_grad_grad);
}
Registrar r1("MaxPoolGradGrad", make_max_pool_grad_grad);

}  // namespace

Kernel window_pool_kernel(const KernelArgs& k, PoolKernel which) {
  PoolProblem p = pool_problem(k, which);
  PoolWindows g = p.windows();
  bool avg = p.avg();
  // Other dtypes are declined: the CPU kernel reports the error.
  return dispatch_float<Kernel>(k.out.dtype,
                                [&](auto z) { return typed_kernel<decltype(z)>(g, avg, which); });
}

}  // namespace kb::cuda
