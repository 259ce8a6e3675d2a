// Keras 2.2.4's losses (keras.losses) and metrics (keras.metrics) by name: per-sample scores
// built with the backend's functions, as Keras writes them.
#pragma once
#include <string>

#include "core/graph/node.h"
#include "core/model/json.h"

namespace kb::model {

using ScoreFn = NodePtr (*)(const NodePtr& y_true, const NodePtr& y_pred);

struct NamedScore {
  std::string name;  // Keras' canonical name ("mean_squared_error")
  ScoreFn fn = nullptr;
};

// A loss by Keras' name or alias ("mse"); unknown names fail naming `where`. A crossentropy of
// logits (Keras' from_logits=True) is named NAME_from_logits ("binary_crossentropy_from_logits").
NamedScore loss_by_name(const std::string& name, const std::string& where);
// The name of the crossentropy `base` of logits ("binary_crossentropy_from_logits"), and the loss
// a name is of logits of (itself for a loss of probabilities).
std::string of_logits(const std::string& base);
std::string without_logits(const std::string& name);
// How a training_config writes a loss: its name, or Keras' object form for one of logits
// ({"class_name": "BinaryCrossentropy", "config": {"from_logits": true, ...}}).
Json loss_config(const std::string& name);

// A metric as Keras 2.2.4 compiles it: "acc"/"accuracy" become binary, sparse or categorical
// accuracy after the output's last dim and the loss; the name is the history's key ("acc").
NamedScore metric_by_name(const std::string& name, const std::string& loss, int64_t output_last_dim,
                          const std::string& where);

}  // namespace kb::model
