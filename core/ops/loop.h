// Loops: a Loop node runs a body subgraph once per step along axis 0 of its sequence inputs
// (from the last index to the first when reverse), carrying states. Its tuple result is taken apart
// with tuple_get:
//   parts [0, n_out)                   step outputs stacked over time (T, ...)
//   parts [n_out, n_out + n_state)      the final states
//   parts [n_out + n_state, + n_state)  the states before each step, stacked (for gradients)
//   parts [n_out + 2 n_state, + n_aux)  body values that change with the states (h_t U, the
//                                       activations), stacked: the gradient loop reads the ones it
//                                       needs instead of computing them again
// Stacked parts are indexed like the sequences: the step that reads index t writes index t.
// Outer values the body uses are captured automatically and become inputs of the node.
#pragma once
#include <unordered_set>
#include <vector>

#include "core/graph/node.h"
#include "core/graph/subgraph.h"
#include "core/graph/traversal.h"

namespace kb {

struct LoopSpec {
  std::vector<NodePtr> sequences;    // time-major (T, ...) values
  std::vector<NodePtr> step_inputs;  // the body's per-step placeholders, one per sequence
  std::vector<NodePtr> initial_states;
  std::vector<NodePtr> state_inputs;  // the body's state placeholders, one per state
  std::vector<NodePtr> step_outputs;  // body results stacked over time
  std::vector<NodePtr> new_states;    // body results carried to the next step
  bool reverse = false;               // walk the sequences from the last index to the first
  std::vector<NodePtr> aux_outputs;   // body values stacked for the gradient (set by make_loop)
};

// The body's placeholders (step inputs, then states) and its results (step outputs, then new
// states) of a spec.
std::vector<NodePtr> body_inputs(const LoopSpec& spec);
std::vector<NodePtr> body_results(const LoopSpec& spec);

NodePtr make_loop(const LoopSpec& spec);
NodePtr tuple_get(const NodePtr& tuple, int64_t index);

// Nodes reachable from `roots` that do not depend on any of `bound` and are not constants: the
// outer values a body reads. In topological order.
std::vector<NodePtr> captured_values(const std::vector<NodePtr>& roots,
                                     const std::vector<NodePtr>& bound);

// The nodes of `order` (inputs before their users) that are one of `seeds` or read one,
// directly or through others: the values that change when the seeds do.
std::unordered_set<const Node*> dependents(const std::vector<NodePtr>& order,
                                           const std::vector<NodePtr>& seeds);

// The types of a subgraph's outputs for the given input types (static or concrete).
std::vector<TensorType> infer_subgraph(const Subgraph& g, const std::vector<TensorType>& in);

}  // namespace kb
