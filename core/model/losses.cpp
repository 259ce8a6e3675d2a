#include "core/model/losses.h"

#include <cmath>
#include <map>

#include "core/model/graph_math.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

const api::Axes kLast = std::vector<int64_t>{-1};

NodePtr mean_squared_error(const NodePtr& t, const NodePtr& p) {
  return api::mean(api::square(minus(p, t)), kLast, false);
}
NodePtr mean_absolute_error(const NodePtr& t, const NodePtr& p) {
  return api::mean(api::abs(minus(p, t)), kLast, false);
}
NodePtr mean_absolute_percentage_error(const NodePtr& t, const NodePtr& p) {
  double eps = Session::get().epsilon();
  NodePtr diff = api::abs(divided(minus(t, p), api::clip(api::abs(t), eps, 1e300)));
  return times(number(diff, 100.0), api::mean(diff, kLast, false));
}
NodePtr mean_squared_logarithmic_error(const NodePtr& t, const NodePtr& p) {
  double eps = Session::get().epsilon();
  NodePtr a = api::log(plus(api::clip(p, eps, 1e300), number(p, 1.0)));
  NodePtr b = api::log(plus(api::clip(t, eps, 1e300), number(t, 1.0)));
  return api::mean(api::square(minus(a, b)), kLast, false);
}
NodePtr squared_hinge(const NodePtr& t, const NodePtr& p) {
  NodePtr m = api::relu(minus(number(p, 1.0), times(t, p)), 0, std::nullopt, 0);
  return api::mean(api::square(m), kLast, false);
}
NodePtr hinge(const NodePtr& t, const NodePtr& p) {
  return api::mean(api::relu(minus(number(p, 1.0), times(t, p)), 0, std::nullopt, 0), kLast, false);
}
NodePtr categorical_crossentropy(const NodePtr& t, const NodePtr& p) {
  return api::categorical_crossentropy(t, p, false, -1);
}
NodePtr sparse_categorical_crossentropy(const NodePtr& t, const NodePtr& p) {
  return api::sparse_categorical_crossentropy(t, p, false, -1);
}
NodePtr binary_crossentropy(const NodePtr& t, const NodePtr& p) {
  return api::mean(api::binary_crossentropy(t, p, false), kLast, false);
}
// The crossentropies of logits (Keras' from_logits=True).
NodePtr categorical_crossentropy_from_logits(const NodePtr& t, const NodePtr& p) {
  return api::categorical_crossentropy(t, p, true, -1);
}
NodePtr sparse_categorical_crossentropy_from_logits(const NodePtr& t, const NodePtr& p) {
  return api::sparse_categorical_crossentropy(t, p, true, -1);
}
NodePtr binary_crossentropy_from_logits(const NodePtr& t, const NodePtr& p) {
  return api::mean(api::binary_crossentropy(t, p, true), kLast, false);
}
NodePtr kullback_leibler_divergence(const NodePtr& t, const NodePtr& p) {
  double eps = Session::get().epsilon();
  NodePtr tc = api::clip(t, eps, 1), pc = api::clip(p, eps, 1);
  return api::sum(times(tc, api::log(divided(tc, pc))), kLast, false);
}
NodePtr poisson(const NodePtr& t, const NodePtr& p) {
  double eps = Session::get().epsilon();
  return api::mean(minus(p, times(t, api::log(plus(p, number(p, eps))))), kLast, false);
}
NodePtr cosine_proximity(const NodePtr& t, const NodePtr& p) {
  NodePtr tn = api::l2_normalize(t, kLast), pn = api::l2_normalize(p, kLast);
  return api::negative(api::sum(times(tn, pn), kLast, false));
}
NodePtr logcosh(const NodePtr& t, const NodePtr& p) {
  // x + softplus(-2x) - log(2): Keras 2.2.4's stable form of log(cosh(x)).
  NodePtr x = minus(p, t);
  NodePtr v = minus(plus(x, api::softplus(times(number(x, -2.0), x))), number(x, std::log(2.0)));
  return api::mean(v, kLast, false);
}

NodePtr floatx_of(const NodePtr& x) { return api::cast(x, Session::get().floatx()); }

