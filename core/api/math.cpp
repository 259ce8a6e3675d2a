// elementwise and reduce functions.
#include <cmath>
#include <limits>

#include "core/api/api.h"
#include "core/ops/build.h"
#include "core/ops/infer_util.h"
#include "core/util/error.h"

namespace kb::api {

NodePtr unary_op(const char* who, OpName primitive, const NodePtr& x) {
  require(x, who, "x");
  try {
    return unary(primitive, x);
  } catch (const Error& e) {
    std::string m = e.what();
    // Name the Keras function rather than the primitive.
    auto colon = m.find(':');
    fail(e.code(), who, colon == std::string::npos ? ": " + m : m.substr(colon));
  }
}

NodePtr square(const NodePtr& x) { return unary_op("square", ops::Square, x); }
NodePtr abs(const NodePtr& x) { return unary_op("abs", ops::Abs, x); }
NodePtr sqrt(const NodePtr& x) {
  require(x, "sqrt", "x");
  check(is_floating(x->dtype()), Status::dtype, "sqrt: expected a floating dtype, got ",
        dtype_name(x->dtype()));
  // Keras clips to [0, inf) first, so sqrt of a negative number is 0.
  return unary(ops::Sqrt, binary(ops::Maximum, x, scalar_like(x, 0.0)));
}
NodePtr exp(const NodePtr& x) { return unary_op("exp", ops::Exp, x); }
NodePtr log(const NodePtr& x) { return unary_op("log", ops::Log, x); }
NodePtr round(const NodePtr& x) {
  require(x, "round", "x");
  if (is_integer(x->dtype())) return x;  // tf.round returns an integer tensor unchanged
  return unary_op("round", ops::Round, x);
}
NodePtr sign(const NodePtr& x) { return unary_op("sign", ops::Sign, x); }
NodePtr sin(const NodePtr& x) { return unary_op("sin", ops::Sin, x); }
NodePtr cos(const NodePtr& x) { return unary_op("cos", ops::Cos, x); }
NodePtr erf(const NodePtr& x) { return unary_op("erf", ops::Erf, x); }
NodePtr negative(const NodePtr& x) { return unary_op("negative", ops::Neg, x); }

NodePtr pow(const NodePtr& x, double a) {
  require(x, "pow", "x");
  check(is_floating(x->dtype()), Status::dtype, "pow: expected a floating dtype, got ",
        dtype_name(x->dtype()));
  return binary(ops::Pow, x, scalar_like(x, a));
}

NodePtr clip(const NodePtr& x, double min_value, double max_value) {
  require(x, "clip", "x");
  check(!std::isnan(min_value) && !std::isnan(max_value), Status::invalid_argument,
        "clip: bounds must not be NaN");
  check(!is_bool(x->dtype()), Status::dtype, "clip: bool input is not supported");
  if (max_value < min_value) max_value = min_value;
  NodePtr y = binary(ops::Maximum, x, scalar_like(x, min_value));
  if (std::isinf(max_value) && max_value > 0) return y;
  return binary(ops::Minimum, y, scalar_like(x, max_value));
}

NodePtr binary_op(const char* who, OpName primitive, const NodePtr& x, const NodePtr& y) {
  require(x, who, "x");
  require(y, who, "y");
  try {
    return binary(primitive, x, y);
  } catch (const Error& e) {
    std::string m = e.what();
    auto colon = m.find(':');
    fail(e.code(), who, colon == std::string::npos ? ": " + m : m.substr(colon));
  }
}

NodePtr cast(const NodePtr& x, DType dtype) {
  require(x, "cast", "x");
  return kb::cast(x, dtype);
}

// ---- reduce ---------------------------------------------------------------------------------
static std::vector<int64_t> resolve_axes(const NodePtr& x, const Axes& axes, const char* who) {
  require(x, who, "x");
  if (!axes) return {};
  check(x->shape().rank_known, Status::shape, who, ": the input rank is unknown");
  auto ax = normalize_axes(*axes, x->rank(), who);
  if (ax.empty()) return {};  // an empty list reduces nothing: handled by the callers
  return ax;
}

static NodePtr reduce_keras(const NodePtr& x, ReduceMode mode, const Axes& axes, bool keepdims,
                            const char* who) {
  auto ax = resolve_axes(x, axes, who);
  if (axes && axes->empty()) return x;
  return reduce(x, mode, ax, keepdims);
}

NodePtr max(const NodePtr& x, const Axes& a, bool k) {
  return reduce_keras(x, ReduceMode::max, a, k, "max");
}
NodePtr min(const NodePtr& x, const Axes& a, bool k) {
  return reduce_keras(x, ReduceMode::min, a, k, "min");
}
NodePtr sum(const NodePtr& x, const Axes& a, bool k) {
  require(x, "sum", "x");
  check(!is_bool(x->dtype()), Status::dtype, "sum: bool input is not supported");
  return reduce_keras(x, ReduceMode::sum, a, k, "sum");
}
NodePtr prod(const NodePtr& x, const Axes& a, bool k) {
  require(x, "prod", "x");
  check(!is_bool(x->dtype()), Status::dtype, "prod: bool input is not supported");
  return reduce_keras(x, ReduceMode::prod, a, k, "prod");
}

NodePtr mean(const NodePtr& x, const Axes& a, bool k) {
  require(x, "mean", "x");
  NodePtr v = is_bool(x->dtype()) ? kb::cast(x, Session::get().floatx()) : x;
  auto ax = resolve_axes(v, a, "mean");
  if (a && a->empty()) return v;
  NodePtr s = reduce(v, ReduceMode::sum, ax, k);
  return div(s, size_of(v, ax, v->dtype()));
}

NodePtr var(const NodePtr& x, const Axes& a, bool k) {
  require(x, "var", "x");
  NodePtr v = is_bool(x->dtype()) ? kb::cast(x, Session::get().floatx()) : x;
  NodePtr m = mean(v, a, true);
  NodePtr d = sub(v, m);
  return mean(mul(d, d), a, k);
}

NodePtr std(const NodePtr& x, const Axes& a, bool k) { return unary(ops::Sqrt, var(x, a, k)); }

NodePtr any(const NodePtr& x, const Axes& a, bool k) {
  require(x, "any", "x");
  return reduce_keras(kb::cast(x, DType::b8), ReduceMode::max, a, k, "any");
}
NodePtr all(const NodePtr& x, const Axes& a, bool k) {
  require(x, "all", "x");
  return reduce_keras(kb::cast(x, DType::b8), ReduceMode::min, a, k, "all");
}

NodePtr logsumexp(const NodePtr& x, const Axes& a, bool k) {
  require(x, "logsumexp", "x");
  check(is_floating(x->dtype()), Status::dtype, "logsumexp: expected a floating dtype, got ",
        dtype_name(x->dtype()));
  auto ax = resolve_axes(x, a, "logsumexp");
  if (a && a->empty()) return x;
  // Subtract the (finite) maximum so that exp cannot overflow.
  NodePtr m = kb::stop_gradient(reduce(x, ReduceMode::max, ax, true));
  m = select(unary(ops::IsFinite, m), m, kb::zeros_like(m));
  NodePtr s = reduce_sum(unary(ops::Exp, sub(x, m)), ax, k);
  NodePtr mk = k ? m : reduce(m, ReduceMode::max, ax, false);
  return add(unary(ops::Log, s), mk);
}

static NodePtr cumulative(const NodePtr& x, int64_t axis, ScanMode mode, const char* who) {
  require(x, who, "x");
  check(x->shape().rank_known && x->rank() >= 1, Status::shape, who,
        ": the input needs a known rank >= 1");
  int64_t ax = normalize_axis(axis, x->rank(), who);
  return make_node(ops::Cumulative, {x}, {{attr::mode, int64_t(mode)}, {attr::axis, ax}});
}
NodePtr cumsum(const NodePtr& x, int64_t axis) {
  return cumulative(x, axis, ScanMode::sum, "cumsum");
}
NodePtr cumprod(const NodePtr& x, int64_t axis) {
  return cumulative(x, axis, ScanMode::prod, "cumprod");
}

static NodePtr arg_reduce(const NodePtr& x, int64_t axis, ArgMode mode, const char* who) {
  require(x, who, "x");
  check(x->shape().rank_known && x->rank() >= 1, Status::shape, who,
        ": the input needs a known rank >= 1");
  int64_t ax = normalize_axis(axis, x->rank(), who);
  return make_node(ops::ArgReduce, {x}, {{attr::mode, int64_t(mode)}, {attr::axis, ax}});
}
NodePtr argmax(const NodePtr& x, int64_t axis) {
  return arg_reduce(x, axis, ArgMode::max, "argmax");
}
NodePtr argmin(const NodePtr& x, int64_t axis) {
  return arg_reduce(x, axis, ArgMode::min, "argmin");
}

}  // namespace kb::api
