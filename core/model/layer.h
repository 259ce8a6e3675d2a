// A Keras layer: its config, its weights (Keras' order and names) and the graph it builds on its
// inputs with the backend's graph builders, as Keras 2.2.4's layer of that class does. Layers are
// rows of a registry keyed by Keras' class name (LayerRegistrar), one file per family.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/graph/node.h"
#include "core/model/json.h"
#include "core/model/keras_rules.h"

namespace kb::model {

class Model;

using Tensors = std::vector<NodePtr>;

// A layer's outputs and their masks (null: none), as Keras' Node keeps them.
struct Applied {
  std::vector<NodePtr> outputs, masks;
};

// What a call of a layer passes beside its first argument (the inputs): tensors by the name of
// their parameter (MultiHeadAttention's value, key and attention_mask) with their masks, and
// the other arguments as the config wrote them (use_causal_mask).
struct CallArguments {
  std::map<std::string, NodePtr> tensors, masks;
  Json values = Json::object();
};

struct Weight {
  std::string name;  // Keras' weight name: "dense_1/kernel"
  NodePtr variable;
  bool trainable = true;
  Json constraint;   // Keras' kernel_constraint...: null for none
  std::string role;  // the name its layer gave it ("kernel"; `name` is unique in the session)
};

// What the weights of a model being built may take: while one is in scope on the thread, each
// weight a layer adds is counted against it before anything is allocated, and one that would
// pass it fails naming the layer and the weight. For a file's weights (`from_file`) the weights
// start as zeros rather than by their initializers: the file replaces every one (a load that
// cannot fails), and an initializer's work (Orthogonal's on a large layer) would be spent before
// the file is compared with the config.
class WeightBudget {
 public:
  // `source` says what bounds it in messages ("the file's 45 KB", "this host's memory").
  WeightBudget(uint64_t bytes, std::string source, bool from_file);
  ~WeightBudget();
  WeightBudget(const WeightBudget&) = delete;
  WeightBudget& operator=(const WeightBudget&) = delete;
  // The budget of a file storing `stored` bytes: each value stored once, in at least a quarter
  // of the bytes of the variable it fills (float16 for float64).
  static uint64_t of_file(uint64_t stored) { return stored * 4 + (uint64_t(1) << 20); }
  // The innermost budget in scope on this thread, or null.
  static WeightBudget* current();
  bool from_file() const { return from_file_; }
  // Counts a weight of `shape` and `dtype`; fails when the budget cannot hold it.
  void take(const Dims& shape, DType dtype, const std::string& weight, const std::string& where);

 private:
  uint64_t left_;
  std::string source_;
  bool from_file_;
  WeightBudget* outer_;
};

// The memory of the host (the budget of a model built from a config alone).
uint64_t host_memory_bytes();

class Layer {
 public:
  Layer(std::string class_name, Json config);
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  const std::string& name() const { return name_; }
  const std::string& class_name() const { return class_name_; }
  const Json& config() const { return config_; }
  // "layer 'dense_1' (Dense)": how messages name the layer.
  const std::string& where() const { return where_; }
  bool trainable() const { return trainable_; }
  // The Keras whose training rules the layer follows (current_keras_rules() when it was made).
  KerasRules rules() const { return rules_; }

  // The layer applied to `inputs` with their masks (one per input, null for none; fewer: none)
  // as a node of the model's graph; the first call builds the weights from the inputs' shapes.
  // Calls with other inputs share them (shared layers).
  Applied apply(const Tensors& inputs, const Tensors& masks, const CallArguments& arguments = {});
  Tensors operator()(const Tensors& inputs) { return apply(inputs, {}).outputs; }
  bool built() const { return built_; }
  // The shapes of the outputs of its first application (model.summary shows them).
  const std::vector<Shape>& output_shapes() const { return output_shapes_; }
  // The ids of the nodes its applications returned (to name the layer a node belongs to).
  const std::vector<uint64_t>& output_ids() const { return output_ids_; }

  // Keras' layer.weights: the trainable weights, then the others, each in the order added (a
  // layer whose Keras orders them otherwise says so).
  virtual std::vector<Weight> weights() const;
  std::vector<NodePtr> trainable_variables() const;
  // Keras' layer.set_weights: one value per weight, of its shape; checked before any is set.
  void set_weights(const std::vector<std::shared_ptr<Buffer>>& values) const;
  // Terms the layer adds to the loss (its regularizers), and its state updates.
  const Tensors& losses() const { return losses_; }
  const Tensors& updates() const { return updates_; }
  // The updates of a stateful layer's states (among updates() too): Keras runs them in every
  // function of the model, predict and evaluate included.
  const Tensors& state_updates() const { return state_updates_; }
  // Keras' layer.reset_states(): a stateful layer's states back to zeros.
  virtual void reset_states() {}
  // The names of the parameters of the layer's call after the first that take tensors, in
  // their order (Keras 3 files pass them by position, tf.keras files by name); a layer whose
  // call takes tensors only in its first argument has none.
  virtual std::vector<std::string> tensor_parameters() const { return {}; }
  // Where Keras 3 keeps each of weights() in a .keras file's weights, below the layer's own
  // group ("query_dense/vars/0"; "" for one it does not keep, zeros when a file is read); no
  // paths: vars/<i> (or the cell's or the wrapped layer's, by the readers' general rule).
  virtual std::vector<std::string> keras3_weight_paths() const { return {}; }
  // What Keras 3 keeps of weights()[i] (the weight itself; a LoRA layer's kernel merged).
  virtual NodePtr keras3_saved_value(size_t i) const;
  // Further copies Keras 3 keeps of some of weights() (path below the layer's group, index in
  // weights()): written with the file, not read (SpectralNormalization's kernel).
  virtual std::vector<std::pair<std::string, size_t>> keras3_weight_copies() const { return {}; }
  // Why the layer cannot be trained through ("" when it can): a random augmentation whose
  // training transform the library does not draw (identity in predict and evaluate).
  virtual std::string training_refusal() const { return ""; }
  // The model a nested model's layer runs (Keras' nested Sequential and functional models);
  // null for other layers.
  virtual const Model* nested_model() const { return nullptr; }

