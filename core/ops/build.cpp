#include "core/ops/build.h"

#include <algorithm>
#include <cmath>

#include "core/graph/scalar.h"
#include "core/graph/session.h"
#include "core/ops/op.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace kb {

NodePtr make_node(const std::string& op_name, std::vector<NodePtr> inputs, Attrs attrs,
                  const std::string& name) {
  const OpDef& def = op(op_name);
  std::vector<TensorType> types;
  types.reserve(inputs.size());
  for (auto& in : inputs) {
    if (!in) fail(Status::invalid_argument, op_name, ": an input tensor is NULL");
    types.push_back(in->type);
  }
  auto n = std::make_shared<Node>();
  if (def.infer_values) {
    std::vector<const Buffer*> values;
    for (auto& in : inputs) values.push_back(in->is("Constant") ? in->value.get() : nullptr);
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

NodePtr make_leaf(const std::string& op_name, TensorType type, const std::string& name, Attrs attrs,
                  std::shared_ptr<Buffer> value) {
  auto n = std::make_shared<Node>();
  n->op = &op(op_name);
  n->type = std::move(type);
  n->attrs = std::move(attrs);
  n->value = std::move(value);
  Session& s = Session::get();
  n->id = s.next_node_id();
  n->name =
      name.empty() ? s.scoped_name(op_name + "_" + std::to_string(n->id)) : s.unique_name(name);
  return n;
}

NodePtr constant_node(std::shared_ptr<Buffer> value, const std::string& name) {
  TensorType t{value->dtype, Shape(value->dims)};
  return make_leaf("Constant", t, name, {}, std::move(value));
}

NodePtr scalar_constant(double v, DType t) {
  auto b = Buffer::make(t, {});
  write_scalar(t, b->data(), v);
  return constant_node(b);
}

NodePtr scalar_like(const NodePtr& x, double v) { return scalar_constant(v, x->dtype()); }

bool is_constant(const NodePtr& x) { return x && x->is("Constant"); }

bool is_scalar_constant(const NodePtr& x, double v) {
  return is_constant(x) && x->value->numel() == 1 && read_scalar(x->dtype(), x->value->data()) == v;
}

NodePtr unary(const std::string& op_name, const NodePtr& x) { return make_node(op_name, {x}); }
NodePtr binary(const std::string& op_name, const NodePtr& a, const NodePtr& b) {
  return make_node(op_name, {a, b});
}
NodePtr neg(const NodePtr& x) { return unary("Neg", x); }
NodePtr add(const NodePtr& a, const NodePtr& b) { return binary("Add", a, b); }
NodePtr sub(const NodePtr& a, const NodePtr& b) { return binary("Sub", a, b); }
NodePtr mul(const NodePtr& a, const NodePtr& b) { return binary("Mul", a, b); }
NodePtr div(const NodePtr& a, const NodePtr& b) { return binary("Div", a, b); }
NodePtr pow_(const NodePtr& a, const NodePtr& b) { return binary("Pow", a, b); }
NodePtr greater(const NodePtr& a, const NodePtr& b) { return binary("Greater", a, b); }
NodePtr greater_equal(const NodePtr& a, const NodePtr& b) { return binary("GreaterEqual", a, b); }
NodePtr less(const NodePtr& a, const NodePtr& b) { return binary("Less", a, b); }
NodePtr less_equal(const NodePtr& a, const NodePtr& b) { return binary("LessEqual", a, b); }

NodePtr cast(const NodePtr& x, DType t) {
  if (x->dtype() == t) return x;
  return make_node("Cast", {x}, {{"dtype", int64_t(t)}});
}

NodePtr select(const NodePtr& cond, const NodePtr& a, const NodePtr& b) {
  return make_node("Select", {cond, a, b});
}

NodePtr reduce(const NodePtr& x, ReduceMode mode, std::vector<int64_t> axes, bool keepdims) {
  return make_node("Reduce", {x},
                   {{"mode", int64_t(mode)}, {"axes", axes}, {"keepdims", int64_t(keepdims)}});
}
NodePtr reduce_sum(const NodePtr& x, std::vector<int64_t> axes, bool keepdims) {
  return reduce(x, ReduceMode::sum, std::move(axes), keepdims);
}

NodePtr matmul(const NodePtr& a, const NodePtr& b, bool ta, bool tb) {
  return make_node("MatMul", {a, b}, {{"transpose_a", int64_t(ta)}, {"transpose_b", int64_t(tb)}});
}

NodePtr transpose(const NodePtr& x, std::vector<int64_t> perm) {
  bool ident = true;
  for (size_t i = 0; i < perm.size(); ++i) ident = ident && perm[i] == int64_t(i);
  if (ident && int64_t(perm.size()) == x->rank()) return x;
  return make_node("Transpose", {x}, {{"perm", perm}});
}

NodePtr reshape(const NodePtr& x, std::vector<int64_t> dims) {
  return make_node("Reshape", {x}, {{"dims", dims}});
}
NodePtr reshape_like(const NodePtr& x, const NodePtr& like) {
  return make_node("ReshapeLike", {x, like});
}
NodePtr expand_dims(const NodePtr& x, int64_t axis) {
  return make_node("ExpandDims", {x}, {{"axis", axis}});
}
NodePtr squeeze(const NodePtr& x, int64_t axis) {
  return make_node("Squeeze", {x}, {{"axis", axis}});
}
NodePtr broadcast_like(const NodePtr& x, const NodePtr& like) {
  return make_node("BroadcastLike", {x, like});
}
NodePtr sum_to_like(const NodePtr& x, const NodePtr& like) {
  if (x->shape().fully_known() && x->shape() == like->shape()) return x;
  return make_node("SumToLike", {x, like});
}
NodePtr fill_like(const NodePtr& x, double value, DType t) {
  return make_node("FillLike", {x}, {{"value", value}, {"dtype", int64_t(t)}});
}
NodePtr zeros_like(const NodePtr& x) { return fill_like(x, 0.0, x->dtype()); }
NodePtr size_of(const NodePtr& x, std::vector<int64_t> axes, DType t) {
  return make_node("SizeOf", {x}, {{"axes", axes}, {"dtype", int64_t(t)}});
}
NodePtr identity(const NodePtr& x) { return make_node("Identity", {x}); }
NodePtr stop_gradient(const NodePtr& x) { return make_node("StopGradient", {x}); }

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
  return {{"begin", start},           {"end", end},           {"strides", strides},
          {"begin_mask", int64_t(0)}, {"end_mask", end_mask}, {"shrink_mask", int64_t(0)}};
}

NodePtr int64_vector(const std::vector<int64_t>& v) {
  auto b = Buffer::make(DType::i64, {int64_t(v.size())});
  for (size_t i = 0; i < v.size(); ++i) b->as<int64_t>()[i] = v[i];
  return constant_node(b);
}

NodePtr shape_vector(const NodePtr& x) { return cast(make_node("ShapeOf", {x}), DType::i64); }

NodePtr reshape_to(const NodePtr& x, const NodePtr& target, const std::vector<int64_t>& known) {
  int unknown = 0;
  for (int64_t v : known) unknown += v < 0;
  if (unknown <= 1) return reshape(x, known);
  return make_node("ReshapeTo", {x, target}, {{"dims", known}});
}

}  // namespace kb
