// CUDA: views (reshape family alias their input), Transpose and BroadcastLike as strided copies,
// Pad, and Switch (the branch chosen on the device: no condition read back to the host).
#include "core/cuda/common.cuh"

namespace kb::cuda {
namespace {

using Ins = std::vector<const Buffer*>;

Kernel make_alias(const KernelArgs&) {
  return [](const Ins& in, Buffer& out) { out.storage = in[0]->storage; };
}
Registrar r1("Reshape", make_alias);
Registrar r2("ReshapeLike", make_alias);
Registrar r3("ExpandDims", make_alias);
Registrar r4("Squeeze", make_alias);
Registrar r5("Identity", make_alias);
Registrar r6("StopGradient", make_alias);

// out[out_base + offset0(i)] = in[in_base + offset1(i)] over the index space of m.
template <class E>
__global__ void strided_copy_kernel(const E* in, E* out, int64_t n, StridedMap m) {
  KB_GRID_LOOP(i, n) {
    int64_t off[2];
    m.offsets(i, off, 2);
    out[off[0]] = in[off[1]];
  }
}

// Copies with out strides = contiguous over m's dims (stride[0]) and in strides = stride[1].
void launch_copy(const Buffer& in, Buffer& out, const StridedMap& m) {
  int64_t n = 1;
  for (int d = 0; d < m.rank; ++d) n *= m.dims[d];
  StridedMap c = m;
  int64_t acc = 1;
  for (int d = m.rank - 1; d >= 0; --d) c.stride[0][d] = acc, acc *= m.dims[d];
  if (n == 0) return;
  strided_copy_on_device(in, 0, out, 0, c, n);
}

Kernel make_transpose(const KernelArgs& k) {
  std::vector<int64_t> perm = k.node.attrs.ints("perm");
  return [perm](const Ins& in, Buffer& out) { transpose_on_device(*in[0], out, perm); };
}
Registrar r7("Transpose", make_transpose);

Kernel make_broadcast_like(const KernelArgs& k) {
  const Dims& od = k.out.shape.dims;
  StridedMap m = make_map(od, {od, k.in[0].shape.dims});
  return [m](const Ins& in, Buffer& out) { launch_copy(*in[0], out, m); };
}
Registrar r8("BroadcastLike", make_broadcast_like);

// Zero padding: a zeroed output, the input copied in at its offset (pad_before).
Kernel make_pad(const KernelArgs& k) {
  const Dims& in = k.in[0].shape.dims;
  const Dims& od = k.out.shape.dims;
  Placement pl = placement(in, od, k.node.attrs.ints("pad_before"));
  StridedMap m = copy_map(in, pl.outer_strides, pl.inner_strides);
  int64_t n = numel(in), base = pl.offset;
  return [m, base, n](const Ins& ins, Buffer& out) {
    zero_on_device(out);  // all-bits-zero is zero for every dtype
    strided_copy_on_device(*ins[0], 0, out, base, m, n);
  };
}
Registrar r9("Pad", make_pad);

// Switch with a condition unknown at plan time (then the branches have one concrete shape): every
// thread reads the condition and copies its element of the chosen branch.
template <class E>
__global__ void switch_kernel(const bool* cond, const E* a, const E* b, E* out, int64_t n) {
  const E* src = *cond ? a : b;
  KB_GRID_LOOP(i, n) out[i] = src[i];
}

Kernel make_switch(const KernelArgs& k) {
  if (!(k.in[1].shape.dims == k.in[2].shape.dims)) return Kernel{};  // the CPU kernel says why
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
Registrar r10("Switch", make_switch);

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

StridedMap copy_map(const Dims& dims, const Dims& out_strides, const Dims& in_strides) {
  check(dims.size() <= size_t(kMaxDims), Status::not_implemented, "cuda: rank ", dims.size(),
        " is above ", kMaxDims);
  StridedMap m;
  m.rank = int(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    m.dims[d] = dims[d];
    m.stride[0][d] = out_strides[d];
    m.stride[1][d] = in_strides[d];
  }
  return m;
}

void transpose_on_device(const Buffer& in, Buffer& out, const std::vector<int64_t>& perm) {
  const Dims& d = in.dims;
  Dims od(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) od[i] = d[perm[i]];
  StridedMap m = make_map(od, {od});
  Dims cs = contiguous_strides(d);
  for (size_t i = 0; i < perm.size(); ++i) m.stride[1][i] = cs[perm[i]];
  launch_copy(in, out, m);
}

}  // namespace kb::cuda
