// Graph walks (core/graph/traversal.h).
#include "core/graph/traversal.h"

#include <unordered_set>
#include <utility>

namespace kb {

std::vector<NodePtr> topo_order(const std::vector<NodePtr>& roots) {
  return topo_order_within(roots, {});
}

std::vector<NodePtr> topo_order_within(const std::vector<NodePtr>& roots,
                                       const std::vector<NodePtr>& boundary, SkipInput skip) {
  std::unordered_set<const Node*> stop;
  for (auto& b : boundary) stop.insert(b.get());
  std::vector<NodePtr> order;
  std::unordered_set<const Node*> done;
  // Iterative: graphs of 200k chained ops are walked on a small stack.
  std::vector<std::pair<NodePtr, size_t>> stack;
  for (auto& r : roots) {
    if (!r || done.count(r.get())) continue;
    stack.push_back({r, 0});
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      if (!stop.count(n.get()) && i < n->inputs.size()) {
        size_t k = i++;
        if (skip && skip(*n, k)) continue;
        NodePtr c = n->inputs[k];
        if (!done.count(c.get())) stack.push_back({c, 0});
      } else {
        if (done.insert(n.get()).second) order.push_back(n);
        stack.pop_back();
      }
    }
  }
  return order;
}

}  // namespace kb
