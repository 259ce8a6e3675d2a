// Keras 2.2.4's weight constraints (keras.constraints: MaxNorm, NonNeg, UnitNorm, MinMaxNorm),
// applied by the optimizers to a weight's new value after each step.
#pragma once
#include <string>

#include "core/graph/node.h"
#include "core/model/json.h"

namespace kb::model {

// w under `constraint` ({"class_name", "config"} or a name; null: w itself).
NodePtr constrain(const Json& constraint, const NodePtr& w, const std::string& where);

}  // namespace kb::model
