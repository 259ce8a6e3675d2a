#include "core/api/loops.h"

#include <algorithm>

#include "core/api/api.h"
#include "core/ops/build.h"
#include "core/ops/loop.h"
#include "core/util/error.h"

namespace kb::api {

namespace {

NodePtr time_major(const NodePtr& x) {
  std::vector<int64_t> perm{1, 0};
  for (int64_t i = 2; i < x->rank(); ++i) perm.push_back(i);
  return kb::transpose(x, perm);
}

// x[index] along axis 0 (index may be negative).
NodePtr step_of(const NodePtr& x, int64_t index) {
  int64_t r = x->rank();
  std::vector<int64_t> b(r, 0), e(r, 0), s(r, 1);
  b[0] = index;
  int64_t rest = 0;
  // The masks have 64 bits: past them the slice fails its inference, but the shift must not
  // overflow first.
  for (int64_t i = 1; i < std::min<int64_t>(r, 64); ++i) rest |= int64_t(1) << i;
  return make_node(ops::StridedSlice, {x},
                   {{attr::begin, b},
                    {attr::end, e},
                    {attr::strides, s},
                    {attr::begin_mask, rest},
                    {attr::end_mask, rest},
                    {attr::shrink_mask, int64_t(1)}});
}

NodePtr reverse_time(const NodePtr& x) {
  return make_node(ops::Reverse, {x}, {{attr::axes, std::vector<int64_t>{0}}});
}

NodePtr step_placeholder(const NodePtr& seq, const char* name) {
  const Dims& d = seq->shape().dims;
  return make_leaf(ops::Placeholder, {seq->dtype(), Shape(Dims(d.begin() + 1, d.end())), {}}, name);
}

}  // namespace

RnnResult rnn(const StepFunction& step, const NodePtr& inputs,
              const std::vector<NodePtr>& initial_states, bool go_backwards, const NodePtr& mask,
              const std::vector<NodePtr>& constants, bool unroll) {
  require(inputs, "rnn", "inputs");
  check(inputs->shape().rank_known && inputs->rank() >= 3, Status::shape,
        "rnn: input should be at least 3D, got ", inputs->shape().str());
  for (size_t i = 0; i < initial_states.size(); ++i)
    check(initial_states[i] != nullptr, Status::invalid_argument, "rnn: initial state ", i,
          " is NULL");
  for (size_t i = 0; i < constants.size(); ++i)
    check(constants[i] != nullptr, Status::invalid_argument, "rnn: constant ", i, " is NULL");
  NodePtr xs = time_major(inputs);
  NodePtr ms;
  if (mask) {
    check(mask->shape().rank_known && mask->rank() >= 2, Status::shape,
          "rnn: mask must have shape (batch, time), got ", mask->shape().str());
    NodePtr m = kb::cast(mask, DType::b8);
    if (m->rank() == inputs->rank() - 1) m = kb::expand_dims(m, m->rank());
    ms = time_major(m);
    check(unroll || !initial_states.empty(), Status::invalid_argument,
          "rnn: no initial states provided (a mask needs them)");
  }
  if (go_backwards) {
    xs = reverse_time(xs);
    if (ms) ms = reverse_time(ms);
  }
  auto call_step = [&](const NodePtr& x, const std::vector<NodePtr>& states) {
    std::vector<NodePtr> args = states;
    args.insert(args.end(), constants.begin(), constants.end());
    auto [out, new_states] = step(x, args);
    check(out != nullptr, Status::invalid_argument, "rnn: the step function returned no output");
    check(new_states.size() == states.size(), Status::invalid_argument,
          "rnn: the step function returned ", new_states.size(), " states, expected ",
          states.size());
    return std::make_pair(out, new_states);
  };

  RnnResult r;
  if (unroll) {
    int64_t steps = xs->shape().dims[0];
    check(steps >= 0, Status::invalid_argument,
          "rnn: unrolling requires a fixed number of timesteps");
    std::vector<NodePtr> states = initial_states, outs;
    NodePtr prev;
    for (int64_t t = 0; t < steps; ++t) {
      auto [out, new_states] = call_step(step_of(xs, t), states);
      if (ms) {
        NodePtr m = step_of(ms, t);
        if (!prev) prev = kb::zeros_like(out);
        out = select(m, out, prev);
        for (size_t j = 0; j < states.size(); ++j)
          new_states[j] = select(m, new_states[j], states[j]);
      }
      prev = out;
      outs.push_back(out);
      states = new_states;
    }
    check(!outs.empty(), Status::invalid_argument, "rnn: no timesteps to unroll");
    r.outputs = stack(outs, 1);
    r.last_output = outs.back();
    r.new_states = states;
  } else {
    LoopSpec spec;
    spec.sequences.push_back(xs);
    spec.step_inputs.push_back(step_placeholder(xs, "rnn_input"));
    NodePtr m_ph;
    if (ms) {
      spec.sequences.push_back(ms);
      m_ph = step_placeholder(ms, "rnn_mask");
      spec.step_inputs.push_back(m_ph);
    }
    for (auto& s : initial_states) {
      spec.initial_states.push_back(s);
      spec.state_inputs.push_back(make_leaf(ops::Placeholder, s->type, "rnn_state"));
    }
    auto [out, new_states] = call_step(spec.step_inputs[0], spec.state_inputs);
    if (m_ph) {
      // Where the mask is 0 the output falls back to the previous first state, and every state
      // keeps its value (Keras' symbolic loop).
      out = select(m_ph, out, spec.state_inputs[0]);
      for (size_t j = 0; j < new_states.size(); ++j)
        new_states[j] = select(m_ph, new_states[j], spec.state_inputs[j]);
    }
    spec.step_outputs.push_back(out);
    spec.new_states = new_states;
    NodePtr loop = make_loop(spec);
    NodePtr stacked = tuple_get(loop, 0);
    r.outputs = time_major(stacked);
    r.last_output = step_of(stacked, -1);
    for (size_t j = 0; j < initial_states.size(); ++j)
      r.new_states.push_back(tuple_get(loop, 1 + int64_t(j)));
  }
  return r;
}

NodePtr map_fn(const MapFunction& fn, const NodePtr& elems, std::optional<DType> dtype) {
  require(elems, "map_fn", "elems");
  check(elems->shape().rank_known && elems->rank() >= 1, Status::shape,
        "map_fn: elems need rank >= 1, got ", elems->shape().str());
  LoopSpec spec;
  spec.sequences.push_back(elems);
  spec.step_inputs.push_back(step_placeholder(elems, "map_fn_input"));
  NodePtr out = fn(spec.step_inputs[0]);
  check(out != nullptr, Status::invalid_argument, "map_fn: the function returned no tensor");
  if (dtype) out = kb::cast(out, *dtype);
  spec.step_outputs.push_back(out);
  return tuple_get(make_loop(spec), 0);
}

static NodePtr fold(const FoldFunction& fn, NodePtr elems, NodePtr acc, bool right,
                    const char* who) {
  require(elems, who, "elems");
  check(elems->shape().rank_known && elems->rank() >= 1, Status::shape, who,
        ": elems need rank >= 1, got ", elems->shape().str());
  if (right) elems = reverse_time(elems);
  if (!acc) {
    // The first element (last for foldr) starts the accumulation and is not folded again.
    acc = step_of(elems, 0);
    int64_t r = elems->rank();
    std::vector<int64_t> b(r, 0), e(r, 0), s(r, 1);
    b[0] = 1;
    int64_t rest = 0;
    for (int64_t i = 1; i < std::min<int64_t>(r, 64); ++i) rest |= int64_t(1) << i;  // as step_of
    elems = make_node(ops::StridedSlice, {elems},
                      {{attr::begin, b},
                       {attr::end, e},
                       {attr::strides, s},
                       {attr::begin_mask, rest},
                       {attr::end_mask, rest | 1},
                       {attr::shrink_mask, int64_t(0)}});
  }
  LoopSpec spec;
  spec.sequences.push_back(elems);
  spec.step_inputs.push_back(step_placeholder(elems, "fold_input"));
  spec.initial_states.push_back(acc);
  spec.state_inputs.push_back(make_leaf(ops::Placeholder, acc->type, "fold_acc"));
  NodePtr next = fn(spec.state_inputs[0], spec.step_inputs[0]);
  check(next != nullptr, Status::invalid_argument, who, ": the function returned no tensor");
  check(next->dtype() == acc->dtype(), Status::dtype, who, ": the function returns ",
        dtype_name(next->dtype()), " but the accumulator is ", dtype_name(acc->dtype()));
  spec.new_states.push_back(next);
  return tuple_get(make_loop(spec), 0);
}

NodePtr foldl(const FoldFunction& fn, const NodePtr& elems, const NodePtr& initializer) {
  return fold(fn, elems, initializer, false, "foldl");
}
NodePtr foldr(const FoldFunction& fn, const NodePtr& elems, const NodePtr& initializer) {
  return fold(fn, elems, initializer, true, "foldr");
}

}  // namespace kb::api
