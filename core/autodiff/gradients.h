// gradients(loss, variables): reverse mode over the graph; the result is a graph too.
#pragma once
#include <vector>

#include "core/graph/node.h"

namespace kb {

// The gradient of sum(loss) with respect to each of `wrt`; zeros for those not connected.
std::vector<NodePtr> gradients(const NodePtr& loss, const std::vector<NodePtr>& wrt);

}  // namespace kb
