// A graph rebuilt with one value in place of another: what a layer computes with a weight
// replaced (SpectralNormalization's normalized kernel in training).
#pragma once
#include <vector>

#include "core/graph/node.h"

namespace kb {

// `roots` computed from `to` wherever they read `from`: every node between them copied (same
// op, attributes and name), every other node shared. A loop between them is refused.
std::vector<NodePtr> substituted(const std::vector<NodePtr>& roots, const NodePtr& from,
                                 const NodePtr& to);

}  // namespace kb
