// Sparse tensors (COO): creation, to_dense, the sparse cases of dot and concatenate, and
// ctc_label_dense_to_sparse. A sparse tensor is a SparseTensor node over (indices, values,
// dense_shape); any plain use of it densifies.
#include "core/api/sparse.h"

#include "core/api/api.h"
#include "core/ops/build.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace kb::api {

namespace {

NodePtr sparse_node(NodePtr indices, NodePtr values, NodePtr dense_shape, const Dims& dims,
                    const std::string& name) {
  return make_node(ops::SparseTensor,
                   {std::move(indices), std::move(values), std::move(dense_shape)},
                   {{attr::shape, dims}}, name);
}

NodePtr int64_vector(const Dims& v) {
  auto b = Buffer::make(DType::i64, {int64_t(v.size())});
  for (size_t i = 0; i < v.size(); ++i) b->as<int64_t>()[i] = v[i];
  return constant_node(b);
}

NodePtr int64_scalar(int64_t v) {
  auto b = Buffer::make(DType::i64, {});
  *b->as<int64_t>() = v;
  return constant_node(b);
}

}  // namespace

bool is_sparse(const NodePtr& x) { return x && x->is(ops::SparseTensor); }

NodePtr sparse_placeholder(const Shape& shape, DType dtype, const std::string& name) {
  check(shape.rank_known, Status::not_implemented,
        "placeholder: a sparse placeholder needs a shape or ndim");
  for (int64_t d : shape.dims)
    check(d >= -1, Status::invalid_argument, "placeholder: invalid dimension ", d);
  std::string base = name.empty() ? "sparse_placeholder" : name;
  int64_t rank = shape.rank();
  NodePtr indices = placeholder(Shape(Dims{-1, rank}), DType::i64, base + "/indices");
  NodePtr values = placeholder(Shape(Dims{-1}), dtype, base + "/values");
  NodePtr dense_shape = placeholder(Shape(Dims{rank}), DType::i64, base + "/dense_shape");
  return sparse_node(indices, values, dense_shape, shape.dims, base);
}

NodePtr sparse_tensor(const NodePtr& indices, const NodePtr& values, const Dims& dense_shape,
                      const std::string& name) {
  require(indices, "sparse", "indices");
  require(values, "sparse", "values");
  check(!dense_shape.empty(), Status::invalid_argument,
        "sparse: dense_shape must have at least one axis");
  for (int64_t d : dense_shape)
    check(d >= 0, Status::invalid_argument, "sparse: invalid dense dimension ", d);
  int64_t rank = int64_t(dense_shape.size());
  NodePtr s = sparse_node(indices, values, int64_vector(dense_shape), dense_shape,
                          name.empty() ? "sparse" : name);
  // Concrete coordinates are checked now rather than when the tensor is first used.
  if (indices->value) {
    const Buffer& b = *indices->value;
    for (int64_t i = 0; i < b.numel() / rank; ++i)
      for (int64_t d = 0; d < rank; ++d) {
        int64_t v = b.index(i * rank + d);
        check(v >= 0 && v < dense_shape[size_t(d)], Status::invalid_argument, "sparse: entry ", i,
              " has index ", v, " on axis ", d, ", out of range [0, ", dense_shape[size_t(d)], ")");
      }
  }
  return s;
}

NodePtr sparse_from_coo(const std::shared_ptr<Buffer>& indices,
                        const std::shared_ptr<Buffer>& values, const Dims& dense_shape,
                        const std::string& name) {
  return sparse_tensor(constant_node(indices), constant_node(values), dense_shape, name);
}

NodePtr to_dense(const NodePtr& x) {
  require(x, "to_dense", "x");
  if (!is_sparse(x)) return x;
  return make_node(ops::SparseToDense, x->inputs, x->attrs);
}

NodePtr sparse_dot(const NodePtr& x, const NodePtr& y) {
  check(x->rank() == 2, Status::shape, "dot: a sparse operand must be a matrix, got ",
        x->shape().str());
  check(y->shape().rank_known && y->rank() == 2, Status::shape,
        "dot: the dense operand of a sparse product must be a matrix, got ", y->shape().str());
  return make_node(ops::SparseMatMul, {x->inputs[0], x->inputs[1], x->inputs[2], y},
                   {{attr::a_shape, x->shape().dims}, {attr::adjoint_a, int64_t(0)}});
}

