#include "core/model/learning_rate_schedules.h"

#include <cmath>
#include <vector>

#include "core/api/control.h"
#include "core/model/graph_math.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

const Json& config_of(const Json& schedule, const std::string& where) {
  static const Json empty = Json::object();
  const Json& c = schedule.contains("config") ? schedule["config"] : empty;
  check(c.is_object(), Status::invalid_argument, where, ": a schedule's config is not an object");
  return c;
}

double positive(const Json& c, const char* key, const std::string& where) {
  double v = number_or(c, key, 0, where);
  check(v > 0, Status::invalid_argument, where, ": a schedule's ", key, " must be positive");
  return v;
}

NodePtr pow_of(const NodePtr& base, const NodePtr& exponent) {
  return api::binary_op("pow", ops::Pow, base, exponent);
}
NodePtr min_of(const NodePtr& x, double v) { return smaller(x, number(x, v)); }
// A condition as 0 or 1 in x's dtype.
NodePtr indicator(const NodePtr& condition, const NodePtr& like) {
  return api::cast(condition, like->dtype());
}

// The cosine from 1 to alpha over `steps` (Keras' CosineDecay._decay_function).
NodePtr cosine(const NodePtr& step, double steps, double from, double alpha) {
  NodePtr fraction = divided(step, number(step, steps));
  NodePtr half = times(number(step, 0.5),
                       plus(number(step, 1), api::cos(times(number(step, M_PI), fraction))));
  return times(number(step, from), plus(times(number(step, 1 - alpha), half), number(step, alpha)));
}

NodePtr exponential(const Json& c, const NodePtr& step, const std::string& where, bool inverse) {
  double initial = number_or(c, "initial_learning_rate", 0, where);
  double steps = positive(c, "decay_steps", where), rate = number_or(c, "decay_rate", 0, where);
  NodePtr p = divided(step, number(step, steps));
  if (bool_or(c, "staircase", false, where)) p = floored(p);
  if (inverse)  // InverseTimeDecay: initial / (1 + rate * p)
    return divided(number(step, initial), plus(number(step, 1), times(number(step, rate), p)));
  return times(number(step, initial), pow_of(number(step, rate), p));
}

NodePtr piecewise(const Json& c, const NodePtr& step, const std::string& where) {
  const Json &b = required(c, "boundaries", where), &v = required(c, "values", where);
  check(b.is_array() && v.is_array() && !b.empty() && v.size() == b.size() + 1,
        Status::invalid_argument, where, ": PiecewiseConstantDecay needs one value more than ",
        "boundaries");
  std::vector<double> bounds, values;
  for (const auto& x : b) {
    check(x.is_number(), Status::invalid_argument, where, ": a boundary is not a number");
    bounds.push_back(x.get<double>());
  }
  for (const auto& x : v) {
    check(x.is_number(), Status::invalid_argument, where, ": a value is not a number");
    values.push_back(x.get<double>());
  }
  auto at_most = [&](double bound) {
    return indicator(api::binary_op("less_equal", ops::LessEqual, step, number(step, bound)), step);
  };
  // values[0] up to the first boundary, values[i] in (bounds[i-1], bounds[i]], the last after.
  NodePtr rate = times(at_most(bounds[0]), number(step, values[0]));
  for (size_t i = 1; i < bounds.size(); ++i)
    rate = plus(rate,
                times(minus(at_most(bounds[i]), at_most(bounds[i - 1])), number(step, values[i])));
  NodePtr beyond = minus(number(step, 1), at_most(bounds.back()));
  return plus(rate, times(beyond, number(step, values.back())));
}

NodePtr polynomial(const Json& c, const NodePtr& step, const std::string& where) {
  double initial = number_or(c, "initial_learning_rate", 0, where);
  double steps = positive(c, "decay_steps", where);
  double end = number_or(c, "end_learning_rate", 0.0001, where);
  double power = number_or(c, "power", 1.0, where);
  NodePtr s = step, span = number(step, steps);
  if (bool_or(c, "cycle", false, where)) {
    // decay_steps * ceil(step / decay_steps), at least one span (at step 0 too).
    NodePtr cycles = api::unary_op(
        "negative", ops::Neg,
        floored(api::unary_op("negative", ops::Neg, divided(step, number(step, steps)))));
    span = times(span, larger(cycles, number(step, 1)));
  } else {
    s = min_of(step, steps);
  }
  NodePtr p = divided(s, span);
  return plus(
      times(number(step, initial - end), pow_of(minus(number(step, 1), p), number(step, power))),
      number(step, end));
}

