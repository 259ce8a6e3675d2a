// Keras 3's EarlyStopping: training stops once the monitored value has not improved for
// `patience` epochs (counted from start_from_epoch); restore_best_weights puts back the weights
// of the best epoch at the end.
#include <cstdio>
#include <optional>

#include "core/model/callbacks/callback.h"
#include "core/model/callbacks/monitor.h"
#include "core/model/callbacks/weights_snapshot.h"

namespace kb::model {
namespace {

class EarlyStopping : public Callback {
 public:
  EarlyStopping(const Json& c, const std::string& where)
      : monitor_(c, "EarlyStopping", where),
        patience_(c["patience"].get<int64_t>()),
        verbose_(c["verbose"].get<int64_t>()),
        start_from_epoch_(c["start_from_epoch"].get<int64_t>()),
        restore_best_weights_(c["restore_best_weights"].get<bool>()) {
    if (c.contains("baseline") && c["baseline"].is_number())
      baseline_ = c["baseline"].get<double>();
  }

  void on_train_begin(FitContext&) override {
    wait_ = 0;
    stopped_epoch_ = 0;
    best_.reset();
    best_weights_.reset();
    best_epoch_ = 0;
  }

  void on_epoch_end(FitContext& fit, int64_t epoch, Json& logs) override {
    monitor_.decide();
    std::optional<double> current = monitor_.value(logs);
    if (!current) monitor_.warn_missing(logs, "Early stopping");
    if (!current || epoch < start_from_epoch_) return;
    if (restore_best_weights_ && !best_weights_) {
      best_weights_ = WeightsSnapshot(fit.model);
      best_epoch_ = epoch;
    }
    ++wait_;
    if (monitor_.improves(*current, best_)) {
      best_ = current;
      best_epoch_ = epoch;
      if (restore_best_weights_) best_weights_ = WeightsSnapshot(fit.model);
      // Patience restarts only for a value that beats the baseline as well.
      if (!baseline_ || monitor_.improves(*current, baseline_)) wait_ = 0;
      return;
    }
    if (wait_ >= patience_ && epoch > 0) {
      stopped_epoch_ = epoch;
      fit.stop_training = true;
    }
  }

  void on_train_end(FitContext& fit) override {
    if (stopped_epoch_ > 0 && verbose_ > 0)
      std::fprintf(stderr, "Epoch %lld: early stopping\n", (long long)stopped_epoch_ + 1);
    if (restore_best_weights_ && best_weights_) {
      if (verbose_ > 0)
        std::fprintf(stderr, "Restoring model weights from the end of the best epoch: %lld.\n",
                     (long long)best_epoch_ + 1);
      best_weights_->restore(fit.model);
    }
  }

 private:
  Monitor monitor_;
  int64_t patience_, verbose_, start_from_epoch_;
  bool restore_best_weights_;
  std::optional<double> baseline_, best_;
  int64_t wait_ = 0, stopped_epoch_ = 0, best_epoch_ = 0;
  std::optional<WeightsSnapshot> best_weights_;
};

}  // namespace

std::shared_ptr<Callback> make_early_stopping(const Json& config, const std::string& where) {
  return std::make_shared<EarlyStopping>(config, where);
}

}  // namespace kb::model
