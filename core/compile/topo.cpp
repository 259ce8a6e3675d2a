#include <unordered_set>

#include "core/compile/plan.h"

namespace kb {

std::vector<NodePtr> topo_order(const std::vector<NodePtr>& roots) {
  std::vector<NodePtr> order;
  std::unordered_set<const Node*> done;
  std::vector<std::pair<NodePtr, size_t>> stack;
  for (auto& r : roots) {
    if (!r || done.count(r.get())) continue;
    stack.push_back({r, 0});
    std::unordered_set<const Node*> on_stack{r.get()};
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      if (i < n->inputs.size()) {
        NodePtr c = n->inputs[i++];
        if (!done.count(c.get()) && !on_stack.count(c.get())) {
          on_stack.insert(c.get());
          stack.push_back({c, 0});
        }
      } else {
        done.insert(n.get());
        order.push_back(n);
        on_stack.erase(n.get());
        stack.pop_back();
      }
    }
  }
  return order;
}

}  // namespace kb
