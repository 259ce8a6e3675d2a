// How a reduction over some axes maps onto memory: (outer, r, inner) when the reduced axes form
// one block (ignoring size-1 axes), else a transpose that moves them to the end first. Shared by
// the CPU and CUDA kernels.
#pragma once
#include <cstdint>
#include <vector>

#include "core/graph/shape.h"

namespace kb {

struct ReducePlan {
  bool needs_transpose = false;
  std::vector<int64_t> perm;  // when transposing: kept axes, then reduced axes
  Dims dims;                  // input dims
  int64_t outer = 1, r = 1, inner = 1;
};

// `axes` normalized; empty means all axes.
ReducePlan plan_reduce(const Dims& dims, std::vector<int64_t> axes);

// The axes of `from` to sum so that the result has the shape `to` (undoing broadcasting);
// fails when `to` does not broadcast to `from`.
std::vector<int64_t> sum_to_axes(const Dims& from, const Dims& to);

}  // namespace kb
