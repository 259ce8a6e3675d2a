// Reductions (sum, prod, max, min over axes), arg-reductions and cumulative scans.
#include "core/ops/build.h"
#include "core/ops/infer_util.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {
namespace {

using Ins = std::vector<TensorType>;
using Grads = std::vector<NodePtr>;

TensorType infer_reduce(const Ins& in, const Attrs& a) {
  const auto& axes = a.ints(attr::axes);
  bool keep = a.i(attr::keepdims) != 0;
  auto mode = mode_of<ReduceMode>(a);
  if (mode == ReduceMode::sum || mode == ReduceMode::prod)
    check(!is_bool(in[0].dtype), Status::dtype, "reduce: cannot sum or multiply bool values");
  if (axes.empty()) {
    if (!in[0].shape.rank_known) return {in[0].dtype, keep ? Shape::unknown_rank() : Shape(Dims{})};
    return {in[0].dtype, Shape(keep ? Dims(in[0].shape.dims.size(), 1) : Dims{})};
  }
  check(in[0].shape.rank_known, Status::shape, "reduce: the input rank is unknown");
  auto ax = normalize_axes(axes, in[0].shape.rank(), "reduce");
  Dims out;
  size_t k = 0;
  for (int64_t i = 0; i < in[0].shape.rank(); ++i) {
    bool reduced = k < ax.size() && ax[k] == i;
    if (reduced) {
      ++k;
      if (keep) out.push_back(1);
    } else {
      out.push_back(in[0].shape.dims[i]);
    }
  }
  return {in[0].dtype, Shape(out)};
}

Grads grad_reduce(const NodePtr& n, const NodePtr& dy) {
  const NodePtr& x = n->inputs[0];
  const auto& axes = n->attrs.ints(attr::axes);
  bool keep = n->attrs.i(attr::keepdims) != 0;
  auto mode = mode_of<ReduceMode>(n->attrs);
  NodePtr g = unreduce(dy, x, axes, keep);
  switch (mode) {
    case ReduceMode::sum:
      return {g};
    case ReduceMode::prod: {
      // The product of the other elements, also where x has zeros (as TensorFlow's _ProdGrad):
      // with no zero it is prod / x; at the only zero, the product of the rest; else 0.
      NodePtr is_zero = binary(ops::Equal, x, scalar_like(x, 0.0));
      NodePtr safe = select(is_zero, fill_like(x, 1.0, x->dtype()), x);
      NodePtr rest = unreduce(reduce(safe, ReduceMode::prod, axes, keep), x, axes, keep);
      NodePtr zeros = unreduce(reduce_sum(cast(is_zero, x->dtype()), axes, keep), x, axes, keep);
      NodePtr none = fill_like(x, 0.0, x->dtype());
      NodePtr at_zero = select(binary(ops::Equal, zeros, scalar_like(x, 1.0)), rest, none);
      NodePtr elsewhere =
          select(binary(ops::Equal, zeros, scalar_like(x, 0.0)), div(rest, safe), none);
      return {mul(g, select(is_zero, at_zero, elsewhere))};
    }
    case ReduceMode::max:
    case ReduceMode::min: {
      NodePtr hit = cast(binary(ops::Equal, x, unreduce(n, x, axes, keep)), x->dtype());
      NodePtr count = unreduce(reduce_sum(hit, axes, keep), x, axes, keep);
      return {div(mul(g, hit), count)};
    }
  }
  return {nullptr};
}
OpRegistrar r1({ops::Reduce, infer_reduce, grad_reduce});

TensorType infer_arg_reduce(const Ins& in, const Attrs& a) {
  check(in[0].shape.rank_known && in[0].shape.rank() >= 1, Status::shape,
        "argmax: the input needs rank >= 1");
  check(!is_bool(in[0].dtype), Status::dtype, "argmax: bool input is not supported");
  int64_t axis = normalize_axis(a.i(attr::axis), in[0].shape.rank(), "argmax");
  // An empty axis has no position to name. Plans infer again with the concrete dims before they
  // make a kernel, so no kernel sees one.
  check(in[0].shape.dims[axis] != 0, Status::invalid_argument, "argmax: the reduction axis ", axis,
        " is empty");
  Dims out = in[0].shape.dims;
  out.erase(out.begin() + axis);
  return {DType::i64, Shape(out)};
}
OpRegistrar r2({ops::ArgReduce, infer_arg_reduce, nullptr});

TensorType infer_cumulative(const Ins& in, const Attrs& a) {
  check(in[0].shape.rank_known && in[0].shape.rank() >= 1, Status::shape,
        "cumsum: the input needs rank >= 1");
  check(!is_bool(in[0].dtype), Status::dtype, "cumsum: bool input is not supported");
  normalize_axis(a.i(attr::axis), in[0].shape.rank(), "cumsum");
  return in[0];
}
Grads grad_cumulative(const NodePtr& n, const NodePtr& dy) {
  const NodePtr& x = n->inputs[0];
  int64_t axis = n->attrs.i(attr::axis);
  auto rev = [&](const NodePtr& v) {
    return make_node(ops::Reverse, {v}, {{attr::axes, std::vector<int64_t>{axis}}});
  };
  auto rcumsum = [&](const NodePtr& v) {
    return rev(make_node(ops::Cumulative, {rev(v)},
                         {{attr::mode, int64_t(ScanMode::sum)}, {attr::axis, axis}}));
  };
  if (mode_of<ScanMode>(n->attrs) == ScanMode::sum) return {rcumsum(dy)};
  // d/dx_i of prod_{j<=k} x_j = z_k / x_i (for i <= k); valid where x has no zeros.
  return {div(rcumsum(mul(dy, n)), x)};
}
OpRegistrar r3({ops::Cumulative, infer_cumulative, grad_cumulative});

}  // namespace
}  // namespace kb
