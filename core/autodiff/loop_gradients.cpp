// The gradient of a Loop (core/autodiff/loop_gradients.h).
#include "core/autodiff/loop_gradients.h"

#include <unordered_map>
#include <unordered_set>

#include "core/autodiff/gradients.h"
#include "core/ops/build.h"
#include "core/ops/loop.h"
#include "core/ops/loop_hoist.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {

namespace {

// The sequence of `spec` that a per-step gradient A_t^T B_t (MatMul, transpose_a, both operands
// matrices of known width) reads A_t from, else nullptr.
NodePtr stacked_gemm_operand(const LoopSpec& spec, const NodePtr& grad) {
  if (!hoisting_enabled() || !grad || !grad->is(ops::MatMul) ||
      grad->attrs.i(attr::transpose_a) != 1 || grad->attrs.i(attr::transpose_b) != 0)
    return nullptr;
  const NodePtr& a = grad->inputs[0];
  const NodePtr& b = grad->inputs[1];
  if (a->rank() != 2 || b->rank() != 2 || a->shape().dims[1] < 0 || b->shape().dims[1] < 0)
    return nullptr;
  for (size_t i = 0; i < spec.step_inputs.size(); ++i)
    if (spec.step_inputs[i] == a) return spec.sequences[i];
  return nullptr;
}

}  // namespace

