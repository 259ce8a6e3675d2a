// Keras' activations (keras.activations) by name, applied with the backend's builders: Keras
// 2.2.4's and Keras 3's (gelu, silu, mish, ...), each by the formula of the Keras whose rules
// the layer follows where they differ (hard_sigmoid).
#pragma once
#include <string>

#include "core/graph/node.h"
#include "core/model/json.h"
#include "core/model/keras_rules.h"

namespace kb::model {

// `activation`: a name, null or "linear" (the identity), or tf.keras' {"class_name", "config"}.
NodePtr activate(const Json& activation, const NodePtr& x, const std::string& where,
                 KerasRules rules);
// keras.activations.softmax: the backend's softmax for rank 2 (whatever the axis), else
// exp(x - max) / sum over `axis`; rank 1 is an error.
NodePtr softmax_along(const NodePtr& x, int64_t axis, const std::string& where);

}  // namespace kb::model
