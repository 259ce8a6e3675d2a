// The index arithmetic of kernels that walk their operands with strides over one index space
// (broadcasting, copies between layouts). The CUDA plugin's kernels use it on the device; the
// emulated device runs the same maps on the host, so that tests without a GPU check them.
#pragma once
#include <cstdint>
#include <vector>

#include "core/backend/device.h"
#include "core/graph/shape.h"
#include "core/util/host_device.h"

namespace kb {

// Up to three operands iterated over the same row-major index space of `rank` dims.
struct StridedMap {
  int rank = 0;
  int64_t dims[kMaxDeviceRank] = {};
  int64_t stride[3][kMaxDeviceRank] = {};

  // The element offsets of index i in operands [0, n).
  KB_HD void offsets(int64_t i, int64_t* off, int n) const {
    for (int k = 0; k < n; ++k) off[k] = 0;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t idx = i % dims[d];
      i /= dims[d];
      for (int k = 0; k < n; ++k) off[k] += idx * stride[k][d];
    }
  }
};

// A map over `out` dims with each input's broadcast strides (stride[k] for ins[k]).
StridedMap make_map(const Dims& out, const std::vector<Dims>& ins);

// out[i·out_strides] = in[i·in_strides] for every index i of `dims` (element offsets; strides
// may be 0 or negative): stride[0] = out, stride[1] = in.
StridedMap copy_map(const Dims& dims, const Dims& out_strides, const Dims& in_strides);

// out = in with its axes permuted (out's dims are in's permuted by perm), written contiguously.
StridedMap transpose_map(const Dims& in, const std::vector<int64_t>& perm);

}  // namespace kb
