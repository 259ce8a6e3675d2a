// Keras 3's TensorBoard: event files under log_dir/train and log_dir/validation that TensorBoard
// reads. At each epoch's end epoch_<name> of the training values and the learning rate (step:
// the epoch), epoch_<name> of the validation values and evaluation_<name>_vs_iterations (step:
// the optimizer's iterations); with update_freq n (or "batch": 1), batch_<name> of the running
// values at every n-th batch of the whole fit (step: that batch, from 1); with
// write_steps_per_second, the training steps per second. Histograms, images, profiles,
// embeddings and the graph are not written (write_graph is taken and has no effect).
#include <chrono>
#include <memory>
#include <optional>

#include "core/compile/function.h"
#include "core/model/callbacks/callback.h"
#include "core/model/callbacks/frequency.h"
#include "core/model/callbacks/event_file.h"
#include "core/model/training.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

using Scalars = std::vector<std::pair<std::string, double>>;
using Clock = std::chrono::steady_clock;

class TensorBoard : public Callback {
 public:
  bool writes_files() const override { return true; }
  TensorBoard(const Json& c, const std::string& where)
      : where_(where),
        log_dir_(c["log_dir"].get<std::string>()),
        steps_per_second_(c["write_steps_per_second"].get<bool>()) {
    for (const char* key : {"histogram_freq", "profile_batch", "embeddings_freq"})
      check(c[key].get<int64_t>() == 0, Status::not_implemented, where, ": ", key,
            " other than 0 is not supported (no histograms, profiles or embeddings are written)");
    check(!c["write_images"].get<bool>(), Status::not_implemented, where,
          ": write_images is not supported");
    update_freq_ = batch_frequency(c["update_freq"], "update_freq", true, where);
  }

  void on_train_begin(FitContext&) override { global_batch_ = 0; }

  void on_epoch_begin(FitContext& fit, int64_t) override {
    epoch_start_ = Clock::now();
    epoch_start_iterations_ = iterations(fit);
  }

  void on_train_batch_begin(FitContext&, int64_t, int64_t) override {
    ++global_batch_;
    batch_start_ = Clock::now();
  }

  void on_train_batch_end(FitContext&, int64_t, int64_t, Json& logs) override {
    if (update_freq_ == 0 || global_batch_ % update_freq_ != 0) return;
    Scalars values;
    if (steps_per_second_)
      values.emplace_back("batch_steps_per_second", 1.0 / seconds_since(batch_start_));
    for (auto it = logs.begin(); it != logs.end(); ++it)
      if (it.value().is_number())
        values.emplace_back("batch_" + it.key(), it.value().get<double>());
    writer(train_, "train").scalars(global_batch_, values);
  }

  void on_epoch_end(FitContext& fit, int64_t epoch, Json& logs) override {
    Scalars train, validation, evaluation;
    for (auto it = logs.begin(); it != logs.end(); ++it) {
      if (!it.value().is_number()) continue;
      double v = it.value().get<double>();
      if (it.key().rfind("val_", 0) == 0) {
        validation.emplace_back("epoch_" + it.key().substr(4), v);
        evaluation.emplace_back("evaluation_" + it.key().substr(4) + "_vs_iterations", v);
      } else if (it.key() != "learning_rate") {
        train.emplace_back("epoch_" + it.key(), v);
      }
    }
    train.emplace_back("epoch_learning_rate", fit.training.optimizer().learning_rate());
    int64_t its = iterations(fit);
    if (steps_per_second_)
      train.emplace_back("epoch_steps_per_second",
                         double(its - epoch_start_iterations_) / seconds_since(epoch_start_));
    writer(train_, "train").scalars(epoch, train);
    if (!validation.empty()) {
      EventFile& val = writer(validation_, "validation");
      val.scalars(epoch, validation);
      val.scalars(its, evaluation);
    }
  }

  void on_train_end(FitContext&) override {
    train_.reset();
    validation_.reset();
  }

 private:
  EventFile& writer(std::unique_ptr<EventFile>& w, const char* folder) {
    if (!w) w = std::make_unique<EventFile>(log_dir_ + "/" + folder, where_);
    return *w;
  }

  static int64_t iterations(FitContext& fit) {
    auto v = convert_buffer(evaluate(fit.training.optimizer().iterations()), DType::i64);
    return *v->as<int64_t>();
  }

  static double seconds_since(Clock::time_point start) {
    double s = std::chrono::duration<double>(Clock::now() - start).count();
    return s > 0 ? s : 1e-9;
  }

  std::string where_, log_dir_;
  bool steps_per_second_;
  int64_t update_freq_ = 0;  // 0: each epoch only
  int64_t global_batch_ = 0, epoch_start_iterations_ = 0;
  Clock::time_point epoch_start_, batch_start_;
  std::unique_ptr<EventFile> train_, validation_;
};

}  // namespace

std::shared_ptr<Callback> make_tensorboard(const Json& config, const std::string& where) {
  return std::make_shared<TensorBoard>(config, where);
}

}  // namespace kb::model
