// Keras 2.2.4's losses (keras.losses) and metrics (keras.metrics) by name: per-sample scores
// built with the backend's functions, as Keras writes them.
#pragma once
#include <string>

#include "core/graph/node.h"

namespace kb::model {

using ScoreFn = NodePtr (*)(const NodePtr& y_true, const NodePtr& y_pred);

struct NamedScore {
  std::string name;  // Keras' canonical name ("mean_squared_error")
  ScoreFn fn = nullptr;
};

// A loss by Keras' name or alias ("mse"); unknown names fail naming `where`.
NamedScore loss_by_name(const std::string& name, const std::string& where);

// A metric as Keras 2.2.4 compiles it: "acc"/"accuracy" become binary, sparse or categorical
// accuracy after the output's last dim and the loss; the name is the history's key ("acc").
NamedScore metric_by_name(const std::string& name, const std::string& loss, int64_t output_last_dim,
                          const std::string& where);

}  // namespace kb::model
