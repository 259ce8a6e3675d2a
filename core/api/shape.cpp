// shape functions: concatenate, reshape, permute, repeat, tile, flatten, expand/squeeze, stack,
// one_hot, reverse, slice, gather, strided slicing, shape.
#include "core/api/api.h"

#include <optional>

#include "core/api/sparse.h"
#include "core/graph/scalar.h"
#include "core/ops/build.h"
#include "core/ops/infer_util.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace kb::api {

static int64_t known_rank(const NodePtr& x, const char* who) {
  require(x, who, "x");
  check(x->shape().rank_known, Status::shape, who, ": the input rank is unknown");
  return x->rank();
}

NodePtr concatenate(const Tensors& xs, int64_t axis) {
  check(!xs.empty(), Status::invalid_argument, "concatenate: no tensors given");
  for (size_t i = 0; i < xs.size(); ++i)
    check(xs[i] != nullptr, Status::invalid_argument, "concatenate: tensor ", i, " is NULL");
  int64_t r = known_rank(xs[0], "concatenate");
  check(r > 0, Status::shape, "concatenate: scalars cannot be concatenated");
  if (axis < 0) axis = ((axis % r) + r) % r;
  check(axis < r, Status::invalid_argument, "concatenate: axis ", axis,
        " is out of range for rank ", r);
  if (xs.size() == 1) return xs[0];
  bool all_sparse = true;
  for (auto& x : xs) all_sparse = all_sparse && is_sparse(x);
  if (all_sparse) return sparse_concatenate(xs, axis);
  return make_node(ops::Concat, xs, {{attr::axis, axis}});
}

NodePtr reshape(const NodePtr& x, const Dims& shape) {
  require(x, "reshape", "x");
  return kb::reshape(x, shape);
}

// The entries of an integer vector known now, `unknown` elsewhere: where the vector is a stack
// of scalars (as Keras writes (K.shape(x)[0], -1, 3)), those that static values determine.
static Dims entries_now(const NodePtr& v, int64_t unknown) {
  Dims known(size_t(v->shape().dims[0]), unknown);
  const Tensors* entries = v->is(ops::Concat) ? &v->inputs : nullptr;
  if (entries && entries->size() == known.size())
    for (size_t i = 0; i < known.size(); ++i) {
      const NodePtr& e = (*entries)[i];
      if (e->is(ops::ExpandDims) && e->inputs[0]->rank() == 0)
        if (auto d = static_scalar(e->inputs[0])) known[i] = int64_t(*d);
    }
  return known;
}

// An integer vector argument of `n` entries (n < 0: of any known length), as int64.
static NodePtr int64_argument(const NodePtr& v, int64_t n, const char* who, const char* what) {
  require(v, who, what);
  const Shape& s = v->shape();
  check(is_integer(v->dtype()) && s.rank_known && s.rank() == 1 && s.dims[0] >= 0 &&
            (n < 0 || s.dims[0] == n),
        Status::invalid_argument, who, ": ", what, " must be an integer vector of ",
        n < 0 ? std::string("known length") : std::to_string(n) + " entries", ", got ",
        dtype_name(v->dtype()), s.str());
  return kb::cast(v, DType::i64);
}

NodePtr reshape_to(const NodePtr& x, const NodePtr& shape) {
  require(x, "reshape", "x");
  NodePtr target = int64_argument(shape, -1, "reshape", "the shape");
  // Known now (a stack of numbers, of dims known when the graph is built): a plain reshape.
  if (auto now = static_ints(target)) return kb::reshape(x, *now);
  return make_node(ops::ReshapeTo, {x, target}, {{attr::dims, entries_now(shape, -1)}});
}

NodePtr permute_dimensions(const NodePtr& x, const std::vector<int64_t>& pattern) {
  require(x, "permute_dimensions", "x");
  return make_node(ops::Transpose, {x}, {{attr::perm, pattern}});
}

NodePtr repeat_elements(const NodePtr& x, int64_t rep, int64_t axis) {
  int64_t r = known_rank(x, "repeat_elements");
  check(r >= 1, Status::shape, "repeat_elements: the input needs rank >= 1");
  check(rep >= 0, Status::invalid_argument, "repeat_elements: negative repetition count ", rep);
  int64_t ax = normalize_axis(axis, r, "repeat_elements");
  NodePtr e = kb::expand_dims(x, ax + 1);
  std::vector<int64_t> mult(r + 1, 1);
  mult[ax + 1] = rep;
  NodePtr t = make_node(ops::Tile, {e}, {{attr::multiples, mult}});
  Dims d = x->shape().dims;
  check(d[ax] < 0 || !__builtin_mul_overflow(d[ax], rep, &d[ax]), Status::invalid_argument,
        "repeat_elements: repetition count ", rep, " is too large");
  Dims times(size_t(r), 1);
  times[size_t(ax)] = rep;
  return kb::reshape_to(t, mul(shape_vector(x), int64_vector(times)), d);
}

