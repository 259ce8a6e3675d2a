#include "core/ops/build.h"

#include <algorithm>
#include <cmath>

#include "core/graph/scalar.h"
#include "core/graph/session.h"
#include "core/ops/op.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace kb {

NodePtr make_node(OpName op_name, std::vector<NodePtr> inputs, Attrs attrs,
                  const std::string& name) {
  return make_node(op(op_name), std::move(inputs), std::move(attrs), name);
}

NodePtr make_node(const OpDef& def, std::vector<NodePtr> inputs, Attrs attrs,
                  const std::string& name) {
  const std::string& op_name = def.name;
  std::vector<TensorType> types;
  types.reserve(inputs.size());
  for (auto& in : inputs) {
    if (!in) fail(Status::invalid_argument, op_name, ": an input tensor is NULL");
    types.push_back(in->type);
  }
  auto n = std::make_shared<Node>();
  if (def.infer_values) {
    std::vector<const Buffer*> values;
    for (auto& in : inputs) values.push_back(in->is(ops::Constant) ? in->value.get() : nullptr);
    n->type = def.infer_values(types, values, attrs);
  } else {
    n->type = def.infer(types, attrs);
  }
  // Ranks grow through ops (dot of x with itself doubles it), and shape inference loops over
  // the dims: an unbounded rank made a few calls take minutes. TensorFlow's limit is 254; the
  // C ABI takes shapes of at most 64 dims.
  constexpr int64_t kMaxRank = 256;
  check(n->type.shape.rank() <= kMaxRank, Status::shape, op_name, ": the result would have rank ",
        n->type.shape.rank(), " (at most ", kMaxRank, ")");
  n->op = &def;
  n->inputs = std::move(inputs);
  n->attrs = std::move(attrs);
  Session& s = Session::get();
  n->id = s.next_node_id();
  n->name =
      name.empty() ? s.scoped_name(op_name + "_" + std::to_string(n->id)) : s.unique_name(name);
  for (auto& in : n->inputs)
    if (in->uses_learning_phase) n->uses_learning_phase = true;
  return n;
}

NodePtr make_leaf(OpName op_name, TensorType type, const std::string& name, Attrs attrs,
                  std::shared_ptr<Buffer> value) {
  auto n = std::make_shared<Node>();
  n->op = &op(op_name);
  const std::string& op_text = n->op->name;
  n->type = std::move(type);
  n->attrs = std::move(attrs);
  n->value = std::move(value);
  Session& s = Session::get();
  n->id = s.next_node_id();
  n->name =
      name.empty() ? s.scoped_name(op_text + "_" + std::to_string(n->id)) : s.unique_name(name);
  return n;
}

NodePtr constant_node(std::shared_ptr<Buffer> value, const std::string& name) {
  TensorType t{value->dtype, Shape(value->dims)};
  return make_leaf(ops::Constant, t, name, {}, std::move(value));
}

NodePtr scalar_constant(double v, DType t) {
  auto b = Buffer::make(t, {});
  write_scalar(t, b->data(), v);
  return constant_node(b);
}

NodePtr scalar_like(const NodePtr& x, double v) { return scalar_constant(v, x->dtype()); }

bool is_constant(const NodePtr& x) { return x && x->is(ops::Constant); }

bool is_scalar_constant(const NodePtr& x, double v) {
  return is_constant(x) && x->value->numel() == 1 && read_scalar(x->dtype(), x->value->data()) == v;
}