NodePtr binary_accuracy(const NodePtr& t, const NodePtr& p) {
  return api::mean(floatx_of(api::binary_op("equal", ops::Equal, t, api::round(p))), kLast, false);
}
NodePtr categorical_accuracy(const NodePtr& t, const NodePtr& p) {
  return floatx_of(api::binary_op("equal", ops::Equal, api::argmax(t, -1), api::argmax(p, -1)));
}
NodePtr sparse_categorical_accuracy(const NodePtr& t, const NodePtr& p) {
  // Keras 2.2.4: max(y_true, -1) == float(argmax(y_pred, -1))
  return floatx_of(api::binary_op("equal", ops::Equal, api::max(t, kLast, false),
                                  floatx_of(api::argmax(p, -1))));
}

const std::map<std::string, NamedScore>& losses() {
  static const std::map<std::string, NamedScore> table = [] {
    std::map<std::string, NamedScore> t;
    auto row = [&](std::initializer_list<const char*> names, ScoreFn fn) {
      for (const char* n : names) t[n] = {*names.begin(), fn};
    };
    row({"mean_squared_error", "mse", "MSE", "MeanSquaredError"}, mean_squared_error);
    row({"mean_absolute_error", "mae", "MAE", "MeanAbsoluteError"}, mean_absolute_error);
    row({"mean_absolute_percentage_error", "mape", "MAPE"}, mean_absolute_percentage_error);
    row({"mean_squared_logarithmic_error", "msle", "MSLE"}, mean_squared_logarithmic_error);
    row({"squared_hinge"}, squared_hinge);
    row({"hinge"}, hinge);
    row({"categorical_crossentropy", "CategoricalCrossentropy"}, categorical_crossentropy);
    row({"sparse_categorical_crossentropy", "SparseCategoricalCrossentropy"},
        sparse_categorical_crossentropy);
    row({"binary_crossentropy", "BinaryCrossentropy"}, binary_crossentropy);
    row({"categorical_crossentropy_from_logits"}, categorical_crossentropy_from_logits);
    row({"sparse_categorical_crossentropy_from_logits"},
        sparse_categorical_crossentropy_from_logits);
    row({"binary_crossentropy_from_logits"}, binary_crossentropy_from_logits);
    row({"kullback_leibler_divergence", "kld", "KLD"}, kullback_leibler_divergence);
    row({"poisson"}, poisson);
    row({"cosine_proximity", "cosine"}, cosine_proximity);
    row({"logcosh"}, logcosh);
    return t;
  }();
  return table;
}

}  // namespace

NamedScore loss_by_name(const std::string& name, const std::string& where) {
  auto it = losses().find(name);
  check(it != losses().end(), Status::not_implemented, where, ": unknown loss '", name, "'");
  return it->second;
}

const char kOfLogits[] = "_from_logits";

std::string of_logits(const std::string& base) { return base + kOfLogits; }

std::string without_logits(const std::string& name) {
  const size_t n = sizeof kOfLogits - 1;
  bool of = name.size() > n && name.compare(name.size() - n, n, kOfLogits) == 0;
  return of ? name.substr(0, name.size() - n) : name;
}

Json loss_config(const std::string& name) {
  static const std::map<std::string, std::string> classes = {
      {"categorical_crossentropy_from_logits", "CategoricalCrossentropy"},
      {"sparse_categorical_crossentropy_from_logits", "SparseCategoricalCrossentropy"},
      {"binary_crossentropy_from_logits", "BinaryCrossentropy"}};
  auto it = classes.find(name);
  if (it == classes.end()) return name;
  return {{"class_name", it->second},
          {"config", {{"name", without_logits(name)}, {"from_logits", true}}}};
}

NamedScore metric_by_name(const std::string& name, const std::string& loss, int64_t last_dim,
                          const std::string& where) {
  if (name == "acc" || name == "accuracy") {
    // A loss of logits takes the accuracy of the loss it is of.
    std::string canonical = without_logits(loss_by_name(loss, where).name);
    ScoreFn fn = last_dim == 1 || canonical == "binary_crossentropy" ? binary_accuracy
                 : canonical == "sparse_categorical_crossentropy"    ? sparse_categorical_accuracy
                                                                     : categorical_accuracy;
    return {"acc", fn};
  }
  if (name == "binary_accuracy") return {name, binary_accuracy};
  if (name == "categorical_accuracy") return {name, categorical_accuracy};
  if (name == "sparse_categorical_accuracy") return {name, sparse_categorical_accuracy};
  NamedScore s = loss_by_name(name, where);
  return {name, s.fn};  // a loss as a metric keeps the name it was given
}

}  // namespace kb::model
