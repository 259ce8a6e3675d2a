#include "core/model/callbacks/monitor.h"

#include <cmath>
#include <cstdio>

#include "core/util/error.h"

namespace kb::model {
namespace {

// Keras 3's metrics' _direction by the end of their names ("output_1_accuracy" is an accuracy):
// the scores rise, the losses and errors fall.
int direction_of(const std::string& name) {
  static const char* const kRising[] = {"accuracy",
                                        "acc",
                                        "auc",
                                        "precision",
                                        "recall",
                                        "f1_score",
                                        "fbeta_score",
                                        "iou",
                                        "io_u",
                                        "r2_score",
                                        "cosine_similarity",
                                        "true_positives",
                                        "true_negatives"};
  static const char* const kFalling[] = {"loss",
                                         "crossentropy",
                                         "mean_squared_error",
                                         "mean_absolute_error",
                                         "mean_absolute_percentage_error",
                                         "mean_squared_logarithmic_error",
                                         "mse",
                                         "mae",
                                         "mape",
                                         "msle",
                                         "hinge",
                                         "squared_hinge",
                                         "categorical_hinge",
                                         "kl_divergence",
                                         "kld",
                                         "kullback_leibler_divergence",
                                         "poisson",
                                         "logcosh",
                                         "log_cosh",
                                         "huber",
                                         "root_mean_squared_error",
                                         "false_positives",
                                         "false_negatives"};
  for (const char* n : kFalling)
    if (name == n || name.ends_with(std::string("_") + n)) return -1;
  for (const char* n : kRising)
    if (name == n || name.ends_with(std::string("_") + n)) return 1;
  return 0;
}

}  // namespace

Monitor::Monitor(const Json& config, const char* class_name, const std::string& where)
    : name_(config["monitor"].get<std::string>()),
      mode_(config["mode"].get<std::string>()),
      class_name_(class_name),
      where_(where),
      min_delta_(std::fabs(config.contains("min_delta") ? config["min_delta"].get<double>() : 0)) {
  // Keras warns of another mode and takes "auto".
  if (mode_ != "min" && mode_ != "max") mode_ = "auto";
}

std::optional<double> Monitor::value(const Json& logs) const {
  if (!logs.contains(name_) || !logs[name_].is_number()) return std::nullopt;
  return logs[name_].get<double>();
}

void Monitor::decide() {
  if (direction_ == 0) {
    if (mode_ == "min") direction_ = -1;
    if (mode_ == "max") direction_ = 1;
    if (mode_ == "auto") {
      std::string metric = name_.rfind("val_", 0) == 0 ? name_.substr(4) : name_;
      direction_ = direction_of(metric);
      check(direction_ != 0, Status::invalid_argument, where_, ": ", class_name_,
            " callback received monitor=", name_,
            ", but cannot tell whether that value should be maximized or minimized; pass "
            "mode='max' or mode='min'");
    }
  }
}

bool Monitor::improves(double value, std::optional<double> reference) {
  decide();
  if (!reference) return true;
  // Keras: monitor_op(value - min_delta, reference), min_delta negated where lower is better.
  double delta = direction_ < 0 ? -min_delta_ : min_delta_;
  return direction_ < 0 ? value - delta < *reference : value - delta > *reference;
}

void Monitor::warn_missing(const Json& logs, const char* what) {
  if (warned_) return;
  warned_ = true;
  std::string available;
  for (auto it = logs.begin(); it != logs.end(); ++it)
    available += (available.empty() ? "" : ",") + it.key();
  std::fprintf(stderr,
               "%s: %s conditioned on `%s`, which is not available. Available metrics "
               "are: %s\n",
               class_name_.c_str(), what, name_.c_str(), available.c_str());
}

}  // namespace kb::model
