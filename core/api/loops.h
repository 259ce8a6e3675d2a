// rnn, map_fn, foldl, foldr: the user's function is called while the graph is built, on per-step
// placeholders (or once per step with unroll), and recorded as the body of a Loop node.
#pragma once
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "core/graph/node.h"

namespace kb::api {

// (x_t, states + constants) -> (output_t, new_states)
using StepFunction = std::function<std::pair<NodePtr, std::vector<NodePtr>>(
    const NodePtr& x, const std::vector<NodePtr>& states)>;
using MapFunction = std::function<NodePtr(const NodePtr& x)>;
using FoldFunction = std::function<NodePtr(const NodePtr& acc, const NodePtr& x)>;

struct RnnResult {
  NodePtr last_output;
  NodePtr outputs;
  std::vector<NodePtr> new_states;
};

RnnResult rnn(const StepFunction& step, const NodePtr& inputs,
              const std::vector<NodePtr>& initial_states, bool go_backwards, const NodePtr& mask,
              const std::vector<NodePtr>& constants, bool unroll);
NodePtr map_fn(const MapFunction& fn, const NodePtr& elems, std::optional<DType> dtype);
NodePtr foldl(const FoldFunction& fn, const NodePtr& elems, const NodePtr& initializer);
NodePtr foldr(const FoldFunction& fn, const NodePtr& elems, const NodePtr& initializer);

}  // namespace kb::api
