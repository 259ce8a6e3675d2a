// Movement and shape primitives: reshape family, broadcast/unbroadcast, transpose, concat,
// slicing, tile, reverse, gather, and the shape-only values (ShapeOf, SizeOf, FillLike).
#include <algorithm>
#include <numeric>

#include "core/ops/build.h"
#include "core/ops/infer_util.h"
#include "core/ops/op.h"
#include "core/ops/reshape_dims.h"
#include "core/ops/slice_spec.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace kb {
namespace {

using Ins = std::vector<TensorType>;
using Grads = std::vector<NodePtr>;

// ---- reshape family -------------------------------------------------------------------------
TensorType infer_reshape(const Ins& in, const Attrs& a) {
  return {in[0].dtype, Shape(reshape_dims(in[0].shape, a.ints(attr::dims)))};
}
Grads grad_reshape(const NodePtr& n, const NodePtr& dy) { return {reshape_like(dy, n->inputs[0])}; }
OpRegistrar r1({ops::Reshape, infer_reshape, grad_reshape, false, true});

// ReshapeTo(x, shape): x with the dims that the 1-D int64 tensor `shape` holds (one may be -1)
// when the function runs. Attribute dims: those known when the graph is built (-1 elsewhere).
// Where a plan knows the shape's value (K.shape(y)[1] of a fed y folds), the result's dims are
// known to the plan and the steps after it get kernels at plan time; elsewhere the kernel reads
// the value.
TensorType reshape_to_type(const Ins& in, const Buffer* shape, const Attrs& a) {
  check_arity(in, 2, "reshape");
  const Shape& s = in[1].shape;
  check(in[1].dtype == DType::i64 && s.rank_known && s.rank() == 1 && s.dims[0] >= 0,
        Status::internal, "reshape: the target must be an int64 vector of known length, got ",
        dtype_name(in[1].dtype), s.str());
  if (shape) {
    Dims spec(shape->as<int64_t>(), shape->as<int64_t>() + shape->numel());
    return {in[0].dtype, Shape(reshape_dims(in[0].shape, spec))};
  }
  Dims hint = a.ints(attr::dims);
  check(int64_t(hint.size()) == s.dims[0], Status::internal, "reshape: ", hint.size(),
        " known dims for a target of ", s.dims[0]);
  int unknown = 0;
  for (int64_t d : hint) unknown += d < 0;
  // One unknown among known sizes is the -1 of a reshape: x's count gives it where known.
  if (unknown == 1) return {in[0].dtype, Shape(reshape_dims(in[0].shape, hint))};
  return {in[0].dtype, Shape(hint)};
}
TensorType infer_reshape_to(const Ins& in, const Attrs& a) {
  return reshape_to_type(in, nullptr, a);
}
TensorType infer_reshape_to_values(const Ins& in, const std::vector<const Buffer*>& values,
                                   const Attrs& a) {
  return reshape_to_type(in, values.size() > 1 ? values[1] : nullptr, a);
}
Grads grad_reshape_to(const NodePtr& n, const NodePtr& dy) {
  return {reshape_like(dy, n->inputs[0]), nullptr};
}
OpRegistrar r1t({.name = "ReshapeTo",
                 .infer = infer_reshape_to,
                 .grad = grad_reshape_to,
                 .view = true,
                 .dynamic = true,
                 .infer_values = infer_reshape_to_values});

// ReshapeLike(x, like): x with like's shape; with keep = k > 0, x's axis 0 is split into like's
// first k axes (x of (T*B, n) like (T, B, m) -> (T, B, n)).
TensorType infer_reshape_like(const Ins& in, const Attrs& attrs) {
  int64_t keep = attrs.i(attr::keep, 0);
  if (keep > 0) {
    const Shape& x = in[0].shape;
    const Shape& like = in[1].shape;
    check(x.rank_known && like.rank_known && x.rank() >= 1 && like.rank() >= keep, Status::shape,
          "reshape: cannot split ", x.str(), " by the leading axes of ", like.str());
    Dims d(like.dims.begin(), like.dims.begin() + keep);
    int64_t lead = 1;
    for (int64_t v : d)
      lead = v < 0 || lead < 0 ? -1
                               : checked_mul(lead, v, "reshape: the leading axes of ", like.str(),
                                             " hold more than INT64_MAX elements");
    check(lead < 0 || x.dims[0] < 0 || lead == x.dims[0], Status::shape, "reshape: cannot split ",
          x.str(), " by the leading axes of ", like.str());
    d.insert(d.end(), x.dims.begin() + 1, x.dims.end());
    return {in[0].dtype, Shape(d)};
  }
  int64_t a = in[0].shape.numel(), b = in[1].shape.numel();
  check(a < 0 || b < 0 || a == b, Status::shape, "reshape: cannot reshape ", in[0].shape.str(),
        " into ", in[1].shape.str());
  return {in[0].dtype, in[1].shape};
}
Grads grad_reshape_like(const NodePtr& n, const NodePtr& dy) {
  return {reshape_like(dy, n->inputs[0]), nullptr};
}
OpRegistrar r2({.name = "ReshapeLike",
                .infer = infer_reshape_like,
                .grad = grad_reshape_like,
                .view = true,
                .shape_input = 1});

TensorType infer_expand_dims(const Ins& in, const Attrs& a) {
  check(in[0].shape.rank_known, Status::shape, "expand_dims: the input rank is unknown");
  int64_t axis = a.i(attr::axis);
  Dims d = in[0].shape.dims;
  check(axis >= 0 && axis <= int64_t(d.size()), Status::invalid_argument, "expand_dims: axis ",
        axis, " is out of range for rank ", d.size());
  d.insert(d.begin() + axis, 1);
  return {in[0].dtype, Shape(d)};
}
OpRegistrar r3({ops::ExpandDims, infer_expand_dims, grad_reshape, false, true});

TensorType infer_squeeze(const Ins& in, const Attrs& a) {
  check(in[0].shape.rank_known, Status::shape, "squeeze: the input rank is unknown");
  int64_t axis = a.i(attr::axis);
  Dims d = in[0].shape.dims;
  check(axis >= 0 && axis < int64_t(d.size()), Status::invalid_argument, "squeeze: axis ", axis,
        " is out of range for rank ", d.size());
  check(d[axis] == 1 || d[axis] < 0, Status::shape, "squeeze: axis ", axis, " has size ", d[axis],
        ", not 1");
  d.erase(d.begin() + axis);
  return {in[0].dtype, Shape(d)};
}
OpRegistrar r4({ops::Squeeze, infer_squeeze, grad_reshape, false, true});

// ---- broadcasting -----------------------------------------------------------------------------
TensorType infer_broadcast_like(const Ins& in, const Attrs&) {
  Shape s = broadcast_shapes(in[0].shape, in[1].shape, "broadcast");
  return {in[0].dtype, s};
}
Grads grad_broadcast_like(const NodePtr& n, const NodePtr& dy) {
  return {sum_to_like(dy, n->inputs[0]), nullptr};
}
OpRegistrar r5({.name = "BroadcastLike",
                .infer = infer_broadcast_like,
                .grad = grad_broadcast_like,
                .shape_input = 1});

TensorType infer_sum_to_like(const Ins& in, const Attrs&) { return {in[0].dtype, in[1].shape}; }
Grads grad_sum_to_like(const NodePtr& n, const NodePtr& dy) {
  return {broadcast_like(dy, n->inputs[0]), nullptr};
}
bool sum_to_like_aliases(const Ins& in, const TensorType& out) { return in[0].shape == out.shape; }
OpRegistrar r6({.name = "SumToLike",
                .infer = infer_sum_to_like,
                .grad = grad_sum_to_like,
                .view = true,
                .shape_input = 1,
                .view_when = sum_to_like_aliases});

// ---- shape-only values ----------------------------------------------------------------------
TensorType infer_fill_like(const Ins& in, const Attrs& a) {
  return {static_cast<DType>(a.i(attr::dtype)), in[0].shape};
}
OpRegistrar r7({ops::FillLike, infer_fill_like, nullptr, false, false, true});

TensorType infer_size_of(const Ins&, const Attrs& a) {
  return {static_cast<DType>(a.i(attr::dtype)), Shape(Dims{})};
}
OpRegistrar r8({ops::SizeOf, infer_size_of, nullptr, false, false, true});

TensorType infer_shape_of(const Ins& in, const Attrs&) {
  return {DType::i32, Shape(Dims{in[0].shape.rank()})};
}
OpRegistrar r9({ops::ShapeOf, infer_shape_of, nullptr, false, false, true});

// ---- transpose ------------------------------------------------------------------------------
TensorType infer_transpose(const Ins& in, const Attrs& a) {
  const auto& perm = a.ints(attr::perm);
  check(in[0].shape.rank_known, Status::shape, "permute_dimensions: the input rank is unknown");
  int64_t r = in[0].shape.rank();
  check(int64_t(perm.size()) == r, Status::invalid_argument, "permute_dimensions: pattern ",
        dims_str(perm), " does not match rank ", r);
  std::vector<bool> seen(r, false);
  Dims out(r);
  for (int64_t i = 0; i < r; ++i) {
    check(perm[i] >= 0 && perm[i] < r && !seen[perm[i]], Status::invalid_argument,
          "permute_dimensions: pattern ", dims_str(perm), " is not a permutation");
    seen[perm[i]] = true;
    out[i] = in[0].shape.dims[perm[i]];
  }
  return {in[0].dtype, Shape(out)};
}
Grads grad_transpose(const NodePtr& n, const NodePtr& dy) {
  const auto& perm = n->attrs.ints(attr::perm);
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = int64_t(i);
  return {transpose(dy, inv)};
}
OpRegistrar r10({ops::Transpose, infer_transpose, grad_transpose});

// ---- concat / split -----------------------------------------------------------------------
TensorType concat_type(const Ins& in, size_t first, int64_t axis, const char* who) {
  check(in.size() > first, Status::invalid_argument, who, ": no tensors given");
  const TensorType& t0 = in[first];
  check(t0.shape.rank_known, Status::shape, who, ": input rank is unknown");
  int64_t r = t0.shape.rank();
  check(axis >= 0 && axis < r, Status::invalid_argument, who, ": axis ", axis,
        " is out of range for rank ", r);
  Dims out = t0.shape.dims;
  for (size_t k = first + 1; k < in.size(); ++k) {
    const TensorType& t = in[k];
    check(t.dtype == t0.dtype, Status::dtype, who, ": dtypes differ (", dtype_name(t0.dtype),
          " and ", dtype_name(t.dtype), ")");
    check(t.shape.rank() == r, Status::shape, who, ": ranks differ (", t0.shape.str(), " and ",
          t.shape.str(), ")");
    for (int64_t i = 0; i < r; ++i) {
      int64_t d = t.shape.dims[i];
      if (i == axis) {
        out[i] = (out[i] < 0 || d < 0) ? -1
                                       : checked_add(out[i], d, who, ": the sizes along axis ",
                                                     axis, " add up to more than INT64_MAX");
      } else if (out[i] < 0) {
        out[i] = d;
      } else {
        check(d < 0 || d == out[i], Status::shape, who, ": shapes ", t0.shape.str(), " and ",
              t.shape.str(), " differ outside axis ", axis);
      }
    }
  }
  return {t0.dtype, Shape(out)};
}
TensorType infer_concat(const Ins& in, const Attrs& a) {
  return concat_type(in, 0, a.i(attr::axis), "concatenate");
}
Grads grad_concat(const NodePtr& n, const NodePtr& dy) {
  Grads g;
  std::vector<NodePtr> ins{dy};
  for (auto& x : n->inputs) ins.push_back(x);
  for (size_t i = 0; i < n->inputs.size(); ++i)
    g.push_back(make_node(ops::SplitLike, ins,
                          {{attr::axis, n->attrs.i(attr::axis)}, {attr::index, int64_t(i)}}));
  return g;
}
OpRegistrar r11({ops::Concat, infer_concat, grad_concat});

TensorType infer_split_like(const Ins& in, const Attrs& a) {
  int64_t idx = a.i(attr::index);
  return {in[0].dtype, in[1 + idx].shape};
}
Grads grad_split_like(const NodePtr& n, const NodePtr& dy) {
  int64_t idx = n->attrs.i(attr::index);
  std::vector<NodePtr> parts;
  for (size_t i = 1; i < n->inputs.size(); ++i)
    parts.push_back(int64_t(i - 1) == idx ? dy : zeros_like(n->inputs[i]));
  Grads g(n->inputs.size(), nullptr);
  g[0] = make_node(ops::Concat, parts, {{attr::axis, n->attrs.i(attr::axis)}});
  return g;
}
OpRegistrar r12({ops::SplitLike, infer_split_like, grad_split_like});

// ---- strided slice --------------------------------------------------------------------------
TensorType infer_strided_slice(const Ins& in, const Attrs& a) {
  check(in[0].shape.rank_known, Status::shape, "slice: the input rank is unknown");
  auto sl = resolve_slices(in[0].shape.dims, a, "slice");
  Dims out;
  for (auto& s : sl)
    if (!s.shrink) out.push_back(s.length);
  return {in[0].dtype, Shape(out)};
}
Grads grad_strided_slice(const NodePtr& n, const NodePtr& dy) {
  return {make_node(ops::StridedSliceGrad, {dy, n->inputs[0]}, n->attrs)};
}
OpRegistrar r13({ops::StridedSlice, infer_strided_slice, grad_strided_slice});

TensorType infer_strided_slice_grad(const Ins& in, const Attrs&) {
  return {in[0].dtype, in[1].shape};
}
Grads grad_strided_slice_grad(const NodePtr& n, const NodePtr& dy) {
  return {make_node(ops::StridedSlice, {dy}, n->attrs), nullptr};
}
OpRegistrar r14({ops::StridedSliceGrad, infer_strided_slice_grad, grad_strided_slice_grad});

// ---- tile / reverse -----------------------------------------------------------------------
TensorType infer_tile(const Ins& in, const Attrs& a) {
  const auto& m = a.ints(attr::multiples);
  check(in[0].shape.rank_known, Status::shape, "tile: the input rank is unknown");
  check(int64_t(m.size()) == in[0].shape.rank(), Status::invalid_argument, "tile: ", m.size(),
        " multiples for a tensor of rank ", in[0].shape.rank());
  Dims out = in[0].shape.dims;
  for (size_t i = 0; i < m.size(); ++i) {
    check(m[i] >= 0, Status::invalid_argument, "tile: negative multiple ", m[i]);
    check(out[i] < 0 || !__builtin_mul_overflow(out[i], m[i], &out[i]), Status::invalid_argument,
          "tile: multiple ", m[i], " is too large");
    if (out[i] < 0) out[i] = -1;
  }
  return {in[0].dtype, Shape(out)};
}
Grads grad_tile(const NodePtr& n, const NodePtr& dy) {
  return {make_node(ops::TileGrad, {dy, n->inputs[0]}, n->attrs)};
}
OpRegistrar r15({ops::Tile, infer_tile, grad_tile});

TensorType infer_tile_grad(const Ins& in, const Attrs&) { return {in[0].dtype, in[1].shape}; }
Grads grad_tile_grad(const NodePtr& n, const NodePtr& dy) {
  return {make_node(ops::Tile, {dy}, n->attrs), nullptr};
}
OpRegistrar r16({ops::TileGrad, infer_tile_grad, grad_tile_grad});

TensorType infer_reverse(const Ins& in, const Attrs& a) {
  for (int64_t ax : a.ints(attr::axes))
    check(ax >= 0 && ax < in[0].shape.rank(), Status::invalid_argument, "reverse: axis ", ax,
          " is out of range for rank ", in[0].shape.rank());
  return in[0];
}
Grads grad_reverse(const NodePtr& n, const NodePtr& dy) {
  return {make_node(ops::Reverse, {dy}, n->attrs)};
}
OpRegistrar r17({ops::Reverse, infer_reverse, grad_reverse});

// ---- gather / scatter ---------------------------------------------------------------------
TensorType infer_gather(const Ins& in, const Attrs&) {
  check(in[0].shape.rank() >= 1, Status::shape, "gather: the reference must have rank >= 1");
  check(in[1].dtype == DType::i32 || in[1].dtype == DType::i64, Status::dtype,
        "gather: indices must be int32 or int64, got ", dtype_name(in[1].dtype));
  check(in[1].shape.rank_known, Status::shape, "gather: the indices' rank is unknown");
  Dims out = in[1].shape.dims;
  out.insert(out.end(), in[0].shape.dims.begin() + 1, in[0].shape.dims.end());
  return {in[0].dtype, Shape(out)};
}
Grads grad_gather(const NodePtr& n, const NodePtr& dy) {
  return {make_node(ops::ScatterAddLike, {dy, n->inputs[1], n->inputs[0]}), nullptr};
}
OpRegistrar r18({ops::Gather, infer_gather, grad_gather});

TensorType infer_scatter_add_like(const Ins& in, const Attrs&) {
  return {in[0].dtype, in[2].shape};
}
Grads grad_scatter_add_like(const NodePtr& n, const NodePtr& dy) {
  return {make_node(ops::Gather, {dy, n->inputs[1]}), nullptr, nullptr};
}
OpRegistrar r19({ops::ScatterAddLike, infer_scatter_add_like, grad_scatter_add_like});

}  // namespace
}  // namespace kb
