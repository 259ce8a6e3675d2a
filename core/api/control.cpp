#include "core/api/control.h"

#include "core/api/api.h"
#include "core/graph/session.h"
#include "core/ops/build.h"
#include "core/util/error.h"

namespace kb::api {

namespace {

NodePtr call(const Branch& b, const char* who, const char* what) {
  check(static_cast<bool>(b), Status::invalid_argument, who, ": ", what, " is NULL");
  NodePtr n = b();
  check(n != nullptr, Status::invalid_argument, who, ": ", what, " gave no tensor");
  return n;
}

}  // namespace

NodePtr learning_phase() {
  Session& s = Session::get();
  if (auto fixed = s.fixed_learning_phase()) return scalar_constant(double(*fixed), DType::b8);
  if (NodePtr n = s.phase_node()) return n;
  // make_leaf takes the session's lock (for the name scope): the node is made before it is kept.
  Attrs a;
  a.set(attr::default_, int64_t{0});
  NodePtr n = make_leaf(ops::LearningPhase, TensorType{DType::b8, Shape(Dims{})},
                        "keras_learning_phase", a);
  n->uses_learning_phase = true;
  return s.keep_phase_node(std::move(n));
}

NodePtr switch_(const NodePtr& condition, const Branch& then_expression,
                const Branch& else_expression) {
  require(condition, "switch", "condition");
  NodePtr c = condition->dtype() == DType::b8 ? condition : kb::cast(condition, DType::b8);
  const Shape& cs = c->shape();
  if (!cs.rank_known || cs.rank() == 0) {
    // A lazy choice: both branches are built, the plan computes only the chosen one when the
    // condition is known then (tf.cond).
    NodePtr a = call(then_expression, "switch", "then_expression");
    NodePtr b = call(else_expression, "switch", "else_expression");
    check(a->dtype() == b->dtype(), Status::dtype,
          "switch: then_expression and else_expression have different dtypes (",
          dtype_name(a->dtype()), " and ", dtype_name(b->dtype()), ")");
    if (!cs.rank_known) c = kb::reshape(c, {});
    return make_node(ops::Switch, {c, a, b});
  }
  NodePtr a = call(then_expression, "switch", "then_expression");
  NodePtr b = call(else_expression, "switch", "else_expression");
  check(a->dtype() == b->dtype(), Status::dtype,
        "switch: then_expression and else_expression have different dtypes (",
        dtype_name(a->dtype()), " and ", dtype_name(b->dtype()), ")");
  const Shape& as = a->shape();
  const Shape& bs = b->shape();
  check(as.rank_known && bs.rank_known, Status::shape,
        "switch: a condition of rank >= 1 needs expressions of known rank");
  check(cs.rank() <= as.rank(), Status::shape,
        "switch: rank of `condition` should be less than or equal to rank of `then_expression` "
        "and `else_expression`. ndim(condition)=",
        cs.rank(), ", ndim(then_expression)=", as.rank());
  bool same = as.rank() == bs.rank();
  for (size_t i = 0; same && i < as.dims.size(); ++i)
    same = as.dims[i] < 0 || bs.dims[i] < 0 || as.dims[i] == bs.dims[i];
  check(same, Status::shape, "switch: then_expression ", as.str(), " and else_expression ",
        bs.str(), " must have the same shape");
  for (int64_t i = 0; i < cs.rank(); ++i) {
    int64_t d = cs.dims[size_t(i)], e = as.dims[size_t(i)];
    check(d < 0 || e < 0 || d == 1 || d == e, Status::shape, "switch: condition ", cs.str(),
          " does not line up with the leading axes of ", as.str());
  }
  // The condition lines up with the leading axes: trailing 1s, then tiled by broadcasting.
  for (int64_t i = cs.rank(); i < as.rank(); ++i) c = kb::expand_dims(c, c->rank());
  return select(c, a, b);
}

NodePtr in_train_phase(const Branch& x, const Branch& alt, const NodePtr& training,
                       std::optional<int> fixed, const char* who) {
  if (fixed) {
    check(*fixed == 0 || *fixed == 1, Status::invalid_argument, who,
          ": a fixed training value must be 0 or 1, got ", *fixed);
    check(training == nullptr, Status::invalid_argument, who,
          ": give either a training tensor or a fixed value, not both");
    return *fixed ? call(x, who, "x") : call(alt, who, "alt");
  }
  bool uses_phase = training == nullptr;
  if (uses_phase) {
    // A learning phase set with set_learning_phase is a fixed Python int in Keras.
    if (auto p = Session::get().fixed_learning_phase())
      return *p ? call(x, who, "x") : call(alt, who, "alt");
  }
  NodePtr t = uses_phase ? learning_phase() : training;
  NodePtr r = switch_(
      t, [&] { return call(x, who, "x"); }, [&] { return call(alt, who, "alt"); });
  if (uses_phase) r->uses_learning_phase = true;
  return r;
}

NodePtr in_test_phase(const Branch& x, const Branch& alt, const NodePtr& training,
                      std::optional<int> fixed) {
  return in_train_phase(alt, x, training, fixed, "in_test_phase");
}

}  // namespace kb::api
