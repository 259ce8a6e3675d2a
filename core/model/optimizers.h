// Keras' optimizers with their exact update rules and state: Keras 2.2.4's (keras.optimizers),
// and where Keras 3 differs, its rules (KerasRules::keras3: Adagrad's and RMSprop's epsilon
// under the root, Nadam's schedule, RMSprop's momentum and centered form) and its optimizers
// (AdamW, Lion, Lamb, Ftrl, Adafactor); the decoupled weight_decay of Keras 3 and tf.keras
// 2.11+ for all. The updates are graph nodes that a training function applies, the state is
// variables in Keras 2.2.4's order (optimizer.weights), so files carry it both ways.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/graph/node.h"
#include "core/model/json.h"
#include "core/model/keras_rules.h"

namespace kb::model {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // From a name ("adam") or {"class_name", "config"}; `overrides` replaces config entries.
  // `rules`: the Keras whose update rules to follow where versions differ (RMSprop's).
  static std::unique_ptr<Optimizer> make(const Json& spec, const Json& overrides,
                                         KerasRules rules = KerasRules::keras2);

  // What becomes of each gradient before the clipping and the update rule (data-parallel
  // training's reduction across the processes); empty: nothing.
  using GradientTransform = std::function<NodePtr(const NodePtr&)>;
  // The update ops that train `params` to lower `loss` (called once, at compile); a parameter
  // with an entry in `constraints` (Keras' kernel_constraint...) is constrained after each step.
  std::vector<NodePtr> updates(const NodePtr& loss, const std::vector<NodePtr>& params,
                               const std::map<const Node*, Json>& constraints = {},
                               const GradientTransform& transform = {});
  // Keras' optimizer.weights: iterations, then each slot list; valid after updates().
  const std::vector<NodePtr>& weights() const { return weights_; }
  // {"class_name", "config"} as Keras' get_config writes it.
  Json config() const;
  const std::string& class_name() const { return class_name_; }
  const NodePtr& iterations() const { return iterations_; }
  // Whether the rate comes from a schedule (Keras 3 then keeps no learning-rate variable).
  bool scheduled() const { return !schedule_.is_null(); }
  // Keras' optimizer.learning_rate: the rate the next step takes (a schedule's at the
  // iterations done; Keras 2.2.4's lr before its decay).
  double learning_rate();
  // Setting it (the rate variable, in floatx); a rate from a schedule is not settable, as in
  // Keras: that fails with Status::invalid_argument naming `where`.
  void set_learning_rate(double rate, const std::string& where);
  // State Keras 3 keeps after the slots, in its order (Nadam's u_product); not in weights().
  const std::vector<NodePtr>& trailing_state() const { return trailing_; }
  // State Keras 3 keeps before the slots: with use_ema, each variable's moving average.
  const std::vector<NodePtr>& leading_state() const { return averages_; }
  // Every variable of the optimizer's state (iterations, the slots, the moving averages, the
  // trailing state and the hyperparameters), each once; valid after updates().
  std::vector<NodePtr> state() const;
  // Takes the values of `other`'s state, an optimizer of the same class and config whose
  // updates() were made for the same parameters (a training step built again).
  void take_state_of(const Optimizer& other);
  // Keras 3's finalize_variable_values, at the end of fit: with use_ema, the trained variables
  // take their moving averages.
  void finalize();

 protected:
  Optimizer(std::string class_name, const Json& config);
  static std::unique_ptr<Optimizer> make_of_class(const Json& spec, const Json& overrides);
  virtual std::vector<NodePtr> rule(const std::vector<NodePtr>& params,
                                    const std::vector<NodePtr>& grads) = 0;
  // A floatx hyperparameter variable (Keras' K.variable(lr, name='lr')), kept for config();
  // decayed_lr() reads "lr" (each optimizer's first) and "decay".
  NodePtr hyper(const char* key, double fallback);
  // The rate of this step: a schedule's at the iterations done (Keras 3, tf.keras); Keras
  // 2.2.4's lr * 1 / (1 + decay * iterations) when decay was given; else lr.
  NodePtr decayed_lr();
  NodePtr slot(const NodePtr& like, double value = 0);  // K.zeros(K.int_shape(p), K.dtype(p))
  // A slot for each, in order (filled with `value`).
  std::vector<NodePtr> slots(const std::vector<NodePtr>& params, double value = 0);
  // The value parameter i's update starts from: the parameter, less the decoupled weight decay
  // p * weight_decay * lr that Keras 3 and tf.keras 2.11+ apply before the update.
  const NodePtr& start(size_t i) const { return starts_[i]; }
  // new_p under p's constraint, if it has one.
  NodePtr constrained(const NodePtr& p, const NodePtr& new_p) const;
  // Keras 3's use_ema: each parameter's moving average after the update step (`ups`, whose
  // updates of the parameters it rewrites), and the parameters' constraints after it.
  void with_moving_averages(const std::vector<NodePtr>& params, std::vector<NodePtr>& ups);
  // get_config's entries that are not hyperparameter variables (epsilon, nesterov...).
  virtual void extra_config(Json& config) const = 0;

  std::string class_name_, where_;
  Json config_, schedule_;  // schedule_: the learning_rate's schedule, null for a number
  NodePtr iterations_;
  std::vector<NodePtr> weights_, trailing_, starts_, averages_, params_;
  std::vector<std::pair<std::string, NodePtr>> hypers_;
  double initial_decay_ = 0, clipnorm_ = 0, clipvalue_ = 0, global_clipnorm_ = 0, weight_decay_ = 0,
         ema_momentum_ = 0.99;
  bool use_ema_ = false, deferring_constraints_ = false;
  int64_t ema_overwrite_frequency_ = 0;  // 0: never
  KerasRules rules_ = KerasRules::keras2;
  std::map<const Node*, Json> constraints_;
};

}  // namespace kb::model
