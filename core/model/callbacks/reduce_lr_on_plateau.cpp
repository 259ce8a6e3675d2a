// Keras 3's ReduceLROnPlateau: the learning rate times `factor` (not below min_lr) once the
// monitored value has not improved for `patience` epochs, then `cooldown` epochs of rest; each
// epoch's logs get the rate the epoch trained with (learning_rate).
#include <algorithm>
#include <cstdio>
#include <optional>

#include "core/model/callbacks/callback.h"
#include "core/model/callbacks/format_path.h"
#include "core/model/callbacks/monitor.h"
#include "core/model/training.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

class ReduceLROnPlateau : public Callback {
 public:
  ReduceLROnPlateau(const Json& c, const std::string& where)
      : monitor_(c, "ReduceLROnPlateau", where),
        where_(where),
        factor_(c["factor"].get<double>()),
        min_lr_(c["min_lr"].get<double>()),
        patience_(c["patience"].get<int64_t>()),
        verbose_(c["verbose"].get<int64_t>()),
        cooldown_(c["cooldown"].get<int64_t>()) {
    check(factor_ < 1.0, Status::invalid_argument, where,
          ": ReduceLROnPlateau does not support a factor >= 1.0, not ", factor_);
  }

  void on_train_begin(FitContext&) override {
    best_.reset();
    cooldown_counter_ = 0;
    wait_ = 0;
  }

  void on_epoch_end(FitContext& fit, int64_t epoch, Json& logs) override {
    monitor_.decide();
    Optimizer& optimizer = fit.training.optimizer();
    logs["learning_rate"] = optimizer.learning_rate();
    std::optional<double> current = monitor_.value(logs);
    if (!current) {
      monitor_.warn_missing(logs, "Learning rate reduction");
      return;
    }
    if (cooldown_counter_ > 0) {
      --cooldown_counter_;
      wait_ = 0;
    }
    if (monitor_.improves(*current, best_)) {
      best_ = current;
      wait_ = 0;
      return;
    }
    if (cooldown_counter_ > 0 || ++wait_ < patience_) return;
    double old_lr = optimizer.learning_rate();
    // Keras compares the float32 rate with min_lr in float32.
    if (old_lr > double(float(min_lr_))) {
      double new_lr = std::max(old_lr * factor_, min_lr_);
      optimizer.set_learning_rate(new_lr, where_);
      if (verbose_ > 0)
        std::fprintf(stderr, "\nEpoch %lld: ReduceLROnPlateau reducing learning rate to %s.\n",
                     (long long)epoch + 1, python_float_repr(new_lr).c_str());
      cooldown_counter_ = cooldown_;
      wait_ = 0;
    }
  }

 private:
  Monitor monitor_;
  std::string where_;
  double factor_, min_lr_;
  int64_t patience_, verbose_, cooldown_;
  std::optional<double> best_;
  int64_t cooldown_counter_ = 0, wait_ = 0;
};

}  // namespace

std::shared_ptr<Callback> make_reduce_lr_on_plateau(const Json& config, const std::string& where) {
  return std::make_shared<ReduceLROnPlateau>(config, where);
}

}  // namespace kb::model
