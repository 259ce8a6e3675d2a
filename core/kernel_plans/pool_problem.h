// What every device's pooling kernels read from their operands: Pool (x) -> y, PoolBackward
// (dy, x) -> dx, MaxPoolGradGrad (gx, x) -> a tensor shaped as y.
#pragma once
#include "core/backend/kernel.h"
#include "core/kernel_plans/pool_windows.h"
#include "core/ops/conv_ops.h"

namespace kb {

enum class PoolKernel { forward, backward, max_grad_grad };

// The windows of a pooling of x into y (g resolved: its pads known).
PoolWindows pool_windows(const PoolGeom& g, const Dims& x, const Dims& y);

struct PoolProblem {
  PoolGeom geom;  // resolved for x: its pads known
  Dims x, y;
  bool avg() const { return geom.mode == PoolMode::avg; }
  PoolWindows windows() const { return pool_windows(geom, x, y); }
};

inline PoolProblem pool_problem(const KernelArgs& k, PoolKernel which) {
  PoolProblem p;
  p.x = which == PoolKernel::forward ? k.in[0].shape.dims : k.in[1].shape.dims;
  p.y = which == PoolKernel::backward ? k.in[0].shape.dims : k.out.shape.dims;
  p.geom = PoolGeom::from(k.node.attrs).resolved(p.x);
  return p;
}

}  // namespace kb
