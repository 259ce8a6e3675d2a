#include "core/kernel_plans/copy_plan.h"

#include <cstring>

#include "core/ops/op.h"
#include "core/ops/slice_spec.h"

namespace kb {

namespace {

// One part copying n elements of input `input` through map m (out strides in stride[0]).
CopyPlan single(const StridedMap& m, int64_t n, int64_t in_base = 0, int64_t out_base = 0,
                bool zero_first = false) {
  CopyPlan p;
  p.zero_first = zero_first;
  p.parts.push_back({0, in_base, out_base, n, m});
  return p;
}

CopyPlan strided_slice(const KernelArgs& k) {
  SliceMap sm = slice_map(k.in[0].shape.dims, k.node.attrs);
  return single(copy_map(sm.dims, contiguous_strides(sm.dims), sm.src_strides), numel(sm.dims),
                sm.base);
}

// The gradient scatters dy into a zeroed tensor of x's shape through the same slice.
CopyPlan strided_slice_grad(const KernelArgs& k) {
  SliceMap sm = slice_map(k.out.shape.dims, k.node.attrs);
  return single(copy_map(sm.dims, sm.src_strides, contiguous_strides(sm.dims)), numel(sm.dims), 0,
                sm.base, true);
}

// Concat and SplitLike see each part as (outer, width) elements inside rows of `total`.
struct Parts {
  int64_t outer = 1, total = 0;
  std::vector<int64_t> widths, offsets;
};
Parts parts_of(const std::vector<TensorType>& parts, int64_t axis) {
  Parts p;
  const Dims& d0 = parts[0].shape.dims;
  int64_t inner = 1;
  for (int64_t i = 0; i < axis; ++i) p.outer *= d0[size_t(i)];
  for (size_t i = size_t(axis) + 1; i < d0.size(); ++i) inner *= d0[i];
  for (auto& t : parts) {
    p.offsets.push_back(p.total);
    p.widths.push_back(t.shape.dims[size_t(axis)] * inner);
    p.total += p.widths.back();
  }
  return p;
}

CopyPlan concat(const KernelArgs& k) {
  Parts p = parts_of(k.in, k.node.attrs.i(attr::axis));
  CopyPlan plan;
  for (size_t i = 0; i < k.in.size(); ++i) {
    StridedMap m = copy_map({p.outer, p.widths[i]}, {p.total, 1}, {p.widths[i], 1});
    plan.parts.push_back({int(i), 0, p.offsets[i], p.outer * p.widths[i], m});
  }
  return plan;
}

// SplitLike(x, parts...): part `index` of x along the axis (the parts give their widths).
CopyPlan split_like(const KernelArgs& k) {
  std::vector<TensorType> parts(k.in.begin() + 1, k.in.end());
  Parts p = parts_of(parts, k.node.attrs.i(attr::axis));
  size_t i = size_t(k.node.attrs.i(attr::index));
  StridedMap m = copy_map({p.outer, p.widths[i]}, {p.widths[i], 1}, {p.total, 1});
  return single(m, p.outer * p.widths[i], p.offsets[i]);
}

// Tile as a broadcast over interleaved (multiple, dim) axes: twice the input's rank.
CopyPlan tile(const KernelArgs& k) {
  const Dims& d = k.in[0].shape.dims;
  const auto& mult = k.node.attrs.ints(attr::multiples);
  if (!tile_fits_device(d.size())) return CopyPlan{false, false, {}};
  Dims cs = contiguous_strides(d), od, src;
  for (size_t i = 0; i < d.size(); ++i) {
    od.push_back(mult[i]), src.push_back(0);
    od.push_back(d[i]), src.push_back(cs[i]);
  }
  return single(copy_map(od, contiguous_strides(od), src), numel(od));
}

CopyPlan reverse(const KernelArgs& k) {
  const Dims& d = k.in[0].shape.dims;
  Reversal r = reversal(d, k.node.attrs.ints(attr::axes));
  return single(copy_map(d, contiguous_strides(d), r.strides), numel(d), r.offset);
}

CopyPlan transpose(const KernelArgs& k) {
  return single(transpose_map(k.in[0].shape.dims, k.node.attrs.ints(attr::perm)),
                numel(k.out.shape.dims));
}

CopyPlan broadcast_like(const KernelArgs& k) {
  const Dims& od = k.out.shape.dims;
  return single(make_map(od, {od, k.in[0].shape.dims}), numel(od));
}

// Zero padding: a zeroed output, the input copied in at its offset (pad_before).
CopyPlan pad(const KernelArgs& k) {
  const Dims& in = k.in[0].shape.dims;
  Placement pl = placement(in, k.out.shape.dims, k.node.attrs.ints(attr::pad_before));
  return single(copy_map(in, pl.outer_strides, pl.inner_strides), numel(in), 0, pl.offset, true);
}

}  // namespace

std::optional<CopyPlan> copy_plan(const KernelArgs& k) {
  using Plan = CopyPlan (*)(const KernelArgs&);
  static const std::pair<OpName, Plan> kPlans[] = {{ops::StridedSlice, strided_slice},
                                                   {ops::StridedSliceGrad, strided_slice_grad},
                                                   {ops::Concat, concat},
                                                   {ops::SplitLike, split_like},
                                                   {ops::Tile, tile},
                                                   {ops::Reverse, reverse},
                                                   {ops::Transpose, transpose},
                                                   {ops::BroadcastLike, broadcast_like},
                                                   {ops::Pad, pad}};
  for (auto& [name, plan] : kPlans)
    if (k.node.is(name)) return plan(k);
  return std::nullopt;
}

}  // namespace kb
