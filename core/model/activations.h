// Keras 2.2.4's activations (keras.activations) by name, applied with the backend's builders.
#pragma once
#include <string>

#include "core/graph/node.h"
#include "core/model/json.h"

namespace kb::model {

// `activation`: a name, null or "linear" (the identity), or tf.keras' {"class_name", "config"}.
NodePtr activate(const Json& activation, const NodePtr& x, const std::string& where);

}  // namespace kb::model
