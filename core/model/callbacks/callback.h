// Keras' callbacks that fit runs natively (keras.callbacks), each with Keras 3's arguments and
// behaviour, made from fit's "callbacks" option ({"class_name", "config"} objects). The hooks
// are Keras' own, called in the order the list gives, before the program's callback function,
// the history and the progress bar, as Keras 3's CallbackList orders them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/model/json.h"

namespace kb::model {

class Model;
class Training;

// What a callback sees of the fit that runs it, and may change.
struct FitContext {
  Model& model;
  Training& training;
  int64_t epochs = 0;          // fit's epochs (the index training stops before)
  int64_t initial_epoch = 0;   // where training starts: on_train_begin may move it (a backup's)
  bool stop_training = false;  // Keras' model.stop_training
};

class Callback {
 public:
  virtual ~Callback() = default;
  virtual void on_train_begin(FitContext&) {}
  virtual void on_epoch_begin(FitContext&, int64_t /*epoch*/) {}
  virtual void on_train_batch_begin(FitContext&, int64_t /*epoch*/, int64_t /*batch*/) {}
  // logs: the epoch's running means so far ({"loss": ..., "accuracy": ...}), as Keras 3 gives.
  virtual void on_train_batch_end(FitContext&, int64_t /*epoch*/, int64_t /*batch*/,
                                  Json& /*logs*/) {}
  // logs: the epoch's values, val_ ones included; a callback may add to them (learning_rate).
  virtual void on_epoch_end(FitContext&, int64_t /*epoch*/, Json& /*logs*/) {}
  virtual void on_train_end(FitContext&) {}
  // Whether it writes files (checkpoints, logs): in a data-parallel fit rank 0 alone runs it.
  virtual bool writes_files() const { return false; }
};

using Callbacks = std::vector<std::shared_ptr<Callback>>;

// The callbacks of a "callbacks" list, each config checked against its class's arguments
// (core/model/option_sets.h, from api/kbackend.toml) and completed with Keras' defaults; an
// unknown class, key or value fails with Status::invalid_argument naming `where`.
Callbacks make_callbacks(const Json& list, const std::string& where);

// The classes, one file each; `config` holds every argument (defaults filled in).
std::shared_ptr<Callback> make_early_stopping(const Json& config, const std::string& where);
std::shared_ptr<Callback> make_model_checkpoint(const Json& config, const std::string& where);
std::shared_ptr<Callback> make_reduce_lr_on_plateau(const Json& config, const std::string& where);
std::shared_ptr<Callback> make_csv_logger(const Json& config, const std::string& where);
std::shared_ptr<Callback> make_terminate_on_nan(const Json& config, const std::string& where);
std::shared_ptr<Callback> make_backup_and_restore(const Json& config, const std::string& where);
std::shared_ptr<Callback> make_tensorboard(const Json& config, const std::string& where);

}  // namespace kb::model
