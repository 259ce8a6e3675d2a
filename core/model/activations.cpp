#include "core/model/activations.h"

#include <cmath>
#include <optional>

#include "core/api/api.h"
#include "core/model/graph_math.h"
#include "core/ops/build.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

NodePtr selu(const NodePtr& x) {
  // keras.activations.selu: scale * elu(x, alpha) with the constants of the paper.
  const double alpha = 1.6732632423543772848170429916717;
  const double scale = 1.0507009873554804934193349852946;
  return times(number(x, scale), api::elu(x, alpha));
}

// Keras 3's hard_sigmoid, relu6(x + 3) / 6 (Keras 2's is clip(0.2 x + 0.5, 0, 1)).
NodePtr hard_sigmoid3(const NodePtr& x) {
  return divided(api::relu(plus(x, number(x, 3.0)), 0, 6.0, 0), number(x, 6.0));
}

NodePtr gelu(const NodePtr& x, bool approximate) {
  NodePtr half_x = times(number(x, 0.5), x);
  if (approximate) {  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
    NodePtr inner = times(number(x, std::sqrt(2.0 / M_PI)),
                          plus(x, times(number(x, 0.044715), api::pow(x, 3.0))));
    return times(half_x, plus(number(x, 1.0), api::tanh(inner)));
  }
  NodePtr erf = api::erf(times(x, number(x, 1.0 / std::sqrt(2.0))));
  return times(half_x, plus(number(x, 1.0), erf));
}

// keras.activations.glu: the first half along `axis` times the sigmoid of the second.
NodePtr glu(const NodePtr& x, const std::string& where) {
  check(x->shape().rank_known && x->rank() >= 1, Status::shape, where, ": glu needs a rank");
  int64_t n = x->shape().dims.back();
  check(n > 0 && n % 2 == 0, Status::shape, where, ": glu splits the last dim (", n,
        ") in two halves");
  std::vector<int64_t> start(size_t(x->rank()), 0), size(size_t(x->rank()), -1);
  size.back() = n / 2;
  NodePtr a = api::slice(x, start, size);
  start.back() = n / 2;
  return times(a, api::sigmoid(api::slice(x, start, size)));
}

}  // namespace

NodePtr softmax_along(const NodePtr& x, int64_t axis, const std::string& where) {
  check(x->rank() != 1, Status::invalid_argument, where, ": softmax of a 1-D tensor");
  if (x->rank() == 2) return api::softmax(x, -1);
  std::vector<int64_t> axes{axis};
  NodePtr e = api::exp(minus(x, api::max(x, axes, true)));
  return divided(e, api::sum(e, axes, true));
}

NodePtr activate(const Json& activation, const NodePtr& x, const std::string& where,
                 KerasRules rules) {
  if (activation.is_null()) return x;
  std::string name;
  if (activation.is_string()) {
    name = activation.get<std::string>();
  } else if (activation.is_object()) {
    // tf.keras' {"class_name": "relu"}; Keras 3's serialized function {"class_name":
    // "function", "config": "relu"}.
    name = required_string(activation, "class_name", where);
    if (name == "function" && activation.contains("config") && activation["config"].is_string())
      name = activation["config"].get<std::string>();
  } else {
    fail(Status::invalid_argument, where, ": an activation is neither a name nor an object");
  }
  if (name == "linear" || name == "Linear") return x;
  if (name == "relu") return api::relu(x, 0, std::nullopt, 0);
  if (name == "sigmoid") return api::sigmoid(x);
  if (name == "hard_sigmoid")
    return rules == KerasRules::keras3 ? hard_sigmoid3(x) : api::hard_sigmoid(x);
  if (name == "tanh") return api::tanh(x);
  if (name == "softmax") return softmax_along(x, -1, where);
  if (name == "elu" || name == "celu") return api::elu(x, 1.0);  // celu's alpha is 1 by name
  if (name == "selu") return selu(x);
  if (name == "softplus") return api::softplus(x);
  if (name == "softsign") return api::softsign(x);
  if (name == "exponential") return api::exp(x);
  // Keras 3's (keras.activations) beyond Keras 2.2.4's, with their default arguments.
  if (name == "relu6") return api::relu(x, 0, 6.0, 0);
  if (name == "leaky_relu") return api::relu(x, 0.2, std::nullopt, 0);
  if (name == "silu" || name == "swish") return times(x, api::sigmoid(x));
  if (name == "gelu") return gelu(x, false);
  if (name == "hard_silu" || name == "hard_swish") return times(x, hard_sigmoid3(x));
  if (name == "mish") return times(x, api::tanh(api::softplus(x)));
  if (name == "glu") return glu(x, where);
  if (name == "log_softmax") return minus(x, api::logsumexp(x, std::vector<int64_t>{-1}, true));
  if (name == "log_sigmoid") return api::negative(api::softplus(api::negative(x)));
  if (name == "tanh_shrink") return minus(x, api::tanh(x));
  if (name == "hard_tanh") return api::clip(x, -1.0, 1.0);
  if (name == "soft_shrink") return minus(x, api::clip(x, -0.5, 0.5));
  if (name == "hard_shrink")
    return times(x, api::cast(api::binary_op("greater", ops::Greater, api::abs(x), number(x, 0.5)),
                              x->dtype()));
  if (name == "sparse_sigmoid")
    return api::clip(times(number(x, 0.5), plus(x, number(x, 1.0))), 0.0, 1.0);
  if (name == "sparse_plus") {  // 0 below -1, (x + 1)^2 / 4 between, x above 1
    NodePtr c = plus(api::clip(x, -1.0, 1.0), number(x, 1.0));
    return plus(times(number(x, 0.25), times(c, c)),
                api::relu(minus(x, number(x, 1.0)), 0, std::nullopt, 0));
  }
  if (name == "squareplus")  // (x + sqrt(x^2 + b)) / 2, b = 4
    return times(number(x, 0.5), plus(x, api::sqrt(plus(times(x, x), number(x, 4.0)))));
  if (name == "sparsemax" || name == "threshold")
    fail(Status::not_implemented, where, ": activation '", name, "' is not available (",
         name == "sparsemax" ? "it sorts each row, which the backend has no function for"
                             : "it has no default arguments, so no layer names it alone",
         ")");
  fail(Status::not_implemented, where, ": unknown activation '", name, "'");
}

}  // namespace kb::model