NodePtr sparse_concatenate(const Tensors& xs, int64_t axis) {
  int64_t rank = xs[0]->rank();
  Dims dims = xs[0]->shape().dims;
  for (size_t j = 1; j < xs.size(); ++j) {
    const Dims& d = xs[j]->shape().dims;
    check(int64_t(d.size()) == rank, Status::shape, "concatenate: sparse tensors of ranks ", rank,
          " and ", d.size());
    for (int64_t a = 0; a < rank; ++a) {
      int64_t& to = dims[size_t(a)];
      int64_t from = d[size_t(a)];
      if (a == axis)
        to = to < 0 || from < 0 ? -1
                                : checked_add(to, from, "concatenate: the dense sizes along axis ",
                                              axis, " add up to more than INT64_MAX");
      else
        check(to < 0 || from < 0 || to == from, Status::shape,
              "concatenate: sparse tensors of shapes ", xs[0]->shape().str(), " and ",
              xs[j]->shape().str(), " differ off the axis");
    }
  }
  // Entry coordinates along `axis` shift by the dense extent of the tensors before them.
  Dims unit(size_t(rank), 0);
  unit[size_t(axis)] = 1;
  NodePtr e = int64_vector(unit);
  NodePtr offset;  // int64 scalar
  Tensors indices, values;
  for (size_t j = 0; j < xs.size(); ++j) {
    NodePtr idx = kb::cast(xs[j]->inputs[0], DType::i64);
    NodePtr ds = kb::cast(xs[j]->inputs[2], DType::i64);
    indices.push_back(offset ? add(idx, mul(offset, e)) : idx);
    values.push_back(xs[j]->inputs[1]);
    NodePtr extent = make_node(ops::Gather, {ds, int64_scalar(axis)});
    offset = offset ? add(offset, extent) : extent;
  }
  NodePtr first_ds = kb::cast(xs[0]->inputs[2], DType::i64);
  NodePtr first_extent = make_node(ops::Gather, {first_ds, int64_scalar(axis)});
  NodePtr dense_shape = add(first_ds, mul(sub(offset, first_extent), e));
  return sparse_node(make_node(ops::Concat, indices, {{attr::axis, int64_t(0)}}),
                     make_node(ops::Concat, values, {{attr::axis, int64_t(0)}}), dense_shape, dims,
                     "");
}

NodePtr ctc_label_dense_to_sparse(const NodePtr& labels, const NodePtr& label_lengths) {
  const char* who = "ctc_label_dense_to_sparse";
  require(labels, who, "labels");
  require(label_lengths, who, "label_lengths");
  check(labels->shape().rank_known && labels->rank() == 2, Status::shape, who,
        ": labels must have shape (batch, max_length), got ", labels->shape().str());
  check(label_lengths->shape().rank_known && label_lengths->rank() == 1, Status::shape, who,
        ": label_lengths must have shape (batch,), got ", label_lengths->shape().str());
  int64_t b = labels->shape().dims[0], lb = label_lengths->shape().dims[0];
  check(b < 0 || lb < 0 || b == lb, Status::shape, who, ": ", b, " label rows and ", lb,
        " lengths");
  check(!is_bool(label_lengths->dtype()), Status::dtype, who, ": label_lengths must be numbers");
  // Keep position j of row i where j < label_lengths[i].
  NodePtr column = sub(cumsum(fill_like(labels, 1, DType::i64), 1), int64_scalar(1));
  NodePtr length = kb::expand_dims(kb::cast(label_lengths, DType::i64), 1);
  NodePtr indices = make_node(ops::Where, {less(column, length)});
  NodePtr values = make_node(ops::GatherNd, {labels, indices});
  NodePtr dense_shape = kb::cast(make_node(ops::ShapeOf, {labels}), DType::i64);
  return sparse_node(indices, values, dense_shape, labels->shape().dims, "");
}

}  // namespace kb::api
