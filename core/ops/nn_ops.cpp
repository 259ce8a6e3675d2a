// Primitives kept for speed or numerical stability: MatMul, Softmax, LogSoftmax, InTopK.
#include "core/ops/build.h"
#include "core/ops/infer_util.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {
namespace {

using Ins = std::vector<TensorType>;
using Grads = std::vector<NodePtr>;

TensorType infer_matmul(const Ins& in, const Attrs& a) {
  const Shape& sa = in[0].shape;
  const Shape& sb = in[1].shape;
  check(in[0].dtype == in[1].dtype, Status::dtype, "dot: dtypes differ (", dtype_name(in[0].dtype),
        " and ", dtype_name(in[1].dtype), ")");
  check(!is_bool(in[0].dtype), Status::dtype, "dot: bool operands are not supported");
  check(sa.rank_known && sb.rank_known && sa.rank() >= 2 && sa.rank() == sb.rank(), Status::shape,
        "dot: matmul needs operands of equal rank >= 2, got ", sa.str(), " and ", sb.str());
  size_t r = sa.dims.size();
  bool ta = a.i(attr::transpose_a) != 0, tb = a.i(attr::transpose_b) != 0;
  int64_t m = ta ? sa.dims[r - 1] : sa.dims[r - 2];
  int64_t ka = ta ? sa.dims[r - 2] : sa.dims[r - 1];
  int64_t kb_ = tb ? sb.dims[r - 1] : sb.dims[r - 2];
  int64_t n = tb ? sb.dims[r - 2] : sb.dims[r - 1];
  check(ka < 0 || kb_ < 0 || ka == kb_, Status::shape, "dot: inner dimensions differ (", sa.str(),
        " and ", sb.str(), ")");
  Dims out;
  for (size_t i = 0; i + 2 < r; ++i) {
    int64_t da = sa.dims[i], db = sb.dims[i];
    check(da < 0 || db < 0 || da == db, Status::shape, "dot: batch dimensions differ (", sa.str(),
          " and ", sb.str(), ")");
    out.push_back(da >= 0 ? da : db);
  }
  out.push_back(m);
  out.push_back(n);
  return {in[0].dtype, Shape(out)};
}
Grads grad_matmul(const NodePtr& nd, const NodePtr& dy) {
  const NodePtr& a = nd->inputs[0];
  const NodePtr& b = nd->inputs[1];
  bool ta = nd->attrs.i(attr::transpose_a) != 0, tb = nd->attrs.i(attr::transpose_b) != 0;
  if (!ta && !tb) return {matmul(dy, b, false, true), matmul(a, dy, true, false)};
  if (ta && !tb) return {matmul(b, dy, false, true), matmul(a, dy, false, false)};
  if (!ta && tb) return {matmul(dy, b, false, false), matmul(dy, a, true, false)};
  return {matmul(b, dy, true, true), matmul(dy, a, true, true)};
}
OpRegistrar r1({ops::MatMul, infer_matmul, grad_matmul});

// FusedMatMul(a, b[, bias]): MatMul, then + bias[j] in column j when there is a third input, then
// relu when the attribute relu is 1. Built only by the plan-time rewrite of
// core/compile/fuse_epilogue.cpp, after gradients were taken on the unfused graph: no gradient.
TensorType infer_fused_matmul(const Ins& in, const Attrs& a) {
  check(in.size() == 2 || in.size() == 3, Status::invalid_argument,
        "dot: a fused product takes 2 or 3 inputs, got ", in.size());
  TensorType y = infer_matmul({in[0], in[1]}, a);
  if (in.size() == 3) {
    check(in[2].dtype == y.dtype, Status::dtype, "dot: the bias is ", dtype_name(in[2].dtype),
          " but the product is ", dtype_name(y.dtype));
    int64_t n = y.shape.dims.back();
    int64_t nb = in[2].shape.fully_known() ? numel(in[2].shape.dims) : -1;
    check(n < 0 || nb < 0 || nb == n, Status::shape, "dot: a bias of ", nb, " values for ", n,
          " columns");
  }
  return y;
}
OpRegistrar r1f({ops::FusedMatMul, infer_fused_matmul, nullptr});

TensorType infer_softmax(const Ins& in, const Attrs& a) {
  check(is_floating(in[0].dtype), Status::dtype, "softmax: expected a floating dtype, got ",
        dtype_name(in[0].dtype));
  check(in[0].shape.rank_known && in[0].shape.rank() >= 1, Status::shape,
        "softmax: the input needs rank >= 1");
  normalize_axis(a.i(attr::axis), in[0].shape.rank(), "softmax");
  return in[0];
}
Grads grad_softmax(const NodePtr& n, const NodePtr& dy) {
  std::vector<int64_t> ax{normalize_axis(n->attrs.i(attr::axis), n->rank(), "softmax")};
  return {mul(n, sub(dy, reduce_sum(mul(dy, n), ax, true)))};
}
OpRegistrar r2({ops::Softmax, infer_softmax, grad_softmax});

Grads grad_log_softmax(const NodePtr& n, const NodePtr& dy) {
  std::vector<int64_t> ax{normalize_axis(n->attrs.i(attr::axis), n->rank(), "log_softmax")};
  return {sub(dy, mul(unary(ops::Exp, n), reduce_sum(dy, ax, true)))};
}
OpRegistrar r3({ops::LogSoftmax, infer_softmax, grad_log_softmax});

TensorType infer_in_top_k(const Ins& in, const Attrs&) {
  check(in[0].shape.rank() == 2, Status::shape, "in_top_k: predictions must have rank 2, got ",
        in[0].shape.str());
  check(is_floating(in[0].dtype), Status::dtype, "in_top_k: predictions must be floating");
  check(in[1].shape.rank() == 1, Status::shape, "in_top_k: targets must have rank 1, got ",
        in[1].shape.str());
  check(in[1].dtype == DType::i32 || in[1].dtype == DType::i64, Status::dtype,
        "in_top_k: targets must be int32 or int64, got ", dtype_name(in[1].dtype));
  int64_t b0 = in[0].shape.dims[0], b1 = in[1].shape.dims[0];
  check(b0 < 0 || b1 < 0 || b0 == b1, Status::shape, "in_top_k: batch sizes differ (",
        in[0].shape.str(), " and ", in[1].shape.str(), ")");
  return {DType::b8, Shape(Dims{b0 >= 0 ? b0 : b1})};
}
OpRegistrar r4({ops::InTopK, infer_in_top_k, nullptr});

}  // namespace
}  // namespace kb
