// compile, fit, evaluate and predict as Keras 2.2.4's training engine runs them: the total loss
// (weighted per sample, per output, plus regularization), the metrics, the optimizer's updates,
// and the loops over batches with Keras' averaging of the logs.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/compile/function.h"
#include "core/model/callbacks/callback.h"
#include "core/model/model.h"
#include "core/model/optimizers.h"

namespace kb::model {

using Buffers = std::vector<std::shared_ptr<Buffer>>;

struct FitOptions {
  int64_t batch_size = 32, epochs = 1, initial_epoch = 0;
  int verbose = 1;
  bool shuffle = true;
  uint64_t seed = 0;  // the shuffle's seed
  double validation_split = 0;
  std::map<int64_t, double> class_weight;  // empty: every class 1
  // Keras' sample_weight: empty, or one vector of per-sample weights per output (taking the
  // place of class_weight).
  Buffers sample_weight;
  // Keras' validation_data (x, y and optionally sample weights); when given, validation_split
  // is not used.
  Buffers validation_x, validation_y, validation_sample_weight;
  // Keras' callbacks, run in order before the callback function (fit's "callbacks" option).
  Callbacks callbacks;
  // One model trained across the processes of the job kb_dist_init joined, batch_size rows
  // each per step (docs/keras_semantics.md, "Data-parallel fit").
  bool distributed = false;
};

// FitOptions from the JSON of kb_model_fit ({"shuffle", "seed", "validation_split",
// "initial_epoch", "class_weight": {"0": 1.0}, "callbacks": [...]}); `where` names it in
// messages.
FitOptions fit_options_from_json(const Json& options, const std::string& where);

// Called after each batch (batch >= 0) and each epoch (batch -1) with the logs so far; true stops
// training (Keras' model.stop_training).
using FitCallback = std::function<bool(int64_t epoch, int64_t batch, const Json& logs)>;

class Training {
 public:
  // losses: one for every output or one for all; loss_weights: empty or one per output.
  Training(Model& model, const Json& optimizer, const Json& optimizer_overrides,
           const std::vector<std::string>& losses, const std::vector<std::string>& metrics,
           const std::vector<double>& loss_weights);

  // "loss", each output's loss when there are several, then the metrics ("acc").
  const std::vector<std::string>& metrics_names() const { return names_; }
  Optimizer& optimizer() { return *optimizer_; }
  // training_config as Keras saves it.
  Json config() const;
  // The graph of training as values to build on: the total loss, the targets' and sample
  // weights' placeholders (the functions' inputs after the model's), the updates.
  const NodePtr& total_loss() const { return total_; }
  const Tensors& targets() const { return targets_; }
  const Tensors& sample_weights() const { return sample_weights_; }
  // (The one-process step's: after a distributed fit, made again.)
  const Tensors& training_updates() {
    if (distributed_) build_step(false);
    return updates_;
  }

  std::vector<double> train_on_batch(const Buffers& x, const Buffers& y);
  std::vector<double> test_on_batch(const Buffers& x, const Buffers& y);
  // The per-epoch history: {"loss": [...], "acc": [...], "val_loss": [...]}.
  Json fit(const Buffers& x, const Buffers& y, const FitOptions& options,
           const FitCallback& callback);
  // sample_weight: empty, or one vector per output.
  std::vector<double> evaluate(const Buffers& x, const Buffers& y, int64_t batch_size, int verbose,
                               const Buffers& sample_weight = {});

 private:
  Buffers feed(const Buffers& x, const Buffers& y, const Buffers& sample_weights, bool training);
  std::vector<double> run(Function& f, const Buffers& ins);
  // The optimizer and the training step: with `distributed` the gradients are summed over the
  // processes, each weighed by its share of the global batch (the step's last input), and the
  // layers' updates averaged. Made at compile and again when fit changes `distributed`, the
  // optimizer's state carried over.
  void build_step(bool distributed);
  // The losses and metrics of the rows [0, n) of x and y, batch_size at a time, as sums over
  // the samples (Averages' sums and count); with `shard` the process' share of the rows only.
  std::vector<double> evaluate_sums(const Buffers& x, const Buffers& y, int64_t batch_size,
                                    int verbose, const Buffers& sample_weight, bool shard,
                                    int64_t* seen);
  std::vector<double> on_batch(Function& f, const Buffers& x, const Buffers& y, bool training,
                               const char* who);
  Buffers given_weights(const Buffers& w, int64_t n, const char* who) const;
  Buffers target_arrays(const Buffers& y) const;
  // The target arrays as the steps take them (1-D ones as columns), after x and y are checked
  // against the model's inputs and outputs (counts, ranks, dims), naming `who`.
  Buffers checked_targets(const Buffers& x, const Buffers& y, const char* who) const;
  // Data-parallel fit's start: the processes' data and options compared, then rank 0's weights,
  // optimizer state and initial epoch (a backup's, which rank 0 alone restores) taken by all.
  void start_together(FitContext& context, const FitOptions& o, int64_t samples,
                      int64_t validation_samples);
  // The training step, unless a layer cannot be trained through (then an error naming it),
  // made for one process or for all of the job's.
  Function& train_function(const char* who, bool distributed = false);

  Model& model_;
  Json optimizer_spec_, optimizer_overrides_;
  std::unique_ptr<Optimizer> optimizer_;
  std::vector<std::string> losses_, metrics_, names_;
  std::vector<Shape> target_shapes_;  // what each output's target must fit
  std::vector<double> loss_weights_;
  Tensors targets_, sample_weights_, updates_;
  NodePtr total_;
  NodePtr phase_;                  // the learning phase placeholder, null when the phase is fixed
  Tensors step_inputs_, results_;  // the functions' inputs (the phase last) and results
  bool distributed_ = false;       // what train_ was made for
  std::unique_ptr<Function> train_, test_;
  std::string refusal_;  // why the model cannot train ("" when it can)
};

// Keras' predict: the outputs for x, run batch_size rows at a time (learning phase 0).
Buffers predict(Model& model, const Buffers& x, int64_t batch_size, int verbose);
Buffers predict_on_batch(Model& model, const Buffers& x);

// Rows [start, end) of a host buffer along its first axis, sharing its storage.
std::shared_ptr<Buffer> rows_of(const std::shared_ptr<Buffer>& b, int64_t start, int64_t end);

}  // namespace kb::model