NodePtr unary(OpName op_name, const NodePtr& x) { return make_node(op_name, {x}); }
NodePtr binary(OpName op_name, const NodePtr& a, const NodePtr& b) {
  return make_node(op_name, {a, b});
}
NodePtr neg(const NodePtr& x) { return unary(ops::Neg, x); }
NodePtr add(const NodePtr& a, const NodePtr& b) { return binary(ops::Add, a, b); }
NodePtr sub(const NodePtr& a, const NodePtr& b) { return binary(ops::Sub, a, b); }
NodePtr mul(const NodePtr& a, const NodePtr& b) { return binary(ops::Mul, a, b); }
NodePtr div(const NodePtr& a, const NodePtr& b) { return binary(ops::Div, a, b); }
NodePtr pow_(const NodePtr& a, const NodePtr& b) { return binary(ops::Pow, a, b); }
NodePtr greater(const NodePtr& a, const NodePtr& b) { return binary(ops::Greater, a, b); }
NodePtr greater_equal(const NodePtr& a, const NodePtr& b) {
  return binary(ops::GreaterEqual, a, b);
}
NodePtr less(const NodePtr& a, const NodePtr& b) { return binary(ops::Less, a, b); }
NodePtr less_equal(const NodePtr& a, const NodePtr& b) { return binary(ops::LessEqual, a, b); }

NodePtr cast(const NodePtr& x, DType t) {
  if (x->dtype() == t) return x;
  return make_node(ops::Cast, {x}, {{attr::dtype, int64_t(t)}});
}

NodePtr select(const NodePtr& cond, const NodePtr& a, const NodePtr& b) {
  return make_node(ops::Select, {cond, a, b});
}

NodePtr reduce(const NodePtr& x, ReduceMode mode, std::vector<int64_t> axes, bool keepdims) {
  return make_node(
      ops::Reduce, {x},
      {{attr::mode, int64_t(mode)}, {attr::axes, axes}, {attr::keepdims, int64_t(keepdims)}});
}
NodePtr reduce_sum(const NodePtr& x, std::vector<int64_t> axes, bool keepdims) {
  return reduce(x, ReduceMode::sum, std::move(axes), keepdims);
}

NodePtr matmul(const NodePtr& a, const NodePtr& b, bool ta, bool tb) {
  return make_node(ops::MatMul, {a, b},
                   {{attr::transpose_a, int64_t(ta)}, {attr::transpose_b, int64_t(tb)}});
}

NodePtr transpose(const NodePtr& x, std::vector<int64_t> perm) {
  bool ident = true;
  for (size_t i = 0; i < perm.size(); ++i) ident = ident && perm[i] == int64_t(i);
  if (ident && int64_t(perm.size()) == x->rank()) return x;
  return make_node(ops::Transpose, {x}, {{attr::perm, perm}});
}

NodePtr reshape(const NodePtr& x, std::vector<int64_t> dims) {
  return make_node(ops::Reshape, {x}, {{attr::dims, dims}});
}
NodePtr reshape_like(const NodePtr& x, const NodePtr& like) {
  return make_node(ops::ReshapeLike, {x, like});
}
NodePtr expand_dims(const NodePtr& x, int64_t axis) {
  return make_node(ops::ExpandDims, {x}, {{attr::axis, axis}});
}
NodePtr squeeze(const NodePtr& x, int64_t axis) {
  return make_node(ops::Squeeze, {x}, {{attr::axis, axis}});
}
NodePtr broadcast_like(const NodePtr& x, const NodePtr& like) {
  return make_node(ops::BroadcastLike, {x, like});
}
NodePtr sum_to_like(const NodePtr& x, const NodePtr& like) {
  if (x->shape().fully_known() && x->shape() == like->shape()) return x;
  return make_node(ops::SumToLike, {x, like});
}
NodePtr fill_like(const NodePtr& x, double value, DType t) {
  return make_node(ops::FillLike, {x}, {{attr::value, value}, {attr::dtype, int64_t(t)}});
}
NodePtr zeros_like(const NodePtr& x) { return fill_like(x, 0.0, x->dtype()); }
NodePtr size_of(const NodePtr& x, std::vector<int64_t> axes, DType t) {
  return make_node(ops::SizeOf, {x}, {{attr::axes, axes}, {attr::dtype, int64_t(t)}});
}
NodePtr identity(const NodePtr& x) { return make_node(ops::Identity, {x}); }
NodePtr stop_gradient(const NodePtr& x) { return make_node(ops::StopGradient, {x}); }

