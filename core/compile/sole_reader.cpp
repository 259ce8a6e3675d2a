// sole_reader (core/compile/passes.h): for each slot, the one step that reads it, where a rewrite
// may take the value into that step.
#include "core/compile/passes.h"

namespace kb {

std::vector<int> sole_reader(const Plan& plan) {
  std::vector<int> count(size_t(plan.num_slots), 0), reader(size_t(plan.num_slots), -1);
  for (size_t i = 0; i < plan.steps.size(); ++i)
    for (int s : plan.steps[i].in) {
      ++count[size_t(s)];
      reader[size_t(s)] = int(i);
    }
  // Outputs and updates are read after the plan: never an intermediate of a rewrite.
  for (int s : plan.outputs) count[size_t(s)] += 2;
  for (auto& u : plan.updates) count[size_t(u.second)] += 2;
  for (size_t s = 0; s < reader.size(); ++s)
    if (count[s] != 1) reader[s] = -1;
  return reader;
}

}  // namespace kb