 protected:
  virtual void build(const std::vector<Shape>& input_shapes);
  virtual Tensors call(const Tensors& inputs) = 0;
  // Keras' supports_masking and compute_mask: the outputs' masks from masks_ (the inputs').
  virtual bool supports_masking() const { return false; }
  virtual Tensors compute_mask(const Tensors& inputs, const Tensors& outputs);
  // The masks of the inputs of the call under way (null entries: unmasked), and whether any is.
  const Tensors& masks() const { return masks_; }
  // The other arguments of the call under way.
  const CallArguments& arguments() const { return arguments_; }
  bool masked() const;
  // The single input of a layer that takes one.
  const NodePtr& single(const Tensors& inputs) const;
  // A weight named `name` of `shape`, initialized by the config's entry named by
  // `initializer_key` ("kernel_initializer"), regularized and constrained by the entries named
  // by `regularizer_key` and `constraint_key` when present.
  NodePtr add_weight(const std::string& name, const Dims& shape, const char* initializer_key,
                     const char* regularizer_key = nullptr, const char* constraint_key = nullptr,
                     bool trainable = true);
  // The same with the initializer given (a custom layer's).
  NodePtr add_weight_initialized(const std::string& name, const Dims& shape,
                                 const Json& initializer, const char* regularizer_key,
                                 const char* constraint_key, bool trainable);
  // The same of its own dtype (Normalization's int count), neither regularized nor constrained.
  NodePtr add_weight_of(const std::string& name, const Dims& shape, DType dtype,
                        const Json& initializer, bool trainable);
  // The same with its first value given (LSTM's bias with unit_forget_bias).
  NodePtr add_weight_value(const std::string& name, const std::shared_ptr<Buffer>& value,
                           const char* regularizer_key, const char* constraint_key,
                           bool trainable = true);
  // A wrapper's inner layer: its weights, losses and updates become this layer's too (after
  // the inner layer's first call, which builds them).
  void adopt(const Layer& inner);
  // Keras' variable_dtype and compute_dtype: they differ under a mixed policy (mixed_bfloat16).
  DType dtype() const { return dtype_; }
  DType compute_dtype() const { return compute_dtype_; }
  // Keras' layer.autocast: under a mixed policy the layer's floating inputs are cast to its
  // compute dtype and the add_weight calls return its trainable floating weights read as it. A
  // layer that says no (the normalizations, Embedding) computes in its variables' dtype, its
  // inputs cast to it, and its results are cast to the compute dtype.
  virtual bool autocast() const { return true; }
  Tensors losses_, updates_, state_updates_;
  std::string where_;
  // weights() in the order added, trainable or not (Keras 3 lists a LoRA layer's frozen kernel
  // where it was made).
  bool weights_as_added_ = false;

 private:
  // A weight's first value: zeros for a file's weights, else its initializer's (counted
  // against the budget in scope first).
  std::shared_ptr<Buffer> first_value(const std::string& name, const Dims& shape, DType dtype,
                                      const Json& initializer) const;
  NodePtr attach_weight(const std::string& name, const std::shared_ptr<Buffer>& value,
                        const char* regularizer_key, const char* constraint_key, bool trainable,
                        DType dtype);
  // call() under the layer's dtype policy: its inputs and results converted.
  Tensors converted_call(const Tensors& inputs);
  std::string class_name_, name_;
  Json config_;
  bool trainable_ = true, built_ = false;
  KerasRules rules_ = current_keras_rules();
  DType dtype_, compute_dtype_;
  std::vector<Weight> weights_;
  std::vector<Shape> output_shapes_;
  std::vector<uint64_t> output_ids_;
  Tensors masks_;
  CallArguments arguments_;
};

using LayerFactory = std::function<std::shared_ptr<Layer>(const Json& config)>;

// Registers a layer class under Keras' class name (at load time, one per row).
struct LayerRegistrar {
  LayerRegistrar(const char* class_name, LayerFactory factory);
};

// The class names of the built-in layers.
std::set<std::string>& builtin_classes();
// Registers a layer class at run time (a custom layer); a built-in class name is refused.
void register_layer_class(const std::string& class_name, LayerFactory factory);

// A new layer of `class_name` from its config; an unknown class fails naming the layer.
std::shared_ptr<Layer> make_layer(const std::string& class_name, const Json& config);
bool is_layer_class(const std::string& class_name);

}  // namespace kb::model
