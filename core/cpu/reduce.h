// Reduction engine shared by the CPU kernels that reduce (Reduce, SumToLike, TileGrad).
#pragma once
#include <vector>

#include "core/graph/buffer.h"
#include "core/ops/build.h"

namespace kb::cpu {

// Reduces `in` over `axes` (normalized; empty = all) into `out` (allocated, numel = result).
void reduce_into(ReduceMode mode, const Buffer& in, const std::vector<int64_t>& axes, Buffer& out);

}  // namespace kb::cpu
