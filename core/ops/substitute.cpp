#include "core/ops/substitute.h"

#include <unordered_map>

#include "core/graph/traversal.h"
#include "core/ops/build.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {

std::vector<NodePtr> substituted(const std::vector<NodePtr>& roots, const NodePtr& from,
                                 const NodePtr& to) {
  check(from && to && from->type.dtype == to->type.dtype, Status::invalid_argument,
        "substituted: the value and its replacement must be of one dtype");
  std::unordered_map<const Node*, NodePtr> copies{{from.get(), to}};
  // Stop at `from`: what it reads stays as it is.
  for (const NodePtr& n : topo_order_within(roots, {from})) {
    if (n == from) continue;
    std::vector<NodePtr> inputs = n->inputs;
    bool changed = false;
    for (NodePtr& in : inputs) {
      auto it = copies.find(in.get());
      if (it != copies.end()) in = it->second, changed = true;
    }
    if (!changed) continue;
    check(!n->is(ops::Loop), Status::not_implemented,
          "substituted: a loop reads the value replaced");
    copies[n.get()] = make_node(*n->op, std::move(inputs), n->attrs, n->name);
  }
  std::vector<NodePtr> out;
  for (const NodePtr& r : roots) {
    auto it = copies.find(r.get());
    out.push_back(it == copies.end() ? r : it->second);
  }
  return out;
}

}  // namespace kb