NodePtr repeat(const NodePtr& x, int64_t n) {
  int64_t r = known_rank(x, "repeat");
  check(r == 2, Status::shape, "repeat: the input must have rank 2, got ", x->shape().str());
  check(n >= 0, Status::invalid_argument, "repeat: negative count ", n);
  return make_node(ops::Tile, {kb::expand_dims(x, 1)},
                   {{attr::multiples, std::vector<int64_t>{1, n, 1}}});
}

NodePtr tile(const NodePtr& x, const std::vector<int64_t>& n) {
  int64_t r = known_rank(x, "tile");
  check(int64_t(n.size()) == r, Status::invalid_argument, "tile: ", n.size(),
        " repetition counts for a tensor of rank ", r);
  return make_node(ops::Tile, {x}, {{attr::multiples, n}});
}

NodePtr tile_to(const NodePtr& x, const NodePtr& n) {
  int64_t r = known_rank(x, "tile");
  NodePtr m = int64_argument(n, r, "tile", "n");
  if (auto now = static_ints(m)) return tile(x, *now);
  return make_node(ops::TileTo, {x, m}, {{attr::multiples, entries_now(n, -1)}});
}

NodePtr slice_to(const NodePtr& x, const NodePtr& start, const NodePtr& size) {
  int64_t r = known_rank(x, "slice");
  NodePtr b = int64_argument(start, r, "slice", "start");
  NodePtr z = int64_argument(size, r, "slice", "size");
  auto b_now = static_ints(b), z_now = static_ints(z);
  if (b_now && z_now) return slice(x, *b_now, *z_now);
  return make_node(ops::SliceTo, {x, b, z},
                   {{attr::start, entries_now(start, -2)}, {attr::size, entries_now(size, -2)}});
}

NodePtr flatten(const NodePtr& x) {
  require(x, "flatten", "x");
  return kb::reshape(x, {-1});
}

NodePtr batch_flatten(const NodePtr& x) {
  int64_t r = known_rank(x, "batch_flatten");
  check(r >= 1, Status::shape, "batch_flatten: the input needs rank >= 1");
  Dims d = x->shape().dims;
  int64_t rest = 1;
  bool rest_known = true;
  for (int64_t i = 1; i < r; ++i) {
    if (d[i] < 0)
      rest_known = false;
    else
      rest = checked_mul(rest, d[i], "batch_flatten: the trailing dimensions of ", dims_str(d),
                         " hold more than INT64_MAX elements");
  }
  if (rest_known) return kb::reshape(x, {-1, rest});
  NodePtr batch = make_node(ops::Gather, {shape_vector(x), int64_vector({0})});
  NodePtr target = make_node(ops::Concat, {batch, int64_vector({-1})}, {{attr::axis, int64_t(0)}});
  return kb::reshape_to(x, target, {d[0], -1});
}

NodePtr expand_dims(const NodePtr& x, int64_t axis) {
  int64_t r = known_rank(x, "expand_dims");
  if (axis < 0) axis += r + 1;
  check(axis >= 0 && axis <= r, Status::invalid_argument, "expand_dims: axis ", axis,
        " is out of range for rank ", r);
  return kb::expand_dims(x, axis);
}

NodePtr squeeze(const NodePtr& x, int64_t axis) {
  int64_t r = known_rank(x, "squeeze");
  return kb::squeeze(x, normalize_axis(axis, r, "squeeze"));
}

NodePtr stack(const Tensors& xs, int64_t axis) {
  check(!xs.empty(), Status::invalid_argument, "stack: no tensors given");
  int64_t r = known_rank(xs[0], "stack");
  if (axis < 0) axis += r + 1;
  check(axis >= 0 && axis <= r, Status::invalid_argument, "stack: axis ", axis,
        " is out of range for rank ", r + 1);
  Tensors parts;
  for (size_t i = 0; i < xs.size(); ++i) {
    check(xs[i] != nullptr, Status::invalid_argument, "stack: tensor ", i, " is NULL");
    check(xs[i]->rank() == r, Status::shape, "stack: tensors have different ranks");
    parts.push_back(kb::expand_dims(xs[i], axis));
  }
  if (parts.size() == 1) return parts[0];
  return make_node(ops::Concat, parts, {{attr::axis, axis}});
}

NodePtr one_hot(const NodePtr& indices, int64_t num_classes) {
  require(indices, "one_hot", "indices");
  check(is_integer(indices->dtype()), Status::dtype, "one_hot: indices must be integers, got ",
        dtype_name(indices->dtype()));
  check(num_classes >= 1, Status::invalid_argument, "one_hot: num_classes must be >= 1, got ",
        num_classes);
  known_rank(indices, "one_hot");
  NodePtr idx = kb::expand_dims(kb::cast(indices, DType::i64), indices->rank());
  NodePtr classes = arange(0, double(num_classes), 1, DType::i64);
  return kb::cast(binary(ops::Equal, idx, classes), DType::f32);
}

