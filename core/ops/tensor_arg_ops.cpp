// Primitives whose arguments are tensors with values known when a function runs (Keras writes
// K.tile(x, (1, K.shape(x)[1], 1)), K.arange(K.shape(x)[0]), K.slice(x, b, K.shape(x) - b)):
// TileTo, RangeTo, SliceTo and the gradients' TileToGrad and SliceToGrad. Each specializes into
// the op of static attributes that computes the same (OpDef::specialize): plans do so where they
// know the values, the CPU when the function runs elsewhere.
#include "core/graph/scalar.h"
#include "core/ops/build.h"
#include "core/ops/infer_util.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {
namespace {

using Ins = std::vector<TensorType>;
using Values = std::vector<const Buffer*>;
using Grads = std::vector<NodePtr>;

// An argument vector: int64, rank 1, of length n (n < 0: any).
void check_vector(const TensorType& t, int64_t n, const char* who, const char* what) {
  check(t.dtype == DType::i64 && t.shape.rank_known && t.shape.rank() == 1 &&
            (n < 0 || t.shape.dims[0] == n),
        Status::internal, who, ": ", what, " must be an int64 vector of ", n, " entries, got ",
        dtype_name(t.dtype), t.shape.str());
}

std::vector<int64_t> ints_of(const Buffer& b) {
  return std::vector<int64_t>(b.as<int64_t>(), b.as<int64_t>() + b.numel());
}

int64_t rank_of(const TensorType& x, const char* who) {
  check(x.shape.rank_known, Status::shape, who, ": the input rank is unknown");
  return x.shape.rank();
}

// ---- TileTo(x, multiples) -------------------------------------------------------------------
TensorType infer_tile_to(const Ins& in, const Values& v, const Attrs& a) {
  check_arity(in, 2, "tile");
  int64_t r = rank_of(in[0], "tile");
  check_vector(in[1], r, "tile", "multiples");
  // The multiples' values where known, else those known when the graph was built (attribute
  // multiples, -1 where unknown).
  const Buffer* m = v.size() > 1 ? v[1] : nullptr;
  Dims d = in[0].shape.dims;
  for (size_t i = 0; i < d.size(); ++i) {
    int64_t k =
        m ? m->as<int64_t>()[i] : (a.has(attr::multiples) ? a.ints(attr::multiples)[i] : -1);
    if (m) check(k >= 0, Status::invalid_argument, "tile: negative multiple ", k);
    if (k < 0) {
      if (d[i] != 0) d[i] = -1;
      continue;
    }
    check(d[i] < 0 || !__builtin_mul_overflow(d[i], k, &d[i]), Status::invalid_argument,
          "tile: multiple ", k, " is too large");
    if (k == 0) d[i] = 0;
  }
  return {in[0].dtype, Shape(d)};
}
TensorType infer_tile_to_types(const Ins& in, const Attrs& a) { return infer_tile_to(in, {}, a); }
NodePtr specialize_tile_to(const Node& n, const Values& v) {
  if (!v[1]) return nullptr;
  return make_node(ops::Tile, {n.inputs[0]}, {{attr::multiples, ints_of(*v[1])}});
}
Grads grad_tile_to(const NodePtr& n, const NodePtr& dy) {
  return {make_node(ops::TileToGrad, {dy, n->inputs[0], n->inputs[1]}), nullptr};
}
OpRegistrar r1({.name = "TileTo",
                .infer = infer_tile_to_types,
                .grad = grad_tile_to,
                .dynamic = true,
                .infer_values = infer_tile_to,
                .specialize = specialize_tile_to});

// TileToGrad(dy, x, multiples): dy summed over the tiles, in x's shape.
TensorType infer_tile_to_grad(const Ins& in, const Attrs&) {
  check_arity(in, 3, "tile");
  return {in[0].dtype, in[1].shape};
}
NodePtr specialize_tile_to_grad(const Node& n, const Values& v) {
  if (!v[2]) return nullptr;
  return make_node(ops::TileGrad, {n.inputs[0], n.inputs[1]}, {{attr::multiples, ints_of(*v[2])}});
}
Grads grad_tile_to_grad(const NodePtr& n, const NodePtr& dy) {
  return {make_node(ops::TileTo, {dy, n->inputs[2]}), nullptr, nullptr};
}
OpRegistrar r2({.name = "TileToGrad",
                .infer = infer_tile_to_grad,
                .grad = grad_tile_to_grad,
                .specialize = specialize_tile_to_grad});

// ---- RangeTo(start, stop, step), attribute dtype --------------------------------------------
TensorType infer_range_to(const Ins& in, const Values& v, const Attrs& a) {
  check_arity(in, 3, "arange");
  for (auto& t : in)
    check(
        t.shape.rank_known && t.shape.rank() == 0 && (is_integer(t.dtype) || is_floating(t.dtype)),
        Status::invalid_argument, "arange: start, stop and step must be numeric scalars, got ",
        dtype_name(t.dtype), t.shape.str());
  DType t = DType(a.i(attr::dtype));
  if (v.size() == 3 && v[0] && v[1] && v[2]) {
    auto b =
        range_values(read_scalar(v[0]->dtype, v[0]->data()), read_scalar(v[1]->dtype, v[1]->data()),
                     read_scalar(v[2]->dtype, v[2]->data()), t);
    return {t, Shape(b->dims)};
  }
  return {t, Shape(Dims{-1})};
}
TensorType infer_range_to_types(const Ins& in, const Attrs& a) { return infer_range_to(in, {}, a); }
NodePtr specialize_range_to(const Node& n, const Values& v) {
  if (!v[0] || !v[1] || !v[2]) return nullptr;
  return constant_node(
      range_values(read_scalar(v[0]->dtype, v[0]->data()), read_scalar(v[1]->dtype, v[1]->data()),
                   read_scalar(v[2]->dtype, v[2]->data()), DType(n.attrs.i(attr::dtype))));
}
OpRegistrar r3({.name = "RangeTo",
                .infer = infer_range_to_types,
                .dynamic = true,
                .infer_values = infer_range_to,
                .specialize = specialize_range_to});

// ---- SliceTo(x, start, size): Keras' slice, size -1 to the end ------------------------------
TensorType infer_slice_to(const Ins& in, const Values& v, const Attrs& a) {
  check_arity(in, 3, "slice");
  int64_t r = rank_of(in[0], "slice");
  check_vector(in[1], r, "slice", "start");
  check_vector(in[2], r, "slice", "size");
  const Dims& d = in[0].shape.dims;
  Dims out(size_t(r), -1);
  if (v.size() == 3 && v[1] && v[2]) {
    std::vector<int64_t> start = ints_of(*v[1]), size = ints_of(*v[2]);
    slice_attrs(d, start, size);  // checks them
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = size[i] >= 0 ? size[i] : (d[i] < 0 ? -1 : d[i] - start[i]);
  } else {  // the entries known now (attributes start and size, -2 where unknown)
    static const std::vector<int64_t> none;
    const auto& start = a.has(attr::start) ? a.ints(attr::start) : none;
    const auto& size = a.has(attr::size) ? a.ints(attr::size) : none;
    for (size_t i = 0; i < out.size() && i < start.size() && i < size.size(); ++i)
      if (size[i] >= 0)
        out[i] = size[i];
      else if (size[i] == -1 && start[i] >= 0 && d[i] >= 0)
        out[i] = d[i] - start[i];
  }
  return {in[0].dtype, Shape(out)};
}
TensorType infer_slice_to_types(const Ins& in, const Attrs& a) { return infer_slice_to(in, {}, a); }
NodePtr specialize_slice_to(const Node& n, const Values& v) {
  if (!v[1] || !v[2]) return nullptr;
  const NodePtr& x = n.inputs[0];
  return make_node(ops::StridedSlice, {x},
                   slice_attrs(x->shape().dims, ints_of(*v[1]), ints_of(*v[2])));
}
Grads grad_slice_to(const NodePtr& n, const NodePtr& dy) {
  return {make_node(ops::SliceToGrad, {dy, n->inputs[0], n->inputs[1], n->inputs[2]}), nullptr,
          nullptr};
}
OpRegistrar r4({.name = "SliceTo",
                .infer = infer_slice_to_types,
                .grad = grad_slice_to,
                .dynamic = true,
                .infer_values = infer_slice_to,
                .specialize = specialize_slice_to});

// SliceToGrad(dy, x, start, size): dy in a zero tensor of x's shape, where the slice was.
TensorType infer_slice_to_grad(const Ins& in, const Attrs&) {
  check_arity(in, 4, "slice");
  return {in[0].dtype, in[1].shape};
}
NodePtr specialize_slice_to_grad(const Node& n, const Values& v) {
  if (!v[2] || !v[3]) return nullptr;
  const NodePtr& x = n.inputs[1];
  return make_node(ops::StridedSliceGrad, {n.inputs[0], x},
                   slice_attrs(x->shape().dims, ints_of(*v[2]), ints_of(*v[3])));
}
Grads grad_slice_to_grad(const NodePtr& n, const NodePtr& dy) {
  return {make_node(ops::SliceTo, {dy, n->inputs[2], n->inputs[3]}), nullptr, nullptr, nullptr};
}
OpRegistrar r5({.name = "SliceToGrad",
                .infer = infer_slice_to_grad,
                .grad = grad_slice_to_grad,
                .specialize = specialize_slice_to_grad});

}  // namespace
}  // namespace kb
