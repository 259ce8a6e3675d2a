#include "core/kernel_plans/strided_map.h"

#include "core/util/error.h"

namespace kb {

namespace {
void check_rank(size_t rank) {
  check(rank <= size_t(kMaxDeviceRank), Status::not_implemented, "device: rank ", rank,
        " is above ", kMaxDeviceRank);
}
}  // namespace

StridedMap make_map(const Dims& out, const std::vector<Dims>& ins) {
  check_rank(out.size());
  check(ins.size() <= 3, Status::internal, "make_map: ", ins.size(), " operands");
  StridedMap m;
  m.rank = int(out.size());
  for (size_t d = 0; d < out.size(); ++d) m.dims[d] = out[d];
  for (size_t k = 0; k < ins.size(); ++k) broadcast_strides(ins[k], out, m.stride[k]);
  return m;
}

StridedMap copy_map(const Dims& dims, const Dims& out_strides, const Dims& in_strides) {
  check_rank(dims.size());
  StridedMap m;
  m.rank = int(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    m.dims[d] = dims[d];
    m.stride[0][d] = out_strides[d];
    m.stride[1][d] = in_strides[d];
  }
  return m;
}

StridedMap transpose_map(const Dims& in, const std::vector<int64_t>& perm) {
  Dims od(perm.size()), src(perm.size());
  Dims cs = contiguous_strides(in);
  for (size_t i = 0; i < perm.size(); ++i) {
    od[i] = in[size_t(perm[i])];
    src[i] = cs[size_t(perm[i])];
  }
  return copy_map(od, contiguous_strides(od), src);
}

}  // namespace kb
