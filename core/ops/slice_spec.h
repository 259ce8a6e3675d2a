// Python-style slicing of one axis (begin/end/step with masks), shared by inference and kernels.
#pragma once
#include <cstdint>
#include <vector>

#include "core/graph/attrs.h"
#include "core/graph/shape.h"

namespace kb {

struct AxisSlice {
  int64_t start = 0;
  int64_t step = 1;
  int64_t length = 0;  // -1 when the input dim is unknown
  bool shrink = false;
};

// attrs: begin, end, strides (one entry per input axis), begin_mask, end_mask, shrink_mask.
std::vector<AxisSlice> resolve_slices(const Dims& dims, const Attrs& attrs, const char* who);

// The slice of a row-major tensor with dims `src` as a strided view: the result's dims, the
// element strides into the source for each result axis, and the offset of the first element.
struct SliceMap {
  Dims dims, src_strides;
  int64_t base = 0;
};
SliceMap slice_map(const Dims& src, const Attrs& attrs);

// A slice that keeps every axis whole but one, where it takes the contiguous range [begin, end)
// (step 1, no shrink): a block of columns, say. Axes of unknown size must be kept whole; false
// for any other slice.
struct AxisBlock {
  int64_t axis = 0, begin = 0, end = 0;
};
bool axis_block(const Dims& src, const Attrs& attrs, AxisBlock* block);

}  // namespace kb