NodePtr unreduce(const NodePtr& dy, const NodePtr& x, const std::vector<int64_t>& axes,
                 bool keepdims) {
  NodePtr g = dy;
  if (!keepdims) {
    std::vector<int64_t> all = axes;
    if (all.empty())
      for (int64_t i = 0; i < x->rank(); ++i) all.push_back(i);
    std::sort(all.begin(), all.end());
    for (int64_t a : all) g = expand_dims(g, a);
  }
  return broadcast_like(g, x);
}

std::shared_ptr<Buffer> range_values(double start, double stop, double step, DType t) {
  check(step != 0, Status::invalid_argument, "arange: step is zero");
  check(std::isfinite(start) && std::isfinite(step) && std::isfinite(stop),
        Status::invalid_argument, "arange: start, stop and step must be finite");
  double count = std::ceil((stop - start) / step);
  check(count < 0x1p62, Status::invalid_argument, "arange: ", count, " values are too many");
  int64_t n = count > 0 ? int64_t(count) : 0;
  // A range is filled on the host, often when a graph is built (one_hot's and a sparse
  // crossentropy's class range from a declared dim): past 1 GiB that is an allocation to refuse
  // with a message, not one to attempt.
  constexpr double kMaxRangeBytes = 0x1p30;
  check(double(n) * double(dtype_size(t)) <= kMaxRangeBytes, Status::out_of_memory, "arange: ", n,
        " values of ", dtype_name(t), " take more than the 1 GiB a range may");
  auto b = Buffer::make(t, {n});
  size_t es = dtype_size(t);
  for (int64_t i = 0; i < n; ++i)
    write_scalar(t, static_cast<char*>(b->data()) + i * int64_t(es), start + double(i) * step);
  return b;
}

Attrs slice_attrs(const Dims& d, const std::vector<int64_t>& start,
                  const std::vector<int64_t>& size) {
  int64_t r = int64_t(d.size());
  check(r <= 64, Status::invalid_argument, "slice: a tensor of rank ", r,
        " cannot be sliced (at most 64 axes)");
  check(int64_t(start.size()) == r && int64_t(size.size()) == r, Status::invalid_argument,
        "slice: start and size need ", r, " entries, got ", start.size(), " and ", size.size());
  std::vector<int64_t> end(static_cast<size_t>(r), 0), strides(static_cast<size_t>(r), 1);
  int64_t end_mask = 0;
  for (size_t i = 0; i < size_t(r); ++i) {
    check(start[i] >= 0 && (d[i] < 0 || start[i] <= d[i]), Status::invalid_argument,
          "slice: start ", start[i], " is out of range on axis ", i);
    check(size[i] >= -1, Status::invalid_argument, "slice: invalid size ", size[i]);
    if (size[i] == -1) {
      end_mask |= int64_t(1) << i;
    } else {
      // size <= d - start rather than start + size <= d, which overflows for huge sizes.
      check(d[i] < 0 || size[i] <= d[i] - start[i], Status::invalid_argument, "slice: start ",
            start[i], " + size ", size[i], " exceeds dimension ", d[i], " on axis ", i);
      end[i] = checked_add(start[i], size[i], "slice: start ", start[i], " + size ", size[i],
                           " overflows int64 on axis ", i);
    }
  }
  return {{attr::begin, start},       {attr::end, end},
          {attr::strides, strides},   {attr::begin_mask, int64_t(0)},
          {attr::end_mask, end_mask}, {attr::shrink_mask, int64_t(0)}};
}

NodePtr int64_vector(const std::vector<int64_t>& v) {
  auto b = Buffer::make(DType::i64, {int64_t(v.size())});
  for (size_t i = 0; i < v.size(); ++i) b->as<int64_t>()[i] = v[i];
  return constant_node(b);
}

NodePtr shape_vector(const NodePtr& x) { return cast(make_node(ops::ShapeOf, {x}), DType::i64); }

NodePtr reshape_to(const NodePtr& x, const NodePtr& target, const std::vector<int64_t>& known) {
  int unknown = 0;
  for (int64_t v : known) unknown += v < 0;
  if (unknown <= 1) return reshape(x, known);
  return make_node(ops::ReshapeTo, {x, target}, {{attr::dims, known}});
}

}  // namespace kb
