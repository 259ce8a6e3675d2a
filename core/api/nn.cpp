// linalg (dot, batch_dot, transpose) and nn (activations, losses, l2_normalize, bias_add,
// in_top_k), as compositions of primitives.
#include <cmath>

#include "core/api/api.h"
#include "core/api/sparse.h"
#include "core/ops/build.h"
#include "core/ops/infer_util.h"
#include "core/util/error.h"

namespace kb::api {

static int64_t rank_of(const NodePtr& x, const char* who, const char* what) {
  require(x, who, what);
  check(x->shape().rank_known, Status::shape, who, ": the rank of ", what, " is unknown");
  return x->rank();
}

NodePtr dot(const NodePtr& x, const NodePtr& y) {
  int64_t rx = rank_of(x, "dot", "x"), ry = rank_of(y, "dot", "y");
  if (is_sparse(x) && rx == 2) return sparse_dot(x, y);
  if (rx <= 2 && ry <= 2) {
    check(rx == 2 && ry == 2, Status::shape,
          "dot: operands of rank <= 2 must both be matrices, got ", x->shape().str(), " and ",
          y->shape().str());
    return matmul(x, y, false, false);
  }
  check(ry >= 2, Status::shape, "dot: y must have rank >= 2, got ", y->shape().str());
  check(rx >= 1, Status::shape, "dot: x must have rank >= 1");
  const Dims& xd = x->shape().dims;
  const Dims& yd = y->shape().dims;
  int64_t k = xd[rx - 1];
  check(k < 0 || yd[ry - 2] < 0 || k == yd[ry - 2], Status::shape, "dot: shapes ", x->shape().str(),
        " and ", y->shape().str(), " are not aligned");
  k = k >= 0 ? k : yd[ry - 2];
  check(k >= 0, Status::not_implemented, "dot: the contracted dimension of ", x->shape().str(),
        " and ", y->shape().str(), " must be known");
  // x -> (-1, k); y -> (k, rest) with y's contracted axis moved to the front.
  NodePtr x2 = kb::reshape(x, {-1, k});
  std::vector<int64_t> perm{ry - 2};
  for (int64_t i = 0; i < ry; ++i)
    if (i != ry - 2) perm.push_back(i);
  NodePtr y2 = kb::reshape(kb::transpose(y, perm), {k, -1});
  NodePtr out = matmul(x2, y2, false, false);
  if (!y->shape().fully_known()) {
    // The result's dims, x's leading ones and y's but the contracted one, as they are when the
    // function runs.
    std::vector<int64_t> lead(size_t(rx - 1)), rest(perm.begin() + 1, perm.end());
    for (int64_t i = 0; i + 1 < rx; ++i) lead[size_t(i)] = i;
    NodePtr target = make_node(ops::Concat,
                               {make_node(ops::Gather, {shape_vector(x), int64_vector(lead)}),
                                make_node(ops::Gather, {shape_vector(y), int64_vector(rest)})},
                               {{attr::axis, int64_t(0)}});
    Dims known(xd.begin(), xd.end() - 1);
    for (int64_t i : rest) known.push_back(yd[size_t(i)]);
    return kb::reshape_to(out, target, known);
  }
  // (rows, rest) -> (rows, y's dims but the contracted one), then rows split into x's leading
  // axes as x has them when the function runs: any number of them may be unknown now.
  Dims rows_then_y{-1};
  rows_then_y.insert(rows_then_y.end(), yd.begin(), yd.end() - 2);
  rows_then_y.push_back(yd[ry - 1]);
  out = kb::reshape(out, rows_then_y);
  if (rx == 1) return kb::squeeze(out, 0);
  if (rx == 2) return out;
  return make_node(ops::ReshapeLike, {out, x}, {{attr::keep, rx - 1}});
}

NodePtr batch_dot(const NodePtr& x0, const NodePtr& y0,
                  std::optional<std::pair<int64_t, int64_t>> axes_opt) {
  int64_t xn = rank_of(x0, "batch_dot", "x"), yn = rank_of(y0, "batch_dot", "y");
  check(xn >= 2 && yn >= 2, Status::shape, "batch_dot: operands need rank >= 2, got ",
        x0->shape().str(), " and ", y0->shape().str());
  std::pair<int64_t, int64_t> axes = axes_opt ? *axes_opt : std::make_pair(xn - 1, yn - 2);
  NodePtr x = x0, y = y0;
  int64_t diff = 0;
  if (xn > yn) {
    diff = xn - yn;
    for (int64_t i = 0; i < diff; ++i) y = kb::expand_dims(y, y->rank());
  } else if (yn > xn) {
    diff = yn - xn;
    for (int64_t i = 0; i < diff; ++i) x = kb::expand_dims(x, x->rank());
  }
  int64_t r = x->rank();
  NodePtr out;
  if (r == 2) {
    if (axes.first == axes.second) {
      int64_t ax = normalize_axis(axes.first, 2, "batch_dot");
      out = reduce_sum(mul(x, y), {ax}, false);
    } else {
      int64_t ax = normalize_axis(axes.second, 2, "batch_dot");
      out = reduce_sum(mul(kb::transpose(x, {1, 0}), y), {ax}, false);
    }
  } else {
    bool adj_x = axes.first != r - 1;
    bool adj_y = axes.second == r - 1;
    out = matmul(x, y, adj_x, adj_y);
  }
  if (diff) {
    int64_t idx = xn > yn ? xn + yn - 3 : xn - 1;
    for (int64_t i = 0; i < diff; ++i) out = kb::squeeze(out, idx);
  }
  if (out->rank() == 1) out = kb::expand_dims(out, 1);
  return out;
}

NodePtr transpose(const NodePtr& x) {
  int64_t r = rank_of(x, "transpose", "x");
  std::vector<int64_t> perm;
  for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
  return kb::transpose(x, perm);
}

// ---- activations ----------------------------------------------------------------------------
static void need_float(const NodePtr& x, const char* who) {
  require(x, who, "x");
  check(is_floating(x->dtype()), Status::dtype, who, ": expected a floating dtype, got ",
        dtype_name(x->dtype()));
}

NodePtr relu(const NodePtr& x, double alpha, std::optional<double> max_value, double threshold) {
  need_float(x, "relu");
  if (max_value) check(!std::isnan(*max_value), Status::invalid_argument, "relu: max_value is NaN");
  if (alpha != 0 && !max_value && threshold == 0)
    return binary(ops::Maximum, mul(scalar_like(x, alpha), x), x);
  NodePtr y;
  if (threshold != 0)
    y = mul(x, kb::cast(greater(x, scalar_like(x, threshold)), x->dtype()));
  else
    y = unary(ops::Relu, x);
  if (max_value)
    y = binary(ops::Minimum, binary(ops::Maximum, y, scalar_like(x, 0.0)),
               scalar_like(x, *max_value));
  if (alpha != 0)
    y = sub(y, mul(scalar_like(x, alpha), unary(ops::Relu, sub(scalar_like(x, threshold), x))));
  return y;
}

NodePtr elu(const NodePtr& x, double alpha) {
  need_float(x, "elu");
  // exp of min(x, 0) keeps the unused branch finite, so its gradient cannot turn into NaN.
  NodePtr neg_part =
      mul(scalar_like(x, alpha),
          sub(unary(ops::Exp, binary(ops::Minimum, x, scalar_like(x, 0.0))), scalar_like(x, 1.0)));
  return select(greater(x, scalar_like(x, 0.0)), x, neg_part);
}

NodePtr sigmoid(const NodePtr& x) {
  need_float(x, "sigmoid");
  return unary(ops::Sigmoid, x);
}
NodePtr tanh(const NodePtr& x) {
  need_float(x, "tanh");
  return unary(ops::Tanh, x);
}
NodePtr softplus(const NodePtr& x) {
  need_float(x, "softplus");
  return unary(ops::Softplus, x);
}

NodePtr hard_sigmoid(const NodePtr& x) {
  need_float(x, "hard_sigmoid");
  return clip(add(mul(x, scalar_like(x, 0.2)), scalar_like(x, 0.5)), 0.0, 1.0);
}

NodePtr softsign(const NodePtr& x) {
  need_float(x, "softsign");
  return div(x, add(scalar_like(x, 1.0), unary(ops::Abs, x)));
}

NodePtr softmax(const NodePtr& x, int64_t axis) {
  need_float(x, "softmax");
  int64_t r = rank_of(x, "softmax", "x");
  check(r >= 1, Status::shape, "softmax: the input needs rank >= 1");
  return make_node(ops::Softmax, {x}, {{attr::axis, normalize_axis(axis, r, "softmax")}});
}

// ---- losses ---------------------------------------------------------------------------------
static int64_t loss_axis(int64_t axis, int64_t r, const char* who) {
  check(axis == -1 || (axis >= 0 && axis < r), Status::invalid_argument, who, ": axis ", axis,
        " must be -1 or in [0, ", r, ")");
  return axis < 0 ? r - 1 : axis;
}

NodePtr categorical_crossentropy(const NodePtr& target, const NodePtr& output, bool from_logits,
                                 int64_t axis) {
  const char* who = "categorical_crossentropy";
  need_float(output, who);
  require(target, who, "target");
  int64_t r = rank_of(output, who, "output");
  int64_t ax = loss_axis(axis, r, who);
  check(target->dtype() == output->dtype(), Status::dtype, who, ": target dtype ",
        dtype_name(target->dtype()), " differs from output dtype ", dtype_name(output->dtype()));
  if (from_logits) {
    NodePtr ls = make_node(ops::LogSoftmax, {output}, {{attr::axis, r - 1}});
    return neg(reduce_sum(mul(kb::stop_gradient(target), ls), {r - 1}, false));
  }
  double eps = Session::get().epsilon();
  NodePtr p = div(output, reduce_sum(output, {ax}, true));
  p = clip(p, eps, 1.0 - eps);
  return neg(reduce_sum(mul(target, unary(ops::Log, p)), {ax}, false));
}

NodePtr sparse_categorical_crossentropy(const NodePtr& target, const NodePtr& output,
                                        bool from_logits, int64_t axis) {
  const char* who = "sparse_categorical_crossentropy";
  need_float(output, who);
  require(target, who, "target");
  int64_t r = rank_of(output, who, "output");
  check(r >= 1, Status::shape, who, ": output needs rank >= 1");
  int64_t ax = loss_axis(axis, r, who);
  NodePtr out = output;
  if (ax != r - 1) {
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < r; ++i)
      if (i != ax) perm.push_back(i);
    perm.push_back(ax);
    out = kb::transpose(out, perm);
  }
  int64_t classes = out->shape().dims[r - 1];
  // The classes' count and range as they are when the function runs, where unknown now.
  NodePtr class_range, logits_shape;
  if (classes >= 0) {
    class_range = arange(0, double(classes), 1, DType::i64);
  } else {
    NodePtr count =
        make_node(ops::Gather, {shape_vector(out), scalar_constant(double(r - 1), DType::i64)});
    class_range = arange_to(scalar_constant(0, DType::i64), count, scalar_constant(1, DType::i64),
                            DType::i64);
    logits_shape = make_node(ops::Concat, {int64_vector({-1}), kb::expand_dims(count, 0)},
                             {{attr::axis, int64_t(0)}});
  }
  if (!from_logits) {
    double eps = Session::get().epsilon();
    out = unary(ops::Log, clip(out, eps, 1.0 - eps));
  }
  check(is_integer(target->dtype()) || is_floating(target->dtype()), Status::dtype, who,
        ": target must be numeric");
  NodePtr t = kb::cast(kb::reshape(target, {-1}), DType::i64);
  NodePtr logits =
      logits_shape ? kb::reshape_to(out, logits_shape, {-1, -1}) : kb::reshape(out, {-1, classes});
  NodePtr ls = make_node(ops::LogSoftmax, {logits}, {{attr::axis, int64_t(1)}});
  // The target's log-probability picked, not a one-hot product: 0 * -inf at a class of no
  // probability would make the loss NaN (TensorFlow's sparse kernel picks it too).
  NodePtr is_target = binary(ops::Equal, kb::expand_dims(t, 1), class_range);
  NodePtr loss = neg(reduce_sum(select(is_target, ls, zeros_like(ls)), {1}, false));
  // One loss per leading position of the output, as many of them unknown as may be.
  if (r >= 3) loss = make_node(ops::ReshapeLike, {loss, out}, {{attr::keep, r - 1}});
  return loss;
}

