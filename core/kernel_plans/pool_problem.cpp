// The pooling windows of a resolved geometry: its spatial dims right-aligned into three.
#include "core/kernel_plans/pool_problem.h"

#include "core/kernel_plans/spatial_layout.h"

namespace kb {

PoolWindows pool_windows(const PoolGeom& g, const Dims& x, const Dims& y) {
  PoolWindows w;
  size_t nsp = g.nsp(), off = 3 - nsp;
  w.channels_first = g.channels_first;
  w.N = x[0];
  w.C = x[channel_axis(g.channels_first, nsp)];
  for (size_t i = 0; i < nsp; ++i) {
    size_t ax = spatial_axis(g.channels_first, i);
    w.in[off + i] = x[ax];
    w.out[off + i] = y[ax];
    w.w[off + i] = g.window[i];
    w.s[off + i] = g.strides[i];
    w.pb[off + i] = g.pad_before[i];
  }
  spatial_strides(g.channels_first, w.C, w.in, w.xn, w.xc, w.xs);
  spatial_strides(g.channels_first, w.C, w.out, w.yn, w.yc, w.ys);
  return w;
}

}  // namespace kb
