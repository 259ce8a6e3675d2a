// Elementwise primitives: every row of the scalar-op table, plus Cast and Select.
#include <cmath>
#include <string>
#include <unordered_set>

#include "core/ops/build.h"
#include "core/ops/infer_util.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {
namespace {

TensorType infer_unary(const std::vector<TensorType>& in, const std::string& name, ScalarDomain d,
                       ScalarResult r) {
  check_arity(in, 1, name);
  check_domain(in[0].dtype, d, name);
  return {r == ScalarResult::BOOL ? DType::b8 : in[0].dtype, in[0].shape};
}

TensorType infer_binary(const std::vector<TensorType>& in, const std::string& name, ScalarDomain d,
                        ScalarResult r) {
  check_arity(in, 2, name);
  check(in[0].dtype == in[1].dtype, Status::dtype, name, ": dtypes differ (",
        dtype_name(in[0].dtype), " and ", dtype_name(in[1].dtype), ")");
  check_domain(in[0].dtype, d, name);
  Shape s = broadcast_shapes(in[0].shape, in[1].shape, name);
  return {r == ScalarResult::BOOL ? DType::b8 : in[0].dtype, s};
}

#define KB_NO_GRAD nullptr

#define KB_DEFINE_UNARY(Name, Dom, Res, expr, grad_expr)                        \
  TensorType infer_##Name(const std::vector<TensorType>& in, const Attrs&) {    \
    return infer_unary(in, #Name, ScalarDomain::Dom, ScalarResult::Res);        \
  }                                                                             \
  [[maybe_unused]] NodePtr grad_expr_##Name(const NodePtr& x, const NodePtr& z, \
                                            const NodePtr& dy) {                \
    (void)x;                                                                    \
    (void)z;                                                                    \
    (void)dy;                                                                   \
    return grad_expr;                                                           \
  }                                                                             \
  std::vector<NodePtr> grad_##Name(const NodePtr& n, const NodePtr& dy) {       \
    return {grad_expr_##Name(n->inputs[0], n, dy)};                             \
  }                                                                             \
  OpRegistrar reg_##Name({ops::Name, infer_##Name, grad_##Name});

KB_UNARY_OPS(KB_DEFINE_UNARY)

#define KB_DEFINE_BINARY(Name, Dom, Res, expr, grad_a, grad_b)                     \
  TensorType infer_##Name(const std::vector<TensorType>& in, const Attrs&) {       \
    return infer_binary(in, #Name, ScalarDomain::Dom, ScalarResult::Res);          \
  }                                                                                \
  std::vector<NodePtr> grad_##Name(const NodePtr& n, const NodePtr& dy) {          \
    const NodePtr& x = n->inputs[0];                                               \
    const NodePtr& y = n->inputs[1];                                               \
    const NodePtr& z = n;                                                          \
    (void)z, (void)dy;                                                             \
    NodePtr ga = grad_a;                                                           \
    NodePtr gb = grad_b;                                                           \
    return {ga ? sum_to_like(ga, x) : nullptr, gb ? sum_to_like(gb, y) : nullptr}; \
  }                                                                                \
  OpRegistrar reg_##Name({ops::Name, infer_##Name, grad_##Name});

KB_BINARY_OPS(KB_DEFINE_BINARY)

TensorType infer_cast(const std::vector<TensorType>& in, const Attrs& a) {
  check_arity(in, 1, "cast");
  return {static_cast<DType>(a.i(attr::dtype)), in[0].shape};
}
std::vector<NodePtr> grad_cast(const NodePtr& n, const NodePtr& dy) {
  const NodePtr& x = n->inputs[0];
  if (!is_floating(x->dtype()) || !is_floating(n->dtype())) return {nullptr};
  return {cast(dy, x->dtype())};
}
OpRegistrar reg_cast({ops::Cast, infer_cast, grad_cast});

// FusedElementwise(inputs...): made only by the plan-time rewrite (core/compile/
// fuse_elementwise.cpp) with the concrete output type in its attributes dtype and dims.
TensorType infer_fused_elementwise(const std::vector<TensorType>&, const Attrs& a) {
  return {static_cast<DType>(a.i(attr::dtype)), Shape(a.ints(attr::dims))};
}
OpRegistrar reg_fused_elementwise({ops::FusedElementwise, infer_fused_elementwise, nullptr});

TensorType infer_select(const std::vector<TensorType>& in, const Attrs&) {
  check_arity(in, 3, "select");
  check(in[0].dtype == DType::b8, Status::dtype, "select: the condition must be bool, got ",
        dtype_name(in[0].dtype));
  check(in[1].dtype == in[2].dtype, Status::dtype, "select: branch dtypes differ (",
        dtype_name(in[1].dtype), " and ", dtype_name(in[2].dtype), ")");
  Shape s = broadcast_shapes(in[1].shape, in[2].shape, "select");
  s = broadcast_shapes(in[0].shape, s, "select");
  return {in[1].dtype, s};
}
std::vector<NodePtr> grad_select(const NodePtr& n, const NodePtr& dy) {
  const NodePtr& c = n->inputs[0];
  NodePtr zero = zeros_like(dy);
  return {nullptr, sum_to_like(select(c, dy, zero), n->inputs[1]),
          sum_to_like(select(c, zero, dy), n->inputs[2])};
}
OpRegistrar reg_select({ops::Select, infer_select, grad_select});

}  // namespace

bool is_elementwise_op(const std::string& name) {
#define KB_ELEMENTWISE_NAME(Name, ...) #Name,
  static const std::unordered_set<std::string> names = {
      KB_UNARY_OPS(KB_ELEMENTWISE_NAME) KB_BINARY_OPS(KB_ELEMENTWISE_NAME) "Cast"};
#undef KB_ELEMENTWISE_NAME
  return names.count(name) > 0;
}

}  // namespace kb
