// Keras 2.2.4's optimizers (keras.optimizers) with their exact update rules and state: the
// updates are graph nodes that a training function applies, the state is variables in Keras'
// order (optimizer.weights), so files carry it both ways.
#pragma once
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

  // The update ops that train `params` to lower `loss` (called once, at compile); a parameter
  // with an entry in `constraints` (Keras' kernel_constraint...) is constrained after each step.
  std::vector<NodePtr> updates(const NodePtr& loss, const std::vector<NodePtr>& params,
                               const std::map<const Node*, Json>& constraints = {});
  // Keras' optimizer.weights: iterations, then each slot list; valid after updates().
  const std::vector<NodePtr>& weights() const { return weights_; }
  // {"class_name", "config"} as Keras' get_config writes it.
  Json config() const;
  const std::string& class_name() const { return class_name_; }
  const NodePtr& iterations() const { return iterations_; }

 protected:
  Optimizer(std::string class_name, const Json& config);
  static std::unique_ptr<Optimizer> make_of_class(const Json& spec, const Json& overrides);
  virtual std::vector<NodePtr> rule(const std::vector<NodePtr>& params,
                                    const std::vector<NodePtr>& grads) = 0;
  // A floatx hyperparameter variable (Keras' K.variable(lr, name='lr')), kept for config();
  // decayed_lr() reads "lr" (each optimizer's first) and "decay".
  NodePtr hyper(const char* key, double fallback);
  // Keras 2.2.4: lr * 1 / (1 + decay * iterations) when decay was given, else lr.
  NodePtr decayed_lr();
  NodePtr slot(const NodePtr& like);  // K.zeros(K.int_shape(p), dtype=K.dtype(p))
  std::vector<NodePtr> slots(const std::vector<NodePtr>& params);  // a slot for each, in order
  // new_p under p's constraint, if it has one.
  NodePtr constrained(const NodePtr& p, const NodePtr& new_p) const;
  // get_config's entries that are not hyperparameter variables (epsilon, nesterov...).
  virtual void extra_config(Json& config) const = 0;

  std::string class_name_, where_;
  Json config_;
  NodePtr iterations_;
  std::vector<NodePtr> weights_;
  std::vector<std::pair<std::string, NodePtr>> hypers_;
  double initial_decay_ = 0, clipnorm_ = 0, clipvalue_ = 0, global_clipnorm_ = 0;
  KerasRules rules_ = KerasRules::keras2;
  std::map<const Node*, Json> constraints_;
};

}  // namespace kb::model
