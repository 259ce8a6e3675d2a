// The flat offset of an index tuple into the leading axes of a tensor, shared by the CPU's
// sparse kernels and the CUDA ones.
#pragma once
#include <cstdint>

#include "core/util/host_device.h"

namespace kb {

// Row-major offset of tuple[0, depth) into dims[0, depth); -1 when a coordinate lies outside
// its axis.
template <class I>
KB_HD int64_t nd_offset(const I* tuple, int64_t depth, const int64_t* dims) {
  int64_t off = 0;
  for (int64_t d = 0; d < depth; ++d) {
    int64_t v = int64_t(tuple[d]);
    if (v < 0 || v >= dims[d]) return -1;
    off = off * dims[d] + v;
  }
  return off;
}

}  // namespace kb
