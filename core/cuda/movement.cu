// CUDA: views (reshape family alias their input), the kernels that only move elements as strided
// copies (core/kernel_plans/copy_plan.h: slices, concatenation, tiling, reversal, transposes,
// broadcasts, padding), and Switch (the branch chosen on the device: no condition read back to
// the host).
#include "core/kernel_plans/copy_plan.h"
#include "core/cuda/common.cuh"
#include "core/ops/reshape_dims.h"

namespace kb::cuda {
namespace {

using Ins = std::vector<const Buffer*>;

Kernel make_alias(const KernelArgs&) {
  return [](const Ins& in, Buffer& out) { out.storage = in[0]->storage; };
}
Registrar r1(ops::Reshape, make_alias);
Registrar r2(ops::ReshapeLike, make_alias);
Registrar r3(ops::ExpandDims, make_alias);
Registrar r4(ops::Squeeze, make_alias);
Registrar r5(ops::Identity, make_alias);

// ReshapeTo: where the plan knows the target, a view; else the target (a few int64s) read back
// from the device.
Kernel make_reshape_to(const KernelArgs& k) {
  if (k.out.shape.fully_known()) return make_alias(k);
  return [](const Ins& in, Buffer& out) {
    out.dims = reshape_dims(Shape(in[0]->dims), host_copy<int64_t>(*in[1], 0, in[1]->numel()));
    out.storage = in[0]->storage;
  };
}
Registrar r5t(ops::ReshapeTo, make_reshape_to);
Registrar r6(ops::StopGradient, make_alias);

// out[out_base + offset0(i)] = in[in_base + offset1(i)] over the index space of m.
template <class E>
__global__ void strided_copy_kernel(const E* in, E* out, int64_t n, StridedMap m) {
  KB_GRID_LOOP(i, n) {
    int64_t off[2];
    m.offsets(i, off, 2);
    out[off[0]] = in[off[1]];
  }
}

Kernel make_copy(const KernelArgs& k) {
  // A plan that fits the strided maps (core/kernel_plans/cuda_ops.cpp).
  return [p = copy_plan(k).value()](const Ins& in, Buffer& out) {
    if (p.zero_first) zero_on_device(out);  // all-bits-zero is zero for every dtype
    for (const CopyPart& c : p.parts)
      strided_copy_on_device(*in[size_t(c.input)], c.in_base, out, c.out_base, c.map, c.n);
  };
}
Registrar r7(ops::StridedSlice, make_copy);
Registrar r8(ops::StridedSliceGrad, make_copy);
Registrar r9(ops::Concat, make_copy);
Registrar r10(ops::SplitLike, make_copy);
Registrar r11(ops::Tile, make_copy);
Registrar r12(ops::Reverse, make_copy);
Registrar r13(ops::Transpose, make_copy);
Registrar r14(ops::BroadcastLike, make_copy);
Registrar r15(ops::Pad, make_copy);

// Switch with a condition unknown at plan time (then the branches have one concrete shape): every
// thread reads the condition and copies its element of the chosen branch.
template <class E>
__global__ void switch_kernel(const bool* cond, const E* a, const E* b, E* out, int64_t n) {
  const E* src = *cond ? a : b;
  KB_GRID_LOOP(i, n) out[i] = src[i];
}

Kernel make_switch(const KernelArgs&) {
  return [](const Ins& in, Buffer& out) {
    int64_t n = out.numel();
    if (n == 0) return;
    with_element_type(dtype_size(out.dtype), [&](auto z) {
      using E = decltype(z);
      switch_kernel<<<blocks_for(n), 256, 0, stream()>>>(in[0]->as<bool>(), in[1]->as<E>(),
                                                         in[2]->as<E>(), out.as<E>(), n);
    });
    after_launch("switch");
  };
}
Registrar r16(ops::Switch, make_switch);

}  // namespace

void strided_copy_on_device(const Buffer& in, int64_t in_base, Buffer& out, int64_t out_base,
                            const StridedMap& m, int64_t n) {
  if (n == 0) return;
  with_element_type(dtype_size(out.dtype), [&](auto z) {
    using E = decltype(z);
    strided_copy_kernel<<<blocks_for(n), 256, 0, stream()>>>(
        static_cast<const E*>(in.data()) + in_base, static_cast<E*>(out.data()) + out_base, n, m);
  });
  after_launch("copy");
}

void transpose_on_device(const Buffer& in, Buffer& out, const std::vector<int64_t>& perm) {
  strided_copy_on_device(in, 0, out, 0, transpose_map(in.dims, perm), in.numel());
}

}  // namespace kb::cuda
