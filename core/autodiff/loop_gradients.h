// The gradient of a Loop (core/ops/loop_ops.cpp), the one op of a tuple type: a reverse loop
// over the gradients of its body, which differentiating the body takes.
#pragma once
#include <vector>

#include "core/graph/node.h"

namespace kb {

// One gradient per part of the loop's tuple in (nullptr where none flows), one per input out.
std::vector<NodePtr> grad_loop(const NodePtr& loop, const std::vector<NodePtr>& dparts);

}  // namespace kb
