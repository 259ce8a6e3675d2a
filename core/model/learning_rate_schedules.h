// Keras 3's learning-rate schedules (keras.optimizers.schedules, and tf.keras 2.x's of the same
// names): the rate at the optimizer's step as a graph value, by each schedule's formula.
#pragma once
#include <string>

#include "core/graph/node.h"
#include "core/model/json.h"

namespace kb::model {

// Whether a learning_rate entry is a schedule ({"class_name": "ExponentialDecay", ...}) rather
// than a number.
bool is_learning_rate_schedule(const Json& learning_rate);

// The rate `schedule` gives at `step` (the updates done so far, a floatx scalar): ExponentialDecay,
// PiecewiseConstantDecay, PolynomialDecay, InverseTimeDecay, CosineDecay (with its warm-up) and
// CosineDecayRestarts. Another class, or a config that does not fit its class, fails naming
// `where`.
NodePtr scheduled_learning_rate(const Json& schedule, const NodePtr& step,
                                const std::string& where);

// The rate at step 0, a number (what an optimizer's config reports as its learning rate).
double initial_learning_rate(const Json& schedule, const std::string& where);

}  // namespace kb::model
