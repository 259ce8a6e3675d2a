#include "core/model/activations.h"

#include <optional>

#include "core/api/api.h"
#include "core/ops/build.h"
#include "core/util/error.h"

namespace kb::model {

NodePtr softmax_along(const NodePtr& x, int64_t axis, const std::string& where) {
  check(x->rank() != 1, Status::invalid_argument, where, ": softmax of a 1-D tensor");
  if (x->rank() == 2) return api::softmax(x, -1);
  std::vector<int64_t> axes{axis};
  NodePtr e = api::exp(api::binary_op("subtract", ops::Sub, x, api::max(x, axes, true)));
  return api::binary_op("divide", ops::Div, e, api::sum(e, axes, true));
}

NodePtr activate(const Json& activation, const NodePtr& x, const std::string& where) {
  if (activation.is_null()) return x;
  std::string name = activation.is_object()   ? required_string(activation, "class_name", where)
                     : activation.is_string() ? activation.get<std::string>()
                                              : std::string("?");
  if (name == "linear" || name == "Linear") return x;
  if (name == "relu") return api::relu(x, 0, std::nullopt, 0);
  if (name == "sigmoid") return api::sigmoid(x);
  if (name == "hard_sigmoid") return api::hard_sigmoid(x);
  if (name == "tanh") return api::tanh(x);
  if (name == "softmax") return softmax_along(x, -1, where);
  if (name == "elu") return api::elu(x, 1.0);
  if (name == "selu") {
    // keras.activations.selu: scale * elu(x, alpha) with the constants of the paper.
    const double alpha = 1.6732632423543772848170429916717;
    const double scale = 1.0507009873554804934193349852946;
    return api::binary_op("multiply", ops::Mul, scalar_like(x, scale), api::elu(x, alpha));
  }
  if (name == "softplus") return api::softplus(x);
  if (name == "softsign") return api::softsign(x);
  if (name == "exponential") return api::exp(x);
  fail(Status::not_implemented, where, ": unknown activation '", name, "'");
}

}  // namespace kb::model
