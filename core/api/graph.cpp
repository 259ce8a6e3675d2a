// Updates, stop_gradient, print_tensor, set_value.
#include "core/api/api.h"
#include "core/compile/function.h"
#include "core/ops/build.h"
#include "core/util/error.h"

namespace kb::api {

static void need_variable(const NodePtr& x, const char* who) {
  require(x, who, "x");
  check(x->is(ops::Variable), Status::invalid_argument, who, ": '", x->name, "' is not a variable");
}

NodePtr update(const NodePtr& x, const NodePtr& new_x) {
  need_variable(x, "update");
  require(new_x, "update", "new_x");
  NodePtr v = new_x->dtype() == x->dtype() ? new_x : kb::cast(new_x, x->dtype());
  return make_node(ops::Assign, {x, v});
}

NodePtr update_add(const NodePtr& x, const NodePtr& increment) {
  need_variable(x, "update_add");
  require(increment, "update_add", "increment");
  return make_node(ops::Assign, {x, add(x, kb::cast(increment, x->dtype()))});
}

NodePtr update_sub(const NodePtr& x, const NodePtr& decrement) {
  need_variable(x, "update_sub");
  require(decrement, "update_sub", "decrement");
  return make_node(ops::Assign, {x, sub(x, kb::cast(decrement, x->dtype()))});
}

NodePtr moving_average_update(const NodePtr& x, const NodePtr& value, double momentum) {
  need_variable(x, "moving_average_update");
  require(value, "moving_average_update", "value");
  check(is_floating(x->dtype()), Status::dtype, "moving_average_update: x must be floating");
  // Zero-debiased average (TensorFlow's assign_moving_average with zero_debias=True).
  DType t = x->dtype();
  NodePtr biased = zeros(x->shape().dims, t, x->name + "/biased");
  NodePtr step = zeros({}, t, x->name + "/local_step");
  NodePtr m = scalar_constant(momentum, t);
  NodePtr one = scalar_constant(1.0, t);
  NodePtr biased_new = add(mul(m, biased), mul(sub(one, m), kb::cast(value, t)));
  NodePtr step_new = add(step, one);
  NodePtr x_new = div(biased_new, sub(one, binary(ops::Pow, m, step_new)));
  NodePtr ub = make_node(ops::Assign, {biased, biased_new});
  NodePtr us = make_node(ops::Assign, {step, step_new});
  return make_node(ops::Assign, {x, x_new, ub, us});
}

NodePtr stop_gradient(const NodePtr& x) {
  require(x, "stop_gradient", "x");
  return kb::stop_gradient(x);
}

NodePtr print_tensor(const NodePtr& x, const std::string& message) {
  require(x, "print_tensor", "x");
  return make_node(ops::Print, {x}, {{attr::message, message}});
}

void set_value(const NodePtr& x, const std::shared_ptr<Buffer>& value) {
  need_variable(x, "set_value");
  check(value != nullptr, Status::invalid_argument, "set_value: the value is NULL");
  check(value->dims == x->value->dims, Status::shape, "set_value: value of shape ",
        dims_str(value->dims), " for variable '", x->name, "' of shape ", dims_str(x->value->dims));
  auto v = convert_buffer(value, x->dtype());
  // Always a fresh buffer: values handed out earlier keep their contents.
  x->value = Buffer::from_bytes(v->dtype, v->dims, v->data());
}

}  // namespace kb::api
