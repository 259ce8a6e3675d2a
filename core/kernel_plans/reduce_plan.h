// How a reduction over some axes maps onto memory: (outer, r, inner) when the reduced axes form
// one block (ignoring size-1 axes), else a transpose that moves them to the end first (the
// CUDA kernels), or reductions of one block at a time (the CPU's stages). Shared by the CPU and
// CUDA kernels.
#pragma once
#include <cstdint>
#include <vector>

#include "core/backend/kernel.h"
#include "core/graph/shape.h"

namespace kb {

// The reduction of one block of adjacent axes: (outer, r, inner) -> (outer, inner).
struct ReduceStage {
  int64_t outer = 1, r = 1, inner = 1;
};

struct ReducePlan {
  bool needs_transpose = false;
  std::vector<int64_t> perm;  // when transposing: kept axes, then reduced axes
  Dims dims;                  // input dims
  int64_t outer = 1, r = 1, inner = 1;
  // The same reduction as blocks reduced one after the other, the block of most values first,
  // each stage reading the previous one's results (one stage when the reduced axes form one
  // block). Reducing over (0, 2, 3) of NCHW this way reads the input once, in runs of H*W, where
  // the transposed copy read and wrote it.
  std::vector<ReduceStage> stages;
};

// `axes` normalized; empty means all axes.
ReducePlan plan_reduce(const Dims& dims, std::vector<int64_t> axes);

// Bool reduces as uint8 on every device (any = max, all = min), whose min over nothing would be
// 255: `all` over an empty axis is true, a byte of 1, which the caller writes instead.
inline bool bool_all_of_nothing(int mode, const ReducePlan& p) { return mode == 3 && p.r == 0; }

// How the device runs a plan (core/cuda/reduce.cu; core/kernel_plans/device_reduce.h has the
// arithmetic): after the plan's transpose, if any, long strided columns that are few are made rows
// by a second transpose ((outer, r, inner) -> (outer, inner, r)); then rows of length r (inner ==
// 1) take a block each, or `parts` blocks each and a second pass over the parts when they are few
// and long, and columns take a thread each.
struct DeviceReduceSchedule {
  bool columns_to_rows = false;
  int64_t outer = 1, r = 1, inner = 1;  // the reduction that runs last
  int64_t parts = 1;
};
DeviceReduceSchedule device_reduce_schedule(const ReducePlan& p);

// What a Reduce or SumToLike step does on the device: alias its input (SumToLike of one shape),
// nothing (declined: bool has no sum, and the CPU's kernel reports it), or reduce with mode (0 sum,
// 1 prod, 2 max, 3 min) and plan.
struct DeviceReduction {
  bool view = false, declined = false;
  int mode = 0;
  ReducePlan plan;
};
DeviceReduction device_reduction(const KernelArgs& k);

// The axes of `from` to sum so that the result has the shape `to` (undoing broadcasting);
// fails when `to` does not broadcast to `from`.
std::vector<int64_t> sum_to_axes(const Dims& from, const Dims& to);

}  // namespace kb
