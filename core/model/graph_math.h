// Arithmetic as Keras code writes it with Python operators on tensors (x * y, 1. - x): the
// backend's Keras functions, so a model here computes what Keras on kbackend computes.
#pragma once
#include <string>

#include "core/api/api.h"
#include "core/ops/build.h"

namespace kb::model {

inline NodePtr plus(const NodePtr& x, const NodePtr& y) {
  return api::binary_op("add", ops::Add, x, y);
}
inline NodePtr minus(const NodePtr& x, const NodePtr& y) {
  return api::binary_op("subtract", ops::Sub, x, y);
}
inline NodePtr times(const NodePtr& x, const NodePtr& y) {
  return api::binary_op("multiply", ops::Mul, x, y);
}
inline NodePtr divided(const NodePtr& x, const NodePtr& y) {
  return api::binary_op("divide", ops::Div, x, y);
}
// Keras' K.maximum, K.minimum and floor.
inline NodePtr larger(const NodePtr& x, const NodePtr& y) {
  return api::binary_op("maximum", ops::Maximum, x, y);
}
inline NodePtr smaller(const NodePtr& x, const NodePtr& y) {
  return api::binary_op("minimum", ops::Minimum, x, y);
}
inline NodePtr floored(const NodePtr& x) { return api::unary_op("floor", ops::Floor, x); }
// A Python float beside a tensor: a scalar constant of the tensor's dtype.
inline NodePtr number(const NodePtr& like, double v) { return scalar_like(like, v); }

// Axis `axis` of x (of n values) contracted with an (m, n) matrix: the axis becomes m values,
// each a weighted sum of the n (a resize, an adaptive average).
inline NodePtr contract_axis(const NodePtr& x, int64_t axis, const NodePtr& matrix) {
  std::string labels;
  for (int64_t i = 0; i < x->rank(); ++i) labels += char('a' + i);
  std::string result = labels;
  result[size_t(axis)] = 'z';
  return api::einsum(std::string("z") + labels[size_t(axis)] + "," + labels + "->" + result,
                     {matrix, x});
}

// keras.ops.batch_normalization's formula (Keras 3): x * inv + (beta - mean * inv) with
// inv = gamma / sqrt(variance + epsilon); gamma and beta may be null.
inline NodePtr keras3_normalized(const NodePtr& x, const NodePtr& mean, const NodePtr& variance,
                                 const NodePtr& gamma, const NodePtr& beta, double epsilon) {
  NodePtr inv =
      divided(number(variance, 1.0), api::sqrt(plus(variance, number(variance, epsilon))));
  if (gamma) inv = times(inv, gamma);
  NodePtr res = api::negative(times(mean, inv));
  if (beta) res = plus(res, beta);
  return plus(times(x, inv), res);
}

}  // namespace kb::model
