// Sparse tensors in COO form: a SparseTensor node holds (indices (nnz, rank) int, values (nnz,),
// dense_shape (rank,) int) and, used as a plain tensor, densifies (SparseToDense computes the
// same value without being sparse itself). GatherNd / ScatterNdLike move values between the
// two forms; SparseMatMul multiplies a sparse matrix by a dense one.
#include "core/ops/build.h"
#include "core/ops/infer_util.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {
namespace {

using Ins = std::vector<TensorType>;
using Grads = std::vector<NodePtr>;

void check_index_dtype(const TensorType& t, const char* who, const char* what) {
  check(t.dtype == DType::i32 || t.dtype == DType::i64, Status::dtype, who, ": ", what,
        " must be int32 or int64, got ", dtype_name(t.dtype));
}

// (indices, values, dense_shape): checks the three parts against each other and the static
// dense shape `dims`.
void check_coo(const Ins& in, const Dims& dims, const char* who) {
  check_arity(in, 3, who);
  check_index_dtype(in[0], who, "indices");
  check_index_dtype(in[2], who, "dense_shape");
  const Shape &idx = in[0].shape, &val = in[1].shape, &ds = in[2].shape;
  check(idx.rank_known && idx.rank() == 2, Status::shape, who,
        ": indices must have shape (nnz, rank), got ", idx.str());
  check(val.rank_known && val.rank() == 1, Status::shape, who,
        ": values must have shape (nnz,), got ", val.str());
  check(ds.rank_known && ds.rank() == 1, Status::shape, who,
        ": dense_shape must have shape (rank,), got ", ds.str());
  int64_t rank = int64_t(dims.size());
  check(idx.dims[1] < 0 || idx.dims[1] == rank, Status::shape, who, ": indices have ", idx.dims[1],
        " columns for a tensor of rank ", rank);
  check(ds.dims[0] < 0 || ds.dims[0] == rank, Status::shape, who, ": dense_shape has ", ds.dims[0],
        " entries for a tensor of rank ", rank);
  check(idx.dims[0] < 0 || val.dims[0] < 0 || idx.dims[0] == val.dims[0], Status::shape, who, ": ",
        idx.dims[0], " indices for ", val.dims[0], " values");
}

TensorType infer_sparse(const Ins& in, const Attrs& a) {
  const Dims& dims = a.ints(attr::shape);
  check_coo(in, dims, "sparse");
  return {in[1].dtype, Shape(dims)};
}
Grads grad_sparse(const NodePtr& n, const NodePtr& dy) {
  return {nullptr, make_node(ops::GatherNd, {dy, n->inputs[0]}), nullptr};
}
OpDef sparse_def(OpName name) {
  OpDef d;
  d.name = name;
  d.infer = infer_sparse;
  d.grad = grad_sparse;
  d.dynamic = true;  // the dense dims are dense_shape's values
  return d;
}
OpRegistrar r1(sparse_def(ops::SparseTensor));
OpRegistrar r2(sparse_def(ops::SparseToDense));

// GatherNd(x, indices (..., r)): x[indices[..., :]] -> indices.dims[:-1] + x.dims[r:].
TensorType infer_gather_nd(const Ins& in, const Attrs&) {
  check_arity(in, 2, "gather_nd");
  check_index_dtype(in[1], "gather_nd", "indices");
  const Shape &x = in[0].shape, &idx = in[1].shape;
  check(x.rank_known && idx.rank_known && idx.rank() >= 1, Status::shape,
        "gather_nd: needs known ranks and indices of rank >= 1");
  int64_t r = idx.dims.back();
  check(r >= 0 && r <= x.rank(), Status::shape, "gather_nd: indices of depth ", r,
        " for a tensor of rank ", x.rank());
  Dims out(idx.dims.begin(), idx.dims.end() - 1);
  out.insert(out.end(), x.dims.begin() + r, x.dims.end());
  return {in[0].dtype, Shape(out)};
}
Grads grad_gather_nd(const NodePtr& n, const NodePtr& dy) {
  return {make_node(ops::ScatterNdLike, {dy, n->inputs[1], n->inputs[0]}), nullptr};
}
OpRegistrar r3({ops::GatherNd, infer_gather_nd, grad_gather_nd});

// ScatterNdLike(updates, indices, like): zeros shaped like `like`, updates added at indices.
TensorType infer_scatter_nd_like(const Ins& in, const Attrs&) {
  check_arity(in, 3, "scatter_nd");
  check_index_dtype(in[1], "scatter_nd", "indices");
  return {in[0].dtype, in[2].shape};
}
Grads grad_scatter_nd_like(const NodePtr& n, const NodePtr& dy) {
  return {make_node(ops::GatherNd, {dy, n->inputs[1]}), nullptr, nullptr};
}
OpRegistrar r4({ops::ScatterNdLike, infer_scatter_nd_like, grad_scatter_nd_like});

// SparseMatMul(indices, values, dense_shape, b): A @ b, or A^T @ b with adjoint_a; A is the
// sparse (M, K) matrix whose static shape is the attribute a_shape.
TensorType infer_sparse_matmul(const Ins& in, const Attrs& a) {
  check_arity(in, 4, "dot");
  const Dims& ad = a.ints(attr::a_shape);
  check_coo({in[0], in[1], in[2]}, ad, "dot");
  check(ad.size() == 2, Status::shape, "dot: a sparse operand must be a matrix");
  const Shape& b = in[3].shape;
  check(b.rank_known && b.rank() == 2, Status::shape,
        "dot: the dense operand of a sparse product must be a matrix, got ", b.str());
  check(in[1].dtype == in[3].dtype, Status::dtype, "dot: the sparse values are ",
        dtype_name(in[1].dtype), ", the dense operand is ", dtype_name(in[3].dtype));
  bool adj = a.i(attr::adjoint_a) != 0;
  int64_t inner = adj ? ad[0] : ad[1], rows = adj ? ad[1] : ad[0];
  check(inner < 0 || b.dims[0] < 0 || inner == b.dims[0], Status::shape, "dot: shapes ",
        dims_str(ad), " and ", b.str(), " are not aligned");
  return {in[3].dtype, Shape(Dims{rows, b.dims[1]})};
}
NodePtr index_column(const NodePtr& indices, int64_t c) {
  auto i = Buffer::make(DType::i64, {});
  *i->as<int64_t>() = c;
  return make_node(ops::Gather, {transpose(indices, {1, 0}), constant_node(i)});
}
Grads grad_sparse_matmul(const NodePtr& n, const NodePtr& dy) {
  const NodePtr &idx = n->inputs[0], &b = n->inputs[3];
  bool adj = n->attrs.i(attr::adjoint_a) != 0;
  // out[r] += v * b[c] (r, c = row, col; swapped with adjoint_a): dv = <dy[r], b[c]>.
  NodePtr r = index_column(idx, adj ? 1 : 0), c = index_column(idx, adj ? 0 : 1);
  NodePtr dv =
      reduce_sum(mul(make_node(ops::Gather, {dy, r}), make_node(ops::Gather, {b, c})), {1}, false);
  Attrs at = n->attrs;
  at.set(attr::adjoint_a, int64_t(adj ? 0 : 1));
  NodePtr db = make_node(ops::SparseMatMul, {idx, n->inputs[1], n->inputs[2], dy}, at);
  return {nullptr, dv, nullptr, db};
}
OpRegistrar r5([] {
  OpDef d;
  d.name = ops::SparseMatMul;
  d.infer = infer_sparse_matmul;
  d.grad = grad_sparse_matmul;
  d.dynamic = true;  // the rows are dense_shape's value
  return d;
}());

}  // namespace
}  // namespace kb
