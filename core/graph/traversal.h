// Walks of the graph, shared by the compiler, autodiff and the loop ops: the nodes reachable
// from roots, each after its inputs (depth first, inputs in order).
#pragma once
#include <cstddef>
#include <vector>

#include "core/graph/node.h"

namespace kb {

std::vector<NodePtr> topo_order(const std::vector<NodePtr>& roots);

// The same without descending into `boundary` nodes (which are included), nor, when `skip` is
// given, into the inputs i of a node n for which skip(n, i) holds (those read for their type
// alone, say).
using SkipInput = bool (*)(const Node& n, size_t i);
std::vector<NodePtr> topo_order_within(const std::vector<NodePtr>& roots,
                                       const std::vector<NodePtr>& boundary,
                                       SkipInput skip = nullptr);

}  // namespace kb
