// The geometry of a Resize or ResizeGrad node (attributes: core/ops/image_ops.cpp) for its kernels.
#pragma once
#include "core/graph/attrs.h"
#include "core/graph/shape.h"
#include "core/ops/modes.h"
#include "core/kernel_plans/resize_taps.h"
#include "core/kernel_plans/spatial_layout.h"

namespace kb {

// src: the operand's dims, dst: the result's; adjoint: ResizeGrad.
inline ResizeGeom resize_geom(const Attrs& a, const Dims& src, const Dims& dst, bool adjoint) {
  ResizeGeom g;
  g.channels_first = a.i(attr::layout) != 0;
  g.bilinear = mode_of<ResizeMode>(a) == ResizeMode::bilinear;
  g.adjoint = adjoint;
  const std::vector<int64_t>& factors = a.ints(attr::factors);
  size_t nsp = factors.size(), off = 3 - nsp;
  g.C = src[g.channels_first ? 1 : nsp + 1];
  for (size_t i = 0; i < nsp; ++i) {
    size_t ax = (g.channels_first ? 2 : 1) + i;
    g.factor[off + i] = factors[i];
    g.src[off + i] = src[ax];
    g.dst[off + i] = dst[ax];
    g.small[off + i] = adjoint ? dst[ax] : src[ax];
  }
  spatial_strides(g.channels_first, g.C, g.src, g.sn, g.sc, g.ss);
  return g;
}

}  // namespace kb
