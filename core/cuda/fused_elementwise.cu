// CUDA kernel of FusedElementwise: one thread per element runs the group's register program
// (core/kernel_plans/fused_program.h), every thread the same instruction at once (no divergence).
// The program and the input strides travel as the kernel's parameter; a group beyond its fixed
// sizes is declined and stays unfused.
#include "core/cuda/common.cuh"
#include "core/kernel_plans/fused_program.h"

namespace kb::cuda {
namespace {

template <class T>
__global__ void fused_kernel(FusedProgram p, FusedOperands o, T* out, int64_t n) {
  KB_GRID_LOOP(i, n) out[i] = fused_element<T>(p, o, i);
}

template <class T>
Kernel fused_factory(const KernelArgs& k) {
  FusedProgram p;
  if (!make_fused_program(k, p)) return Kernel{};
  return [p](const std::vector<const Buffer*>& in, Buffer& out) {
    int64_t n = out.numel();
    if (n == 0) return;
    FusedOperands o;
    for (size_t i = 0; i < in.size(); ++i) o.in[i] = in[i]->data();
    fused_kernel<T><<<blocks_for(n), 256, 0, stream()>>>(p, o, out.as<T>(), n);
    after_launch("fused elementwise");
  };
}

Kernel make_fused_elementwise(const KernelArgs& k) {
  return dispatch_float<Kernel>(k.out.dtype, [&](auto z) { return fused_factory<decltype(z)>(k); });
}
Registrar reg_fused(ops::FusedElementwise, make_fused_elementwise);

}  // namespace
}  // namespace kb::cuda
