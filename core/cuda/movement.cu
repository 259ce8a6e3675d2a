// CUDA: views (reshape family alias their input), Transpose and BroadcastLike as strided copies.
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

// out[i] = in[offset of i under stride[1]], element size E bytes.
template <class E>
__global__ void gather_copy(const E* in, E* out, int64_t n, StridedMap m) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[2];
    m.offsets(i, off, 2);
    out[i] = in[off[1]];
  }
}

void launch_copy(const Buffer& in, Buffer& out, const StridedMap& m) {
  int64_t n = out.numel();
  if (n == 0) return;
  switch (dtype_size(out.dtype)) {
    case 1:
      gather_copy<<<blocks_for(n), 256, 0, stream()>>>(static_cast<const uint8_t*>(in.data()),
                                                       static_cast<uint8_t*>(out.data()), n, m);
      break;
    case 2:
      gather_copy<<<blocks_for(n), 256, 0, stream()>>>(static_cast<const uint16_t*>(in.data()),
                                                       static_cast<uint16_t*>(out.data()), n, m);
      break;
    case 4:
      gather_copy<<<blocks_for(n), 256, 0, stream()>>>(static_cast<const uint32_t*>(in.data()),
                                                       static_cast<uint32_t*>(out.data()), n, m);
      break;
    default:
      gather_copy<<<blocks_for(n), 256, 0, stream()>>>(static_cast<const uint64_t*>(in.data()),
                                                       static_cast<uint64_t*>(out.data()), n, m);
  }
  after_launch("copy");
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

}  // namespace

void transpose_on_device(const Buffer& in, Buffer& out, const std::vector<int64_t>& perm) {
  const Dims& d = in.dims;
  Dims od(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) od[i] = d[perm[i]];
  StridedMap m = make_map(od, {od});
  Dims cs(d.size());
  int64_t acc = 1;
  for (size_t i = d.size(); i-- > 0;) cs[i] = acc, acc *= d[i];
  for (size_t i = 0; i < perm.size(); ++i) m.stride[1][i] = cs[perm[i]];
  launch_copy(in, out, m);
}

}  // namespace kb::cuda
