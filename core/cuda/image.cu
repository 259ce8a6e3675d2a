// CUDA kernels of Resize and ResizeGrad: one thread per result element runs resize_at
// (core/kernel_plans/resize_taps.h), the taps the CPU kernel lists, accumulated as the CPU does
// (integer images too); the gradient gathers (no atomics).
#include "core/cuda/common.cuh"
#include "core/kernel_plans/resize_geom.h"

namespace kb::cuda {
namespace {

template <class T>
__global__ void resize_kernel(ResizeGeom g, const T* x, T* y, int64_t n) {
  KB_GRID_LOOP(e, n) y[e] = resize_at<resize_acc_t<T>, compute_t<T>>(g, x, e);
}

template <bool Adjoint>
Kernel make_resize(const KernelArgs& k) {
  ResizeGeom g = resize_geom(k.node.attrs, k.in[0].shape.dims, k.out.shape.dims, Adjoint);
  return dispatch_non_bool<Kernel>(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    return [g](const std::vector<const Buffer*>& in, Buffer& out) {
      int64_t n = out.numel();
      if (n == 0) return;
      resize_kernel<<<blocks_for(n), 256, 0, stream()>>>(g, in[0]->as<T>(), out.as<T>(), n);
      after_launch("resize");
    };
  });
}
Registrar r1(ops::Resize, make_resize<false>);
Registrar r2(ops::ResizeGrad, make_resize<true>);

}  // namespace
}  // namespace kb::cuda
