// Keras 2.2.4's weight regularizers (keras.regularizers.L1L2 and its l1/l2/l1_l2 names).
#pragma once
#include <string>

#include "core/graph/node.h"
#include "core/model/json.h"

namespace kb::model {

// The loss term `regularizer` (a config entry, null for none) adds for weight x; null for none.
NodePtr regularization(const Json& regularizer, const NodePtr& x, const std::string& where);

}  // namespace kb::model
