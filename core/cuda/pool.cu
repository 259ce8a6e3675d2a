// CUDA pooling: Pool and PoolBackward through cuDNN where it can describe them, else (and for
// max pooling's gradient and MaxPoolGradGrad) through the per-element functions of
// core/kernel_plans/pool_windows.h (the CPU reference loops' own): where cuDNN cannot describe the
// padding (asymmetric 'same') or the size, max pooling's gradient (the first of tied maxima, as
// the CPU's; cuDNN does not say which it picks), and MaxPoolGradGrad. One thread per output cell
// (forward, MaxPoolGradGrad) or input cell (backward: it gathers the outputs reading it, no
// atomics).
#include "core/cuda/common.cuh"
#include "core/cuda/cudnn.cuh"
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
Registrar r1(ops::MaxPoolGradGrad, make_max_pool_grad_grad);

using Ins = std::vector<const Buffer*>;

struct PoolState {
  std::unique_ptr<TensorDesc> x, y;
  cudnnPoolingDescriptor_t pool = nullptr;
  ~PoolState() {
    if (pool) cudnnDestroyPoolingDescriptor(pool);
  }
};

// Forward: a is x, the result y. Backward: a is dy, the result dx; only average pooling's gradient
// comes here (max pooling's is the plugin's kernel), and it does not depend on the forward result
// that cuDNN's call takes: dy, of y's layout, stands in for it.
template <class T>
cudnnStatus_t pool_call(const PoolState& s, bool backward, const void* a, const void* x,
                        void* result) {
  const compute_t<T> one = 1, zero = 0;
  if (!backward)
    return cudnnPoolingForward(handle(), s.pool, &one, s.x->d, a, &zero, s.y->d, result);
  return cudnnPoolingBackward(handle(), s.pool, &one, s.y->d, a, s.y->d, a, s.x->d, x, &zero,
                              s.x->d, result);
}

template <class T>
Kernel pool_kernel(const KernelArgs& k, bool backward) {
  PoolKernel which = backward ? PoolKernel::backward : PoolKernel::forward;
  PoolProblem p = pool_problem(k, which);
  const PoolGeom& g = p.geom;
  const Dims& xd = p.x;
  size_t nsp = g.nsp();
  if (g.mode == PoolMode::max && backward) return window_pool_kernel(k, which);
  if (!fits_descriptor(xd)) return window_pool_kernel(k, which);
  for (size_t i = 0; i < nsp; ++i)
    if (g.pad_before[i] != g.pad_after[i]) return window_pool_kernel(k, which);
  auto s = std::make_shared<PoolState>();
  s->x = std::make_unique<TensorDesc>(nd_desc(xd, g.channels_first), dnn_type<T>());
  s->y = std::make_unique<TensorDesc>(nd_desc(p.y, g.channels_first), dnn_type<T>());
  std::vector<int> window, pad, stride;
  if (nsp == 1) window.push_back(1), pad.push_back(0), stride.push_back(1);
  for (size_t i = 0; i < nsp; ++i) {
    window.push_back(int(g.window[i]));
    pad.push_back(int(g.pad_before[i]));
    stride.push_back(int(g.strides[i]));
  }
  check_dnn(cudnnCreatePoolingDescriptor(&s->pool), "pooling descriptor");
  cudnnPoolingMode_t mode = g.mode == PoolMode::max ? CUDNN_POOLING_MAX_DETERMINISTIC
                                                    : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  check_dnn(cudnnSetPoolingNdDescriptor(s->pool, mode, CUDNN_NOT_PROPAGATE_NAN, int(window.size()),
                                        window.data(), pad.data(), stride.data()),
            "pooling descriptor");
  // One call on scratch memory at plan time: a configuration cuDNN refuses when called, or one
  // without the memory for the trial, goes to the plugin's own kernel instead of failing calls.
  if (numel(xd) > 0 && numel(p.y) > 0) {
    cudnnStatus_t st = CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
    try {
      size_t xb = size_t(numel(xd)) * sizeof(T), yb = size_t(numel(p.y)) * sizeof(T);
      auto x = scratch(xb), y = scratch(yb), result = scratch(backward ? xb : yb);
      st = pool_call<T>(*s, backward, backward ? y.get() : x.get(), x.get(), result.get());
    } catch (const Error&) {
    }
    if (st != CUDNN_STATUS_SUCCESS) {
      cudaGetLastError();
      return window_pool_kernel(k, which);
    }
  }
  return [s, backward](const Ins& in, Buffer& out) {
    if (out.numel() == 0) return;
    std::shared_ptr<void> keep_a, keep_b;
    const void* a = dnn_operand(in[0]->data(), in[0]->nbytes(), keep_a);
    const void* x = backward ? dnn_operand(in[1]->data(), in[1]->nbytes(), keep_b) : nullptr;
    into_dnn_result(out, [&](void* result) {
      check_dnn(pool_call<T>(*s, backward, a, x, result),
                backward ? "pooling backward" : "pooling forward");
    });
  };
}

template <bool Backward>
Kernel make_pool(const KernelArgs& k) {
  try {
    return dispatch_float<Kernel>(k.out.dtype,
                                  [&](auto z) { return pool_kernel<decltype(z)>(k, Backward); });
  } catch (const Error&) {
  }
  return Kernel{};
}
Registrar r4(ops::Pool, make_pool<false>);
Registrar r5(ops::PoolBackward, make_pool<true>);

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
