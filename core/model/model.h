// A Keras model as a graph of layers, made from Keras' model config (Sequential or functional
// Model: several inputs and outputs, shared layers), with its layers' weights in Keras' order.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/compile/function.h"
#include "core/model/keras_rules.h"
#include "core/model/layer.h"

namespace kb::model {

class Training;
struct Keras3Origin;  // core/model/saving/keras3_file.h

class Model {
 public:
  // From {"class_name": "Sequential" | "Model" | "Functional", "config": ...} (model_config).
  static std::shared_ptr<Model> from_config(const Json& model_config);
  ~Model();

  const std::string& name() const { return name_; }
  const std::string& class_name() const { return class_name_; }
  // The Keras whose training rules the model follows (its layers' and its optimizer's).
  KerasRules rules() const { return rules_; }
  const Json& config() const { return config_; }  // the model_config it was made from
  // Keras' model.layers (a Sequential's input layer left out).
  const std::vector<std::shared_ptr<Layer>>& layers() const { return layers_; }
  std::shared_ptr<Layer> layer(const std::string& name) const;  // null when absent
  const Tensors& inputs() const { return inputs_; }
  const Tensors& outputs() const { return outputs_; }
  // Each output's mask (null: none), which the loss and metrics honour (Keras' output masks).
  const Tensors& output_masks() const { return output_masks_; }
  const std::vector<std::string>& input_names() const { return input_names_; }
  const std::vector<std::string>& output_names() const { return output_names_; }

  // The model's layers applied again to other tensors (a model used as a layer).
  Tensors apply(const Tensors& inputs);

  // Per layer, its inbound connections as Keras' summary names them ("dense_1[0][0]"), and
  // whether the model reads as a chain (Keras prints such functional models as a Sequential).
  const std::vector<std::vector<std::string>>& connections() const { return connections_; }
  bool sequential_like() const { return sequential_like_; }

  std::vector<Weight> weights() const;  // every layer's, in layer order
  int64_t count_params() const;         // Keras' count_params(): the weights' values, all
  std::vector<NodePtr> trainable_variables() const;
  // The trainable weights' constraints (those that have one).
  std::map<const Node*, Json> constraints() const;
  Tensors losses() const;  // the layers' regularization terms, then those add_loss gave
  // Keras' model.add_loss: a scalar term the total loss of the next compile includes.
  void add_loss(const NodePtr& term);
  Tensors updates() const;        // the layers' updates (moving averages, states)
  Tensors state_updates() const;  // the stateful layers' (every function runs them)
  void reset_states();

  // The learning phase's placeholder every function of the model is fed (1 to train, 0 to
  // test and predict); null when the phase is fixed (set_learning_phase).
  const NodePtr& phase() const { return phase_; }
  // inputs (and the phase) -> outputs, made on first use.
  Function& predict_function();

  // compile's state: null until compiled.
  Training* training() const { return training_.get(); }
  void set_training(std::unique_ptr<Training> t);
  // What a Keras 3 archive the model was loaded from says, for writing one back; null for a
  // model from another source.
  // The keras_version of the file the model came from ("" for one made from a config): the
  // Keras whose rules it trains by, written again when it is saved.
  const std::string& keras_version() const { return keras_version_; }
  void set_keras_version(std::string v) { keras_version_ = std::move(v); }
  const std::shared_ptr<const Keras3Origin>& keras3_origin() const { return keras3_origin_; }
  void set_keras3_origin(std::shared_ptr<const Keras3Origin> o) { keras3_origin_ = std::move(o); }

 private:
  Model() = default;
  // The graph of the layers on `given` inputs (null: the model's own placeholders, the first
  // time, which makes the layers); returns the outputs.
  Tensors build_sequential(const Json& config, const Tensors* given);
  Tensors build_functional(const Json& config, const Tensors* given);

  std::string name_, class_name_;
  KerasRules rules_ = current_keras_rules();
  Json config_;
  std::vector<std::shared_ptr<Layer>> layers_;
  Tensors inputs_, outputs_, output_masks_;
  std::vector<std::vector<std::string>> connections_;
  Tensors added_losses_;
  bool sequential_like_ = true;
  std::vector<std::string> input_names_, output_names_;
  NodePtr phase_;
  std::unique_ptr<Function> predict_;
  std::unique_ptr<Training> training_;
  std::shared_ptr<const Keras3Origin> keras3_origin_;
  std::string keras_version_;
};

}  // namespace kb::model
