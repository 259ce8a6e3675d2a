// The Loop and TupleGet primitives, and the gradient of a Loop (a Loop over reversed time).
#include <unordered_map>
#include <unordered_set>

#include "core/ops/build.h"
#include "core/ops/loop.h"
#include "core/ops/loop_hoist.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {

std::unordered_set<const Node*> dependents(const std::vector<NodePtr>& order,
                                           const std::vector<NodePtr>& seeds) {
  std::unordered_set<const Node*> d;
  for (auto& s : seeds) d.insert(s.get());
  for (auto& n : order)
    for (auto& c : n->inputs)
      if (d.count(c.get())) {
        d.insert(n.get());
        break;
      }
  return d;
}

std::vector<NodePtr> captured_values(const std::vector<NodePtr>& roots,
                                     const std::vector<NodePtr>& bound) {
  // Walk down from the roots; a node that does not depend on a bound node is outer: capture it
  // (unless it is a constant) and do not descend further.
  std::unordered_set<const Node*> bound_set;
  for (auto& b : bound) bound_set.insert(b.get());
  std::vector<NodePtr> all = topo_order_within(roots, bound);
  std::unordered_set<const Node*> inner = dependents(all, bound);
  std::vector<NodePtr> captured;
  std::unordered_set<const Node*> seen;
  auto consider = [&](const NodePtr& c) {
    if (inner.count(c.get()) || c->is(ops::Constant) || !seen.insert(c.get()).second) return;
    captured.push_back(c);
  };
  for (auto& n : all)
    if (inner.count(n.get()) && !bound_set.count(n.get()))
      for (auto& c : n->inputs) consider(c);
  for (auto& r : roots) consider(r);
  return captured;
}

std::vector<TensorType> infer_subgraph(const Subgraph& g, const std::vector<TensorType>& in) {
  std::unordered_map<const Node*, TensorType> types;
  for (size_t i = 0; i < g.inputs.size(); ++i) types[g.inputs[i].get()] = in[i];
  for (auto& n : topo_order_within(g.outputs, g.inputs)) {
    if (types.count(n.get())) continue;
    if (n->op->leaf) {
      types[n.get()] = n->type;
      continue;
    }
    std::vector<TensorType> ins;
    for (auto& c : n->inputs) ins.push_back(types.at(c.get()));
    types[n.get()] = n->op->infer(ins, n->attrs);
  }
  std::vector<TensorType> out;
  for (auto& o : g.outputs) out.push_back(types.at(o.get()));
  return out;
}

