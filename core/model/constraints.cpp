#include "core/model/constraints.h"

#include "core/model/graph_math.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

api::Axes axes_of(const Json& config, const std::string& where) {
  if (!config.contains("axis") || config["axis"].is_null()) return std::vector<int64_t>{0};
  const Json& a = config["axis"];
  if (a.is_number_integer()) return std::vector<int64_t>{a.get<int64_t>()};
  check(a.is_array(), Status::invalid_argument, where, ": a constraint's axis is not a list");
  std::vector<int64_t> axes;
  for (const auto& v : a) {
    check(v.is_number_integer(), Status::invalid_argument, where, ": an axis is not an integer");
    axes.push_back(v.get<int64_t>());
  }
  return axes;
}

// sqrt(sum(square(w), axis, keepdims=True))
NodePtr norms(const NodePtr& w, const api::Axes& axes) {
  return api::sqrt(api::sum(api::square(w), axes, true));
}

}  // namespace

NodePtr constrain(const Json& constraint, const NodePtr& w, const std::string& where) {
  if (constraint.is_null()) return w;
  std::string name = constraint.is_string() ? constraint.get<std::string>()
                                            : required_string(constraint, "class_name", where);
  const Json config = constraint.is_object() && constraint.contains("config") ? constraint["config"]
                                                                              : Json::object();
  double eps = Session::get().epsilon();
  if (name == "NonNeg" || name == "non_neg")
    return times(w, api::cast(api::binary_op("greater_equal", ops::GreaterEqual, w, number(w, 0.0)),
                              w->dtype()));
  api::Axes axes = axes_of(config, where);
  NodePtr n = norms(w, axes);
  if (name == "UnitNorm" || name == "unit_norm") return divided(w, plus(number(n, eps), n));
  if (name == "MaxNorm" || name == "max_norm") {
    double max_value = number_or(config, "max_value", 2, where);
    NodePtr desired = api::clip(n, 0, max_value);
    return times(w, divided(desired, plus(number(n, eps), n)));
  }
  if (name == "MinMaxNorm" || name == "min_max_norm") {
    double lo = number_or(config, "min_value", 0, where);
    double hi = number_or(config, "max_value", 1, where);
    double rate = number_or(config, "rate", 1, where);
    NodePtr desired =
        plus(times(number(n, rate), api::clip(n, lo, hi)), times(number(n, 1 - rate), n));
    return times(w, divided(desired, plus(number(n, eps), n)));
  }
  fail(Status::not_implemented, where, ": unknown constraint '", name, "'");
}

}  // namespace kb::model