NodePtr binary_crossentropy(const NodePtr& target, const NodePtr& output, bool from_logits) {
  const char* who = "binary_crossentropy";
  need_float(output, who);
  require(target, who, "target");
  check(target->dtype() == output->dtype(), Status::dtype, who, ": target dtype ",
        dtype_name(target->dtype()), " differs from output dtype ", dtype_name(output->dtype()));
  NodePtr z = output;
  if (!from_logits) {
    double eps = Session::get().epsilon();
    NodePtr p = clip(output, eps, 1.0 - eps);
    z = unary(ops::Log, div(p, sub(scalar_like(p, 1.0), p)));
  }
  // max(z, 0) - z * t + log(1 + exp(-|z|)): stable for any z.
  NodePtr zero = scalar_like(z, 0.0);
  return add(sub(binary(ops::Maximum, z, zero), mul(z, target)),
             unary(ops::Log1p, unary(ops::Exp, neg(unary(ops::Abs, z)))));
}

NodePtr l2_normalize(const NodePtr& x, const Axes& axes) {
  need_float(x, "l2_normalize");
  NodePtr ss = sum(mul(x, x), axes, true);
  return div(x, unary(ops::Sqrt, binary(ops::Maximum, ss, scalar_like(x, 1e-12))));
}

NodePtr bias_add(const NodePtr& x, const NodePtr& bias, DataFormat data_format) {
  int64_t r = rank_of(x, "bias_add", "x");
  int64_t br = rank_of(bias, "bias_add", "bias");
  check(r >= 2, Status::shape, "bias_add: x must have rank >= 2, got ", x->shape().str());
  check(x->dtype() == bias->dtype(), Status::dtype, "bias_add: dtypes differ (",
        dtype_name(x->dtype()), " and ", dtype_name(bias->dtype()), ")");
  check(br == 1 || br == r - 1, Status::shape, "bias_add: unexpected bias dimensions ",
        bias->shape().str(), ", expected rank 1 or ", r - 1);
  const Dims& bd = bias->shape().dims;
  bool first = data_format == DataFormat::channels_first && r >= 3 && r <= 5;
  int64_t channel_axis = first ? 1 : r - 1;
  int64_t c = x->shape().dims[channel_axis];
  int64_t bc = br == 1 ? bd[0] : bd[br - 1];
  check(c < 0 || bc < 0 || c == bc, Status::shape, "bias_add: bias of ", bc, " channels for input ",
        x->shape().str());
  if (!first) {
    if (br == 1 && r >= 2) return add(x, bias);
    return add(x, kb::expand_dims(bias, 0));
  }
  Dims target(r, 1);
  if (br == 1) {
    target[1] = bd[0];
  } else {
    // Keras reshapes (not transposes) a full bias (spatial..., C) to (1, C, spatial...).
    target[1] = bd[br - 1];
    for (int64_t i = 0; i + 1 < br; ++i) target[2 + i] = bd[i];
    for (auto v : target) check(v >= 0, Status::shape, "bias_add: the bias shape must be known");
  }
  return add(x, kb::reshape(bias, target));
}

NodePtr in_top_k(const NodePtr& predictions, const NodePtr& targets, int64_t k) {
  require(predictions, "in_top_k", "predictions");
  require(targets, "in_top_k", "targets");
  return make_node(ops::InTopK, {predictions, targets}, {{attr::k, k}});
}

}  // namespace kb::api