// The reverse loop. Forward step k: (x_k, s_k, c) -> (o_k, s_{k+1}). Backward, for k = T-1..0
// (0..T-1 for a reverse loop): given do_k, the gradient ds_{k+1} carried from the later step,
// and any direct gradient of the stored s_k, compute dx_k (stacked at k), ds_k (carried) and
// accumulate dc (carried). It walks the same sequences in the other direction, so nothing is
// reversed in memory.
std::vector<NodePtr> grad_loop(const NodePtr& loop, const std::vector<NodePtr>& dparts) {
  const Subgraph& body = *loop->attrs.graph(attr::body);
  int64_t n_seq = loop->attrs.i(attr::n_seq), n_state = loop->attrs.i(attr::n_state),
          n_out = loop->attrs.i(attr::n_out), n_aux = loop->attrs.i(attr::n_aux, 0);
  size_t n_cap = loop->inputs.size() - size_t(n_seq + n_state);
  auto part_or_zero = [&](int64_t i) {
    return dparts[i] ? dparts[i] : zeros_like(tuple_get(loop, i));
  };
  auto placeholder_like = [](const NodePtr& v, const char* name) {
    return make_leaf(ops::Placeholder, v->type, name);
  };

  LoopSpec back;
  back.reverse = loop->attrs.i(attr::reverse, 0) == 0;
  std::vector<NodePtr> x_ph(body.inputs.begin(), body.inputs.begin() + n_seq);
  std::vector<NodePtr> s_ph(body.inputs.begin() + n_seq, body.inputs.begin() + n_seq + n_state);
  std::vector<NodePtr> caps(body.inputs.begin() + n_seq + n_state, body.inputs.end());
  // Sequences: x_k, s_k (stored), do_k, and the direct gradients of s_k.
  for (int64_t i = 0; i < n_seq; ++i) {
    back.sequences.push_back(loop->inputs[i]);
    back.step_inputs.push_back(x_ph[i]);
  }
  for (int64_t j = 0; j < n_state; ++j) {
    back.sequences.push_back(tuple_get(loop, n_out + n_state + j));
    back.step_inputs.push_back(s_ph[j]);
  }
  std::vector<NodePtr> do_ph, dsb_ph, ds_ph, dc_ph;
  for (int64_t i = 0; i < n_out; ++i) {
    do_ph.push_back(placeholder_like(body.outputs[i], "d_output"));
    back.sequences.push_back(part_or_zero(i));
    back.step_inputs.push_back(do_ph.back());
  }
  for (int64_t j = 0; j < n_state; ++j) {
    int64_t part = n_out + n_state + j;
    if (!dparts[part]) continue;
    dsb_ph.push_back(placeholder_like(s_ph[j], "d_state_before"));
    back.sequences.push_back(dparts[part]);
    back.step_inputs.push_back(dsb_ph.back());
  }
  // The gradients of the stacked products (a second derivative through the gradient loop).
  std::vector<std::pair<int64_t, NodePtr>> daux_ph;  // (aux index, placeholder)
  for (int64_t a = 0; a < n_aux; ++a) {
    int64_t part = n_out + 2 * n_state + a;
    if (!dparts[part]) continue;
    daux_ph.push_back({a, placeholder_like(body.outputs[n_out + n_state + a], "d_product")});
    back.sequences.push_back(dparts[part]);
    back.step_inputs.push_back(daux_ph.back().second);
  }
  // States: the gradient of the state after the step, and the accumulated captured gradients.
  for (int64_t j = 0; j < n_state; ++j) {
    ds_ph.push_back(placeholder_like(s_ph[j], "d_state"));
    back.initial_states.push_back(part_or_zero(n_out + j));
    back.state_inputs.push_back(ds_ph.back());
  }
  std::vector<size_t> float_caps;
  for (size_t c = 0; c < n_cap; ++c)
    if (is_floating(caps[c]->dtype())) float_caps.push_back(c);
  // One step's gradient: of sum(o_k * do_k) + sum(s_{k+1} * ds_{k+1}).
  NodePtr loss;
  auto add_term = [&](const NodePtr& value, const NodePtr& grad) {
    if (!is_floating(value->dtype())) return;
    NodePtr term = reduce_sum(mul(value, grad), {}, false);
    loss = loss ? add(loss, term) : term;
  };
  for (int64_t i = 0; i < n_out; ++i) add_term(body.outputs[i], do_ph[i]);
  for (int64_t j = 0; j < n_state; ++j) add_term(body.outputs[n_out + j], ds_ph[j]);
  for (auto& [a, ph] : daux_ph) add_term(body.outputs[n_out + n_state + a], ph);
  std::vector<NodePtr> wrt;
  for (auto& x : x_ph) wrt.push_back(x);
  for (auto& s : s_ph) wrt.push_back(s);
  for (size_t c : float_caps) wrt.push_back(caps[c]);
  std::vector<NodePtr> g = loss ? gradients(loss, wrt) : std::vector<NodePtr>{};
  if (!loss)
    for (auto& w : wrt) g.push_back(zeros_like(w));
  std::vector<int64_t> float_seqs;
  for (int64_t i = 0; i < n_seq; ++i)
    if (is_floating(x_ph[i]->dtype())) {
      float_seqs.push_back(i);
      back.step_outputs.push_back(g[i]);
    }
  size_t dsb_i = 0;
  for (int64_t j = 0; j < n_state; ++j) {
    NodePtr ds = g[n_seq + j];
    if (dparts[n_out + n_state + j]) ds = add(ds, dsb_ph[dsb_i++]);
    back.new_states.push_back(ds);
  }
  // Captured gradients summed over the steps after the loop, from per-step values the loop
  // stacks, instead of in a carried state (T small operations and T additions):
  //   A_t^T B_t with A_t read from a sequence of this loop (U of h_t U: A_t the stored h_t) is
  //   one GEMM of the stacked A and B;
  //   sum_to_like(v_t, c) (a bias) is one reduction of the stacked v.
  struct AfterLoop {
    size_t k;       // float_caps index
    NodePtr a_seq;  // the GEMM's A over the sequence; null for a reduction
    int64_t part;   // the stacked B or v
  };
  std::vector<AfterLoop> after;
  auto stacked_part = [&](const NodePtr& v) {
    for (size_t i = float_seqs.size(); i < back.step_outputs.size(); ++i)
      if (back.step_outputs[i] == v) return int64_t(i);
    back.step_outputs.push_back(v);
    return int64_t(back.step_outputs.size()) - 1;
  };
  std::vector<size_t> carried;
  for (size_t k = 0; k < float_caps.size(); ++k) {
    const NodePtr& gk = g[n_seq + n_state + k];
    if (NodePtr a_seq = stacked_gemm_operand(back, gk)) {
      after.push_back({k, a_seq, stacked_part(gk->inputs[1])});
      continue;
    }
    if (hoisting_enabled() && gk && gk->is(ops::SumToLike) &&
        gk->inputs[1] == caps[float_caps[k]]) {
      after.push_back({k, nullptr, stacked_part(gk->inputs[0])});
      continue;
    }
    carried.push_back(k);
    size_t c = float_caps[k];
    dc_ph.push_back(placeholder_like(caps[c], "d_captured"));
    back.initial_states.push_back(zeros_like(loop->inputs[n_seq + n_state + c]));
    back.state_inputs.push_back(dc_ph.back());
    back.new_states.push_back(add(dc_ph.back(), gk));
  }

  // The step's values that change with the states were stacked by the forward loop: the ones
  // the gradient reads are read from there instead of computed again (the gates' activations,
  // not the products and sums they were computed from).
  if (n_aux > 0) {
    std::vector<NodePtr> boundary = body_inputs(back);
    boundary.insert(boundary.end(), body.outputs.begin() + n_out + n_state, body.outputs.end());
    std::unordered_set<const Node*> read;
    for (auto& n : topo_order_within(body_results(back), boundary, reads_shape_only))
      read.insert(n.get());
    std::unordered_map<const Node*, NodePtr> stored;
    for (int64_t a = 0; a < n_aux; ++a) {
      const NodePtr& product = body.outputs[size_t(n_out + n_state + a)];
      if (!read.count(product.get())) continue;
      back.sequences.push_back(tuple_get(loop, n_out + 2 * n_state + a));
      back.step_inputs.push_back(placeholder_like(product, "stored_product"));
      stored[product.get()] = back.step_inputs.back();
    }
    substitute(back, stored);
  }

  NodePtr bl = make_loop(back);
  std::vector<NodePtr> grads(loop->inputs.size(), nullptr);
  for (size_t k = 0; k < float_seqs.size(); ++k) grads[float_seqs[k]] = tuple_get(bl, int64_t(k));
  for (auto& a : after) {
    NodePtr stacked = tuple_get(bl, a.part);
    size_t cap = n_seq + n_state + float_caps[a.k];
    if (a.a_seq) {
      const NodePtr& gemm = g[n_seq + n_state + a.k];
      int64_t ka = gemm->inputs[0]->shape().dims[1], nb = gemm->inputs[1]->shape().dims[1];
      grads[cap] = matmul(reshape(a.a_seq, {-1, ka}), reshape(stacked, {-1, nb}), true, false);
    } else {
      grads[cap] = sum_to_like(stacked, loop->inputs[cap]);
    }
  }
  int64_t bo = int64_t(back.step_outputs.size());
  for (int64_t j = 0; j < n_state; ++j) grads[n_seq + j] = tuple_get(bl, bo + j);
  for (size_t i = 0; i < carried.size(); ++i)
    grads[n_seq + n_state + float_caps[carried[i]]] = tuple_get(bl, bo + n_state + int64_t(i));
  return grads;
}

}  // namespace kb
