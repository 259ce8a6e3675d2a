// The pass that drops unread steps (core/compile/passes.h).
#include <vector>

#include "core/compile/passes.h"
#include "core/ops/op.h"

namespace kb {

// Steps whose value no output, update or kept step reads are dropped (a stateful op stays: it
// advances its state). They arise where a graph names a value only for its shape or type, or
// where a rewrite left the value it replaced reachable.
void drop_unread_steps(Plan& plan) {
  std::vector<bool> read(size_t(plan.num_slots), false);
  for (int s : plan.outputs) read[size_t(s)] = true;
  for (auto& u : plan.updates) read[size_t(u.second)] = true;
  std::vector<bool> keep(plan.steps.size(), false);
  for (size_t i = plan.steps.size(); i-- > 0;) {
    const Step& st = plan.steps[i];
    keep[i] = read[size_t(st.out)] || st.node->op->stateful;
    if (keep[i])
      for (int s : st.in) read[size_t(s)] = true;
  }
  std::vector<Step> kept;
  for (size_t i = 0; i < plan.steps.size(); ++i)
    if (keep[i]) kept.push_back(std::move(plan.steps[i]));
  plan.steps = std::move(kept);
}

}  // namespace kb
