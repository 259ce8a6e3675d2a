// Keras 3's ModelCheckpoint: the model (or its weights) saved at each epoch's end or every
// save_freq batches, to a filepath formatted with the epoch, the batch and the logged values;
// save_best_only saves only when the monitored value improves.
#include <cstdio>
#include <filesystem>
#include <optional>

#include "core/model/callbacks/callback.h"
#include "core/model/callbacks/frequency.h"
#include "core/model/callbacks/format_path.h"
#include "core/model/callbacks/monitor.h"
#include "core/model/model_file.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

class ModelCheckpoint : public Callback {
 public:
  bool writes_files() const override { return true; }
  ModelCheckpoint(const Json& c, const std::string& where)
      : monitor_(c, "ModelCheckpoint", where),
        where_(where),
        filepath_(c["filepath"].get<std::string>()),
        verbose_(c["verbose"].get<int64_t>()),
        save_best_only_(c["save_best_only"].get<bool>()),
        save_weights_only_(c["save_weights_only"].get<bool>()) {
    save_freq_ = batch_frequency(c["save_freq"], "save_freq", false, where);
    if (c.contains("initial_value_threshold") && c["initial_value_threshold"].is_number())
      best_ = c["initial_value_threshold"].get<double>();
    if (save_weights_only_)
      check(filepath_.ends_with(".weights.h5"), Status::invalid_argument, where,
            ": with save_weights_only the filepath must end in .weights.h5 (Keras' weights "
            "format), not \"",
            filepath_, "\"");
    else
      check(filepath_.ends_with(".keras") || filepath_.ends_with(".h5"), Status::invalid_argument,
            where, ": the filepath must end in .keras (Keras' model format) or .h5, not \"",
            filepath_, "\"");
  }

  void on_train_batch_end(FitContext& fit, int64_t epoch, int64_t batch, Json& logs) override {
    if (save_freq_ == 0) return;
    // Keras counts the batches since the last save across epochs.
    int64_t added = last_batch_ < 0 || batch <= last_batch_ ? batch + 1 : batch - last_batch_;
    last_batch_ = batch;
    seen_ += added;
    if (seen_ < save_freq_) return;
    seen_ = 0;
    save(fit, epoch, batch, logs);
  }

  void on_epoch_end(FitContext& fit, int64_t epoch, Json& logs) override {
    monitor_.decide();
    if (save_freq_ == 0) save(fit, epoch, -1, logs);
  }

 private:
  void save(FitContext& fit, int64_t epoch, int64_t batch, const Json& logs) {
    Json values = logs;
    values["epoch"] = epoch + 1;
    if (batch >= 0 && !logs.contains("batch")) values["batch"] = batch + 1;
    std::string path = format_path(filepath_, values, where_);
    if (!should_save(epoch, logs, path)) return;
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    check(!std::filesystem::is_directory(path, ec), Status::io, where_,
          ": the filepath is an existing directory: ", path);
    if (save_weights_only_)
      save_weights(fit.model, path);
    else
      save_model(fit.model, path, true);
    if (verbose_ > 0)
      std::fprintf(stderr, "\nEpoch %lld: finished saving model to %s\n", (long long)epoch + 1,
                   path.c_str());
  }

  bool should_save(int64_t epoch, const Json& logs, const std::string& path) {
    if (!save_best_only_) {
      if (verbose_ > 0)
        std::fprintf(stderr, "\nEpoch %lld: saving model to %s\n", (long long)epoch + 1,
                     path.c_str());
      return true;
    }
    std::optional<double> current = monitor_.value(logs);
    if (!current) {  // Keras warns and saves
      monitor_.warn_missing(logs, "Saving the best model only");
      return true;
    }
    char best[32] = "None";
    if (best_) std::snprintf(best, sizeof best, "%.5f", *best_);
    if (monitor_.improves(*current, best_)) {
      if (verbose_ > 0)
        std::fprintf(stderr, "\nEpoch %lld: %s improved from %s to %.5f, saving model to %s\n",
                     (long long)epoch + 1, monitor_.name().c_str(), best, *current, path.c_str());
      best_ = current;
      return true;
    }
    if (verbose_ > 0)
      std::fprintf(stderr, "\nEpoch %lld: %s did not improve from %s\n", (long long)epoch + 1,
                   monitor_.name().c_str(), best);
    return false;
  }

  Monitor monitor_;
  std::string where_, filepath_;
  int64_t verbose_;
  bool save_best_only_, save_weights_only_;
  int64_t save_freq_ = 0;  // 0: each epoch
  int64_t seen_ = 0, last_batch_ = -1;
  std::optional<double> best_;
};

}  // namespace

std::shared_ptr<Callback> make_model_checkpoint(const Json& config, const std::string& where) {
  return std::make_shared<ModelCheckpoint>(config, where);
}

}  // namespace kb::model
