// The invariant steps (core/compile/passes.h): what a plan computes from constants and from
// variables it does not update. Inference reads the same weights call after call, so what it
// derives from them alone (a BatchNormalization's scale, a folded kernel, a convolution's
// weights in oneDNN's layout) is computed once per change of the weights, not on every call.
#include <unordered_set>

#include "core/compile/passes.h"
#include "core/ops/op.h"

namespace kb {

namespace {

// Whether a step gives the same value for the same inputs and does nothing else.
bool deterministic(const Step& st) {
  const Node& n = *st.node;
  return !st.run_time && !st.dynamic && !n.op->stateful && !n.op->leaf && !n.is(ops::Loop) &&
         !n.is(ops::Print) && !n.is(ops::Assign) && !n.is(ops::Pack);
}

}  // namespace

std::vector<bool> invariant_slots(const Plan& plan) {
  std::vector<bool> invariant(size_t(plan.num_slots), false);
  std::unordered_set<const Node*> updated;
  for (auto& u : plan.updates) updated.insert(u.first.get());
  for (auto& [var, s] : plan.variables)
    if (!updated.count(var.get())) invariant[size_t(s)] = true;
  for (auto& [s, b] : plan.constants)  // not memory another library may write between runs
    if (!b->external) invariant[size_t(s)] = true;
  // Updates' values and outputs leave the plan: computed on every run.
  std::vector<bool> handed_out(size_t(plan.num_slots), false);
  for (auto& u : plan.updates) handed_out[size_t(u.second)] = true;
  for (int s : plan.outputs) handed_out[size_t(s)] = true;
  for (const Step& st : plan.steps) {
    if (!deterministic(st) || handed_out[size_t(st.out)] || st.in.empty()) continue;
    bool all = true;
    for (int s : st.in) all = all && invariant[size_t(s)];
    invariant[size_t(st.out)] = all;
  }
  return invariant;
}

void mark_invariant_steps(Plan& plan) {
  const std::vector<bool> invariant = invariant_slots(plan);
  std::vector<bool> read_by_others(size_t(plan.num_slots), false);
  for (Step& st : plan.steps) {
    st.invariant = invariant[size_t(st.out)];
    st.kept = false;
    if (!st.invariant)
      for (int s : st.in) read_by_others[size_t(s)] = true;
  }
  std::vector<bool> read_by_invariant(size_t(plan.num_slots), false);
  plan.any_invariant = false;
  for (Step& st : plan.steps) {
    st.kept = st.invariant && read_by_others[size_t(st.out)];
    plan.any_invariant = plan.any_invariant || st.invariant;
    if (st.invariant)
      for (int s : st.in) read_by_invariant[size_t(s)] = true;
  }
  plan.invariant_inputs.clear();
  for (size_t v = 0; v < plan.variables.size(); ++v)
    if (read_by_invariant[size_t(plan.variables[v].second)]) plan.invariant_inputs.push_back(v);
}

}  // namespace kb
