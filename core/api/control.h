// learning_phase, switch, in_train_phase, in_test_phase (Keras TF semantics,
// docs/keras_semantics.md section 10).
#pragma once
#include <functional>
#include <optional>

#include "core/graph/node.h"

namespace kb::api {

// A branch: a tensor, or a function that builds one (called when the graph is built).
using Branch = std::function<NodePtr()>;

// The learning phase: a bool constant when fixed (set_learning_phase), else the session's
// placeholder with default 0.
NodePtr learning_phase();

NodePtr switch_(const NodePtr& condition, const Branch& then_expression,
                const Branch& else_expression);
// training: a tensor, or nullptr with `fixed` unset for the learning phase, or fixed 0/1.
NodePtr in_train_phase(const Branch& x, const Branch& alt, const NodePtr& training,
                       std::optional<int> fixed, const char* who = "in_train_phase");
NodePtr in_test_phase(const Branch& x, const Branch& alt, const NodePtr& training,
                      std::optional<int> fixed);

}  // namespace kb::api
