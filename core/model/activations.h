// Keras 2.2.4's activations (keras.activations) by name, applied with the backend's builders.
#pragma once
#include <string>

#include "core/graph/node.h"
#include "core/model/json.h"

namespace kb::model {

// `activation`: a name, null or "linear" (the identity), or tf.keras' {"class_name", "config"}.
NodePtr activate(const Json& activation, const NodePtr& x, const std::string& where);
// keras.activations.softmax: the backend's softmax for rank 2 (whatever the axis), else
// exp(x - max) / sum over `axis`; rank 1 is an error.
NodePtr softmax_along(const NodePtr& x, int64_t axis, const std::string& where);

}  // namespace kb::model
