// Device kernels that only move elements (slices, concatenation, tiling, reversal, transposes,
// broadcasts, padding), described as strided copies: one plan per op that the CUDA plugin launches
// and the emulated device runs on the host.
#pragma once
#include <optional>
#include <vector>

#include "core/backend/kernel.h"
#include "core/kernel_plans/strided_map.h"

namespace kb {

// out[out_base + offset0(i)] = in[input][in_base + offset1(i)] for i < n (map's offsets).
struct CopyPart {
  int input = 0;
  int64_t in_base = 0, out_base = 0, n = 0;
  StridedMap map;
};

struct CopyPlan {
  bool zero_first = false;  // the output is zeroed (all bits) before the copies
  bool fits = true;         // false: the map would need more than kMaxDeviceRank axes
  std::vector<CopyPart> parts;
};

// The plan of k's op when it is one of these copies (StridedSlice, StridedSliceGrad, Concat,
// SplitLike, Tile, Reverse, Transpose, BroadcastLike, Pad); nullopt for any other op.
std::optional<CopyPlan> copy_plan(const KernelArgs& k);

// Tile and its gradient see a tensor of rank r as 2r interleaved (multiple, dim) axes: whether
// a device map holds them.
inline bool tile_fits_device(size_t rank) { return 2 * rank <= size_t(kMaxDeviceRank); }

}  // namespace kb
