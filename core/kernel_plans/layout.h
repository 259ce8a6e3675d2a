// How kernels of every device see their operands in memory: one axis as (outer, n, inner), and
// a batched matrix product as row-major GEMM dimensions. Header-only and device-neutral.
#pragma once
#include <cstdint>
#include <limits>

#include "core/backend/kernel.h"
#include "core/graph/shape.h"
#include "core/ops/modes.h"
#include "core/util/host_device.h"

namespace kb {

// A tensor seen around one axis: outer blocks, n positions along the axis, inner stride.
struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;

  // The first element of line t (t < outer * inner), whose elements lie `inner` apart.
  KB_HD int64_t line_start(int64_t t) const { return (t / inner) * n * inner + t % inner; }
};

inline AxisView axis_view(const Dims& d, int64_t axis) {
  if (axis < 0) axis += int64_t(d.size());
  AxisView v;
  for (int64_t i = 0; i < int64_t(d.size()); ++i) {
    if (i < axis)
      v.outer *= d[i];
    else if (i == axis)
      v.n = d[i];
    else
      v.inner *= d[i];
  }
  return v;
}

// What ArgReduce and Cumulative read from their step: the lines along the axis, and whether
// the reduction takes the maximum (ArgReduce) or the scan sums (Cumulative).
struct AxisScan {
  AxisView v;
  bool first_mode;  // ArgMode::max, ScanMode::sum
};
inline AxisScan arg_reduce_scan(const KernelArgs& k) {
  return {axis_view(k.in[0].shape.dims, k.node.attrs.i(attr::axis)),
          mode_of<ArgMode>(k.node.attrs) == ArgMode::max};
}
inline AxisScan cumulative_scan(const KernelArgs& k) {
  return {axis_view(k.in[0].shape.dims, k.node.attrs.i(attr::axis)),
          mode_of<ScanMode>(k.node.attrs) == ScanMode::sum};
}

// C (batch, m, n) = op(A) (batch, m, k) x op(B) (batch, k, n), all row-major.
struct GemmDims {
  int64_t batch = 1, m = 0, k = 0, n = 0;
  int64_t a_rows = 0, a_cols = 0, b_rows = 0, b_cols = 0;
  bool ta = false, tb = false;
};

inline GemmDims gemm_dims(const Dims& ad, const Dims& bd, bool ta, bool tb) {
  size_t r = ad.size();
  GemmDims g;
  g.ta = ta;
  g.tb = tb;
  for (size_t i = 0; i + 2 < r; ++i) g.batch *= ad[i];
  g.a_rows = ad[r - 2];
  g.a_cols = ad[r - 1];
  g.b_rows = bd[r - 2];
  g.b_cols = bd[r - 1];
  g.m = ta ? g.a_cols : g.a_rows;
  g.k = ta ? g.a_rows : g.a_cols;
  g.n = tb ? g.b_rows : g.b_cols;
  return g;
}

// cuBLAS takes sizes, leading dimensions and the batch count as int: a product with any of them
// beyond INT32_MAX is declined (the CPU computes it).
inline bool fits_cublas(const GemmDims& g) {
  for (int64_t v : {g.batch, g.m, g.n, g.k, g.a_cols, g.b_cols})
    if (v > std::numeric_limits<int>::max()) return false;
  return true;
}

}  // namespace kb
