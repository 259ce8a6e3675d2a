// A graph inside a node (the body of a Loop): its inputs are nodes that the loop binds on every
// step (per-step placeholders, state placeholders, captured outer values), its outputs are the
// nodes it computes from them.
#pragma once
#include <vector>

#include "core/graph/node.h"

namespace kb {

struct Subgraph {
  std::vector<NodePtr> inputs;
  std::vector<NodePtr> outputs;
};

}  // namespace kb
