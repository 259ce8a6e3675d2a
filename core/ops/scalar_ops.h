// THE table of elementwise scalar operations. One row per operation:
//   X(Name, domain, result, cpu expression on `a` (and `b`), gradient)
// domain: F = floating only, N = numeric (floating and integer), A = any type.
// result: SAME = the input dtype, BOOL = bool.
// The CPU expression is evaluated with `a`, `b` of the compute type (float for float16).
// The gradient is written with graph builders over x (input), y (second input, binary only),
// z (the output) and dy; KB_NO_GRAD marks operations through which no gradient flows.
#pragma once

#define KB_UNARY_OPS(X)                                                                \
  X(Neg, N, SAME, (-a), neg(dy))                                                       \
  X(Abs, N, SAME, (a < 0 ? -a : a), mul(dy, unary(ops::Sign, x)))                      \
  X(Square, N, SAME, (a * a), mul(dy, mul(x, scalar_like(x, 2.0))))                    \
  X(Sqrt, F, SAME, std::sqrt(a), div(dy, mul(z, scalar_like(z, 2.0))))                 \
  X(Exp, F, SAME, scalar_exp(a), mul(dy, z))                                           \
  X(Log, F, SAME, std::log(a), div(dy, x))                                             \
  X(Log1p, F, SAME, std::log1p(a), div(dy, add(x, scalar_like(x, 1.0))))               \
  X(Sin, F, SAME, std::sin(a), mul(dy, unary(ops::Cos, x)))                            \
  X(Cos, F, SAME, std::cos(a), neg(mul(dy, unary(ops::Sin, x))))                       \
  X(Tanh, F, SAME, scalar_tanh(a), mul(dy, sub(scalar_like(z, 1.0), mul(z, z))))       \
  X(Sigmoid, F, SAME, scalar_sigmoid(a), mul(dy, mul(z, sub(scalar_like(z, 1.0), z)))) \
  X(Softplus, F, SAME, scalar_softplus(a), mul(dy, unary(ops::Sigmoid, x)))            \
  X(Erf, F, SAME, std::erf(a),                                                         \
    mul(dy, mul(scalar_like(x, 1.1283791670955126), unary(ops::Exp, neg(mul(x, x)))))) \
  X(Reciprocal, F, SAME, (decltype(a)(1) / a), neg(mul(dy, mul(z, z))))                \
  X(Relu, N, SAME, (a > 0 ? a : decltype(a)(0)),                                       \
    mul(dy, cast(greater(z, scalar_like(z, 0.0)), z->dtype())))                        \
  X(Sign, N, SAME, (decltype(a)((a > 0) - (a < 0))), KB_NO_GRAD)                       \
  X(Round, F, SAME, std::nearbyint(a), KB_NO_GRAD)                                     \
  X(Floor, F, SAME, std::floor(a), KB_NO_GRAD)                                         \
  X(IsFinite, F, BOOL, std::isfinite(a), KB_NO_GRAD)

#define KB_BINARY_OPS(X)                                                                 \
  X(Add, N, SAME, (a + b), dy, dy)                                                       \
  X(Sub, N, SAME, (a - b), dy, neg(dy))                                                  \
  X(Mul, N, SAME, (a * b), mul(dy, y), mul(dy, x))                                       \
  X(Div, N, SAME, scalar_div(a, b), div(dy, y), neg(div(mul(dy, z), y)))                 \
  X(Pow, F, SAME, std::pow(a, b), mul(dy, mul(y, pow_(x, sub(y, scalar_like(y, 1.0))))), \
    mul(dy, mul(z, unary(ops::Log, x))))                                                 \
  X(Maximum, N, SAME, scalar_max(a, b), mul(dy, cast(greater_equal(x, y), x->dtype())),  \
    mul(dy, cast(less(x, y), y->dtype())))                                               \
  X(Minimum, N, SAME, scalar_min(a, b), mul(dy, cast(less_equal(x, y), x->dtype())),     \
    mul(dy, cast(greater(x, y), y->dtype())))                                            \
  X(Equal, A, BOOL, (a == b), KB_NO_GRAD, KB_NO_GRAD)                                    \
  X(NotEqual, A, BOOL, (a != b), KB_NO_GRAD, KB_NO_GRAD)                                 \
  X(Greater, A, BOOL, (a > b), KB_NO_GRAD, KB_NO_GRAD)                                   \
  X(GreaterEqual, A, BOOL, (a >= b), KB_NO_GRAD, KB_NO_GRAD)                             \
  X(Less, A, BOOL, (a < b), KB_NO_GRAD, KB_NO_GRAD)                                      \
  X(LessEqual, A, BOOL, (a <= b), KB_NO_GRAD, KB_NO_GRAD)

namespace kb {
enum class ScalarDomain { F, N, A };
enum class ScalarResult { SAME, BOOL };
}  // namespace kb
