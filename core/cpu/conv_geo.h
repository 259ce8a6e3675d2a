// The concrete geometry of a convolution as the CPU kernels see it (core/cpu/conv.cpp's oneDNN
// and reference kernels, core/cpu/conv_im2col.cpp's products): 1-D and 2-D problems are 3-D
// problems with leading spatial extents of 1.
#pragma once
#include <array>
#include <cstdint>

#include "core/graph/shape.h"
#include "core/ops/conv_ops.h"

namespace kb::cpu {

using A3 = std::array<int64_t, 3>;

// Which of a convolution's kernels: the result, the input's gradient, the kernel's gradient.
enum class ConvPass { forward, backward_data, backward_filter };

// Kernels' weights are laid out (spatial..., C, OCg): K[z, c, m] at (z * C + c) * OCg + m.
struct ConvGeo {
  ConvGeom cg;
  size_t nsp = 0;
  int64_t N = 0, C = 0, OC = 0, G = 1, ICg = 0, OCg = 0, kvol = 1;
  A3 in{1, 1, 1}, out{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, d{1, 1, 1}, pb{0, 0, 0}, pa{0, 0, 0};
  int64_t xn = 0, xc = 0, yn = 0, yc = 0;  // element strides of batch and channel
  A3 xs{}, ys{};                           // element strides of the spatial dims
  int64_t kz(int64_t z0, int64_t z1, int64_t z2) const { return ((z0 * k[1] + z1) * k[2] + z2); }
};

inline void data_strides(bool first, int64_t C, const A3& sp, int64_t& sn, int64_t& sc, A3& ss) {
  int64_t plane = sp[0] * sp[1] * sp[2];
  if (first) {
    ss = {sp[1] * sp[2], sp[2], 1};
    sc = plane;
  } else {
    ss = {sp[1] * sp[2] * C, sp[2] * C, C};
    sc = 1;
  }
  sn = C * plane;
}

inline ConvGeo make_conv_geo(const ConvGeom& cg, const Dims& x, const Dims& k, const Dims& y) {
  ConvGeo g;
  g.cg = cg;
  g.nsp = cg.nsp();
  size_t ca = channel_axis(cg.channels_first, g.nsp), off = 3 - g.nsp;
  g.N = x[0];
  g.C = x[ca];
  g.OC = y[ca];
  g.G = cg.groups;
  g.ICg = g.C / g.G;
  g.OCg = k[g.nsp + 1];
  for (size_t i = 0; i < g.nsp; ++i) {
    size_t ax = spatial_axis(cg.channels_first, i);
    g.in[off + i] = x[ax];
    g.out[off + i] = y[ax];
    g.k[off + i] = k[i];
    g.s[off + i] = cg.strides[i];
    g.d[off + i] = cg.dilation[i];
    g.pb[off + i] = cg.pad_before[i];
    g.pa[off + i] = cg.pad_after[i];
  }
  g.kvol = g.k[0] * g.k[1] * g.k[2];
  data_strides(cg.channels_first, g.C, g.in, g.xn, g.xc, g.xs);
  data_strides(cg.channels_first, g.OC, g.out, g.yn, g.yc, g.ys);
  return g;
}

}  // namespace kb::cpu
