#include "core/model/regularizers.h"

#include "core/model/graph_math.h"
#include "core/util/error.h"

namespace kb::model {

NodePtr regularization(const Json& regularizer, const NodePtr& x, const std::string& where) {
  if (regularizer.is_null()) return nullptr;
  check(regularizer.is_object(), Status::invalid_argument, where,
        ": a regularizer is not {class_name, config}");
  std::string cls = required_string(regularizer, "class_name", where);
  check(cls == "L1L2" || cls == "L1" || cls == "L2", Status::not_implemented, where,
        ": unknown regularizer '", cls, "'");
  const Json& config = required(regularizer, "config", where);
  double l1 = number_or(config, "l1", 0, where), l2 = number_or(config, "l2", 0, where);
  // L1L2.__call__: 0. + sum(l1 * |x|) + sum(l2 * x^2), each term only when its factor is set.
  NodePtr term;
  auto add_term = [&](const NodePtr& t) { term = term ? plus(term, t) : t; };
  if (l1 != 0) add_term(api::sum(times(number(x, l1), api::abs(x)), std::nullopt, false));
  if (l2 != 0) add_term(api::sum(times(number(x, l2), api::square(x)), std::nullopt, false));
  return term;
}

}  // namespace kb::model
