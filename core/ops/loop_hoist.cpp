// hoist_sequence_matmuls (core/ops/loop_hoist.h). A body value that depends on the per-step
// inputs x_t only has a whole-sequence counterpart over X = stack(x_t): elementwise operations
// apply to X as they do to x_t when every per-step operand has the result's rank and every other
// operand at most that rank (broadcasting then aligns the same axes), and x_t W for a fixed W is
// a row block of reshape(X) W.
#include "core/ops/loop_hoist.h"

#include <cstdlib>
#include <exception>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/ops/build.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {
namespace {

bool is_elementwise(const Node& n) { return !n.op->stateful && is_elementwise_op(n.op->name); }

bool rank_known(const NodePtr& n) { return n->shape().rank_known; }

}  // namespace

bool hoisting_enabled() {
  const char* e = std::getenv("KB_HOIST");
  return !(e && std::string(e) == "0");
}

LoopSpec hoist_sequence_matmuls(const LoopSpec& spec) {
  if (!hoisting_enabled()) return spec;
  std::vector<NodePtr> order = topo_order_within(body_results(spec), body_inputs(spec));

  std::unordered_set<const Node*> per_step = dependents(order, spec.step_inputs);
  std::unordered_set<const Node*> per_state = dependents(order, spec.state_inputs);

  // Whole-sequence counterparts of per-step values (built lazily: unused ones are never run).
  std::unordered_map<const Node*, NodePtr> lifted;
  for (size_t i = 0; i < spec.step_inputs.size(); ++i)
    lifted[spec.step_inputs[i].get()] = spec.sequences[i];
  auto liftable = [&](const NodePtr& n) {
    if (!per_step.count(n.get()) || per_state.count(n.get())) return false;
    if (lifted.count(n.get())) return true;
    if (!is_elementwise(*n) || !rank_known(n)) return false;
    for (auto& c : n->inputs) {
      if (!rank_known(c)) return false;
      bool step = per_step.count(c.get()) > 0;
      if (step ? c->rank() != n->rank() || !lifted.count(c.get()) : c->rank() > n->rank())
        return false;
    }
    return true;
  };

  LoopSpec out = spec;
  std::unordered_map<const Node*, NodePtr> replaced;
  for (auto& n : order) {
    if (per_state.count(n.get()) || !per_step.count(n.get()) || lifted.count(n.get())) continue;
    if (is_elementwise(*n)) {
      if (!liftable(n)) continue;
      std::vector<NodePtr> ins;
      for (auto& c : n->inputs) ins.push_back(per_step.count(c.get()) ? lifted.at(c.get()) : c);
      try {
        lifted[n.get()] = make_node(*n->op, ins, n->attrs);
      } catch (const std::exception&) {
        // a combination the rules above let through but inference rejects: stays per step
      }
      continue;
    }
    if (!n->is(ops::MatMul) || n->attrs.i(attr::transpose_a) != 0) continue;
    const NodePtr& a = n->inputs[0];
    const NodePtr& w = n->inputs[1];
    if (!liftable(a) || per_step.count(w.get()) || per_state.count(w.get()) || a->rank() != 2 ||
        a->shape().dims[1] < 0)
      continue;
    NodePtr seq = lifted.at(a.get());  // (T, B, k)
    NodePtr rows = matmul(reshape(seq, {-1, a->shape().dims[1]}), w, false,
                          n->attrs.i(attr::transpose_b) != 0);
    out.sequences.push_back(make_node(ops::ReshapeLike, {rows, seq}, {{attr::keep, int64_t(2)}}));
    out.step_inputs.push_back(make_leaf(ops::Placeholder, n->type, "hoisted_matmul"));
    replaced[n.get()] = out.step_inputs.back();
  }
  if (replaced.empty()) return spec;

  // The body again, reading the hoisted products; then drop per-step inputs nothing reads any
  // more (the hoisted sequences keep the loop's length).
  substitute(out, replaced);
  std::unordered_set<const Node*> read;
  for (auto& n : topo_order_within(body_results(out), out.step_inputs)) read.insert(n.get());
  LoopSpec kept = out;
  kept.sequences.clear();
  kept.step_inputs.clear();
  for (size_t i = 0; i < out.step_inputs.size(); ++i)
    if (read.count(out.step_inputs[i].get())) {
      kept.sequences.push_back(out.sequences[i]);
      kept.step_inputs.push_back(out.step_inputs[i]);
    }
  if (kept.sequences.empty()) {
    kept.sequences.push_back(out.sequences.back());
    kept.step_inputs.push_back(out.step_inputs.back());
  }
  return kept;
}

LoopSpec pretranspose_fixed_operands(const LoopSpec& spec) {
  if (!hoisting_enabled()) return spec;
  std::vector<NodePtr> order = topo_order_within(body_results(spec), body_inputs(spec));
  // Values that change from step to step.
  std::unordered_set<const Node*> inner = dependents(order, body_inputs(spec));
  std::unordered_map<const Node*, NodePtr> replaced;
  for (auto& n : order) {
    if (!n->is(ops::MatMul) || n->attrs.i(attr::transpose_a) != 0 ||
        n->attrs.i(attr::transpose_b) == 0)
      continue;
    const NodePtr& w = n->inputs[1];
    if (inner.count(n->inputs[0].get()) && !inner.count(w.get()) && w->rank() == 2)
      replaced[n.get()] = matmul(n->inputs[0], transpose(w, {1, 0}), false, false);
  }
  if (replaced.empty()) return spec;
  LoopSpec out = spec;
  substitute(out, replaced);
  return out;
}

void substitute(LoopSpec& spec, const std::unordered_map<const Node*, NodePtr>& replacement) {
  std::unordered_map<const Node*, NodePtr> now = replacement;
  auto current = [&](const NodePtr& n) {
    auto it = now.find(n.get());
    return it == now.end() ? n : it->second;
  };
  for (auto& n : topo_order_within(body_results(spec), body_inputs(spec))) {
    if (now.count(n.get()) || n->op->leaf) continue;
    std::vector<NodePtr> ins;
    bool changed = false;
    for (auto& c : n->inputs) {
      ins.push_back(current(c));
      changed = changed || ins.back() != c;
    }
    if (!changed) continue;
    NodePtr copy = make_node(*n->op, ins, n->attrs, n->name);
    copy->keras_tensor = n->keras_tensor;
    now[n.get()] = copy;
  }
  for (auto& o : spec.step_outputs) o = current(o);
  for (auto& s : spec.new_states) s = current(s);
}

std::vector<NodePtr> state_values(const LoopSpec& spec) {
  if (!hoisting_enabled()) return {};
  std::vector<NodePtr> roots = body_results(spec);
  std::vector<NodePtr> order = topo_order_within(roots, body_inputs(spec));
  std::unordered_set<const Node*> per_state = dependents(order, spec.state_inputs), is_root;
  for (auto& r : roots) is_root.insert(r.get());
  std::vector<NodePtr> values;
  for (auto& n : order) {
    const OpDef& op = *n->op;
    if (!per_state.count(n.get()) || is_root.count(n.get()) || op.leaf || op.view || op.stateful ||
        op.shape_only || !n->type.parts.empty() || !is_floating(n->dtype()))
      continue;
    values.push_back(n);
  }
  return values;
}

}  // namespace kb