NodePtr one_hot_to(const NodePtr& indices, const NodePtr& num_classes) {
  require(indices, "one_hot", "indices");
  require(num_classes, "one_hot", "num_classes");
  check(is_integer(indices->dtype()), Status::dtype, "one_hot: indices must be integers, got ",
        dtype_name(indices->dtype()));
  check(is_integer(num_classes->dtype()) && num_classes->shape().rank_known &&
            num_classes->rank() == 0,
        Status::invalid_argument, "one_hot: num_classes must be an integer scalar, got ",
        dtype_name(num_classes->dtype()), num_classes->shape().str());
  known_rank(indices, "one_hot");
  NodePtr idx = kb::expand_dims(kb::cast(indices, DType::i64), indices->rank());
  NodePtr classes = arange_to(scalar_constant(0, DType::i64), num_classes,
                              scalar_constant(1, DType::i64), DType::i64);
  return kb::cast(binary(ops::Equal, idx, classes), DType::f32);
}

NodePtr reverse(const NodePtr& x, const std::vector<int64_t>& axes) {
  int64_t r = known_rank(x, "reverse");
  auto ax = normalize_axes(axes, r, "reverse");
  return make_node(ops::Reverse, {x}, {{attr::axes, ax}});
}

NodePtr slice(const NodePtr& x, const std::vector<int64_t>& start,
              const std::vector<int64_t>& size) {
  known_rank(x, "slice");
  return make_node(ops::StridedSlice, {x}, slice_attrs(x->shape().dims, start, size));
}

NodePtr gather(const NodePtr& reference, const NodePtr& indices) {
  require(reference, "gather", "reference");
  require(indices, "gather", "indices");
  check(is_integer(indices->dtype()), Status::dtype, "gather: indices must be integers, got ",
        dtype_name(indices->dtype()));
  NodePtr idx = indices->dtype() == DType::i32 || indices->dtype() == DType::i64
                    ? indices
                    : kb::cast(indices, DType::i64);
  return make_node(ops::Gather, {reference, idx});
}

NodePtr strided_slice(const NodePtr& x, const std::vector<int64_t>& begin,
                      const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                      int64_t begin_mask, int64_t end_mask, int64_t shrink_mask,
                      int64_t new_axis_mask) {
  int64_t r = known_rank(x, "strided_slice");
  size_t n = begin.size();
  check(end.size() == n && strides.size() == n, Status::invalid_argument,
        "strided_slice: begin, end and strides differ in length");
  check(n <= 64, Status::invalid_argument, "strided_slice: ", n,
        " slice entries (the masks have 64 bits)");
  // New axes first become size-1 axes of the input; then every axis has one slice entry.
  NodePtr v = x;
  std::vector<int64_t> b, e, s;
  int64_t bm = 0, em = 0, sm = 0;
  size_t axis = 0;
  for (size_t i = 0; i < n; ++i) {
    if ((new_axis_mask >> i) & 1) {
      v = kb::expand_dims(v, int64_t(axis));
      b.push_back(0), e.push_back(1), s.push_back(1);
    } else {
      b.push_back(begin[i]), e.push_back(end[i]), s.push_back(strides[i]);
      if ((begin_mask >> i) & 1) bm |= int64_t(1) << axis;
      if ((end_mask >> i) & 1) em |= int64_t(1) << axis;
      if ((shrink_mask >> i) & 1) sm |= int64_t(1) << axis;
    }
    ++axis;
  }
  int64_t vr = v->rank();
  check(int64_t(b.size()) <= vr, Status::invalid_argument, "strided_slice: ", n,
        " slice entries for a tensor of rank ", r);
  // The masks hold one bit per axis.
  check(vr <= 64, Status::invalid_argument, "strided_slice: a tensor of rank ", vr,
        " cannot be sliced (at most 64 axes)");
  while (int64_t(b.size()) < vr) {  // remaining axes are taken whole
    bm |= int64_t(1) << b.size();
    em |= int64_t(1) << b.size();
    b.push_back(0), e.push_back(0), s.push_back(1);
  }
  return make_node(ops::StridedSlice, {v},
                   {{attr::begin, b},
                    {attr::end, e},
                    {attr::strides, s},
                    {attr::begin_mask, bm},
                    {attr::end_mask, em},
                    {attr::shrink_mask, sm}});
}

NodePtr shape(const NodePtr& x) {
  require(x, "shape", "x");
  check(x->shape().rank_known, Status::shape, "shape: the input rank is unknown");
  return make_node(ops::ShapeOf, {x});
}

}  // namespace kb::api
