// Node::is on its own, for the device plugins that carry the kernel plans without the registry.
#include "core/graph/node.h"
#include "core/ops/op.h"

namespace kb {

bool Node::is(OpName op_name) const { return op && op->name == op_name.c_str(); }

}  // namespace kb