namespace {

using Ins = std::vector<TensorType>;

TensorType stacked(int64_t steps, const TensorType& t) {
  Dims d{steps};
  if (t.shape.rank_known) d.insert(d.end(), t.shape.dims.begin(), t.shape.dims.end());
  return {t.dtype, t.shape.rank_known ? Shape(d) : Shape::unknown_rank(), {}};
}

TensorType infer_loop(const Ins& in, const Attrs& a) {
  const Subgraph& body = *a.graph(attr::body);
  int64_t n_seq = a.i(attr::n_seq), n_state = a.i(attr::n_state), n_out = a.i(attr::n_out);
  check(n_seq >= 1, Status::invalid_argument, "loop: no sequence to iterate over");
  int64_t steps = -2;
  std::vector<TensorType> body_in;
  for (int64_t i = 0; i < n_seq; ++i) {
    const Shape& s = in[i].shape;
    check(s.rank_known && s.rank() >= 1, Status::shape, "loop: sequence ", i,
          " needs a known rank >= 1, got ", s.str());
    int64_t t = s.dims[0];
    check(steps == -2 || t < 0 || steps < 0 || t == steps, Status::shape,
          "loop: sequences have different lengths (", steps, " and ", t, ")");
    if (steps == -2 || steps < 0) steps = t;
    body_in.push_back({in[i].dtype, Shape(Dims(s.dims.begin() + 1, s.dims.end())), {}});
  }
  for (size_t i = n_seq; i < in.size(); ++i) body_in.push_back(in[i]);
  std::vector<TensorType> outs = infer_subgraph(body, body_in);
  for (int64_t j = 0; j < n_state; ++j) {
    const TensorType& before = in[n_seq + j];
    const TensorType& after = outs[n_out + j];
    check(before.dtype == after.dtype, Status::dtype, "rnn: state ", j, " changes dtype from ",
          dtype_name(before.dtype), " to ", dtype_name(after.dtype));
    check(!before.shape.fully_known() || !after.shape.fully_known() || before.shape == after.shape,
          Status::shape, "rnn: state ", j, " changes shape from ", before.shape.str(), " to ",
          after.shape.str());
  }
  TensorType t{DType::b8, Shape(Dims{}), {}};
  for (int64_t i = 0; i < n_out; ++i) t.parts.push_back(stacked(steps, outs[i]));
  for (int64_t j = 0; j < n_state; ++j) t.parts.push_back(in[n_seq + j]);
  for (int64_t j = 0; j < n_state; ++j) t.parts.push_back(stacked(steps, in[n_seq + j]));
  for (int64_t k = 0; k < a.i(attr::n_aux, 0); ++k)
    t.parts.push_back(stacked(steps, outs[size_t(n_out + n_state + k)]));
  return t;
}

TensorType infer_tuple_get(const Ins& in, const Attrs& a) {
  int64_t i = a.i(attr::index);
  check(i >= 0 && i < int64_t(in[0].parts.size()), Status::internal, "tuple_get: index ", i,
        " out of range");
  return in[0].parts[size_t(i)];
}

// Loop's gradient differentiates its body: core/autodiff/loop_gradients.cpp.
OpRegistrar r1({ops::Loop, infer_loop, nullptr, false, true});
OpRegistrar r2({ops::TupleGet, infer_tuple_get, nullptr, false, true});

}  // namespace

std::vector<NodePtr> body_inputs(const LoopSpec& spec) {
  std::vector<NodePtr> v = spec.step_inputs;
  v.insert(v.end(), spec.state_inputs.begin(), spec.state_inputs.end());
  return v;
}

std::vector<NodePtr> body_results(const LoopSpec& spec) {
  std::vector<NodePtr> v = spec.step_outputs;
  v.insert(v.end(), spec.new_states.begin(), spec.new_states.end());
  return v;
}

NodePtr make_loop(const LoopSpec& spec) {
  check(spec.sequences.size() == spec.step_inputs.size() &&
            spec.initial_states.size() == spec.state_inputs.size() &&
            spec.new_states.size() == spec.state_inputs.size(),
        Status::internal, "loop: inconsistent specification");
  LoopSpec s = hoist_sequence_matmuls(pretranspose_fixed_operands(spec));
  s.aux_outputs = state_values(s);
  std::vector<NodePtr> bound = body_inputs(s);
  std::vector<NodePtr> roots = body_results(s);
  roots.insert(roots.end(), s.aux_outputs.begin(), s.aux_outputs.end());
  std::vector<NodePtr> caps = captured_values(roots, bound);
  auto body = std::make_shared<Subgraph>();
  body->inputs = bound;
  body->inputs.insert(body->inputs.end(), caps.begin(), caps.end());
  body->outputs = roots;
  std::vector<NodePtr> inputs = s.sequences;
  inputs.insert(inputs.end(), s.initial_states.begin(), s.initial_states.end());
  inputs.insert(inputs.end(), caps.begin(), caps.end());
  Attrs a{{attr::n_seq, int64_t(s.sequences.size())},
          {attr::n_state, int64_t(s.initial_states.size())},
          {attr::n_out, int64_t(s.step_outputs.size())},
          {attr::reverse, int64_t(s.reverse)},
          {attr::n_aux, int64_t(s.aux_outputs.size())}};
  a.set(attr::body, GraphRef(body));
  NodePtr n = make_node(ops::Loop, inputs, a);
  for (auto& r : roots)
    if (r->uses_learning_phase) n->uses_learning_phase = true;
  return n;
}

NodePtr tuple_get(const NodePtr& tuple, int64_t index) {
  return make_node(ops::TupleGet, {tuple}, {{attr::index, index}});
}

}  // namespace kb
