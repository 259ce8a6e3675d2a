#include "core/autodiff/gradients.h"

#include <unordered_map>
#include <unordered_set>

#include "core/compile/plan.h"
#include "core/ops/build.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {

std::vector<NodePtr> gradients(const NodePtr& loss, const std::vector<NodePtr>& wrt) {
  check(loss != nullptr, Status::invalid_argument, "gradients: loss is NULL");
  check(is_floating(loss->dtype()), Status::dtype, "gradients: loss must be floating, got ",
        dtype_name(loss->dtype()));
  std::unordered_set<const Node*> targets;
  for (size_t i = 0; i < wrt.size(); ++i) {
    check(wrt[i] != nullptr, Status::invalid_argument, "gradients: variable ", i, " is NULL");
    targets.insert(wrt[i].get());
  }
  std::vector<NodePtr> order = topo_order({loss});
  // Only nodes that depend on a target carry gradients.
  std::unordered_set<const Node*> depends;
  for (auto& n : order) {
    bool d = targets.count(n.get()) > 0;
    for (auto& c : n->inputs) d = d || depends.count(c.get());
    if (d) depends.insert(n.get());
  }
  std::unordered_map<const Node*, NodePtr> grad;
  if (depends.count(loss.get())) grad[loss.get()] = fill_like(loss, 1.0, loss->dtype());
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const NodePtr& n = *it;
    auto g = grad.find(n.get());
    if (g == grad.end() || !n->op->grad) continue;
    if (n->inputs.empty()) continue;
    std::vector<NodePtr> ig = n->op->grad(n, g->second);
    for (size_t i = 0; i < n->inputs.size() && i < ig.size(); ++i) {
      const Node* c = n->inputs[i].get();
      if (!ig[i] || !depends.count(c) || !is_floating(n->inputs[i]->dtype())) continue;
      auto& slot = grad[c];
      slot = slot ? add(slot, ig[i]) : ig[i];
    }
  }
  std::vector<NodePtr> out;
  for (auto& w : wrt) {
    auto g = grad.find(w.get());
    out.push_back(g != grad.end() ? g->second : zeros_like(w));
  }
  return out;
}

}  // namespace kb