NodePtr cosine_decay(const Json& c, const NodePtr& step, const std::string& where) {
  double initial = number_or(c, "initial_learning_rate", 0, where);
  double steps = positive(c, "decay_steps", where), alpha = number_or(c, "alpha", 0, where);
  if (!c.contains("warmup_target") || c["warmup_target"].is_null())
    return cosine(min_of(step, steps), steps, initial, alpha);
  double target = number_or(c, "warmup_target", 0, where);
  double warmup = number_or(c, "warmup_steps", 0, where);
  check(warmup >= 0, Status::invalid_argument, where, ": warmup_steps is negative");
  NodePtr s = min_of(step, steps + warmup);
  NodePtr warming = api::binary_op("less", ops::Less, s, number(s, warmup));
  return api::switch_(
      warming,
      [&] {  // linear from the initial rate to the target
        return plus(times(number(s, target - initial), divided(s, number(s, warmup))),
                    number(s, initial));
      },
      [&] { return cosine(minus(s, number(s, warmup)), steps, target, alpha); });
}

NodePtr cosine_restarts(const Json& c, const NodePtr& step, const std::string& where) {
  double initial = number_or(c, "initial_learning_rate", 0, where);
  double first = positive(c, "first_decay_steps", where);
  double t_mul = number_or(c, "t_mul", 2.0, where), m_mul = number_or(c, "m_mul", 1.0, where);
  double alpha = number_or(c, "alpha", 0, where);
  check(t_mul > 0, Status::invalid_argument, where, ": t_mul must be positive");
  NodePtr fraction = divided(step, number(step, first)), restart;
  if (t_mul == 1.0) {
    restart = floored(fraction);
    fraction = minus(fraction, restart);
  } else {
    // The restart i where the geometric sum of the spans (1 - t^i) / (1 - t) passes the step.
    NodePtr one = number(step, 1);
    restart = floored(divided(api::log(minus(one, times(fraction, number(step, 1 - t_mul)))),
                              number(step, std::log(t_mul))));
    NodePtr t_i = pow_of(number(step, t_mul), restart);
    NodePtr done = divided(minus(one, t_i), number(step, 1 - t_mul));
    fraction = divided(minus(fraction, done), t_i);
  }
  NodePtr m_fac = pow_of(number(step, m_mul), restart);
  NodePtr cosine_decayed =
      times(times(number(step, 0.5), m_fac),
            plus(number(step, 1), api::cos(times(number(step, M_PI), fraction))));
  NodePtr decayed = plus(times(number(step, 1 - alpha), cosine_decayed), number(step, alpha));
  return times(number(step, initial), decayed);
}

}  // namespace

bool is_learning_rate_schedule(const Json& learning_rate) {
  return learning_rate.is_object() && learning_rate.contains("class_name");
}

NodePtr scheduled_learning_rate(const Json& schedule, const NodePtr& step,
                                const std::string& where) {
  std::string cls = required_string(schedule, "class_name", where);
  const Json& c = config_of(schedule, where);
  const std::string at = where + " (" + cls + ")";
  if (cls == "ExponentialDecay") return exponential(c, step, at, false);
  if (cls == "InverseTimeDecay") return exponential(c, step, at, true);
  if (cls == "PiecewiseConstantDecay") return piecewise(c, step, at);
  if (cls == "PolynomialDecay") return polynomial(c, step, at);
  if (cls == "CosineDecay") return cosine_decay(c, step, at);
  if (cls == "CosineDecayRestarts") return cosine_restarts(c, step, at);
  fail(Status::not_implemented, where, ": the learning-rate schedule '", cls,
       "' (ExponentialDecay, PiecewiseConstantDecay, PolynomialDecay, InverseTimeDecay, "
       "CosineDecay, CosineDecayRestarts)");
}

double initial_learning_rate(const Json& schedule, const std::string& where) {
  const Json& c = config_of(schedule, where);
  if (c.contains("values") && c["values"].is_array() && !c["values"].empty() &&
      c["values"][0].is_number())
    return c["values"][0].get<double>();
  return number_or(c, "initial_learning_rate", 0, where);
}

}  // namespace kb::model
