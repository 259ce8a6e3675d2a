// The scale fold (core/compile/passes.h): a convolution whose every output channel is then
// multiplied by a value the plan computes from invariant values alone (BatchNormalization in
// inference: x * gamma / sqrt(var + eps) + shift) becomes a convolution by the scaled kernel,
// conv(x, W) * s + t = conv(x, W * s) + t, so that the scale, the shift and a relu after them
// run as the convolution's own bias and post-op instead of a pass over its output. W * s is an
// invariant step: computed once per change of the weights (mark_invariant_steps), as the
// convolution then keeps the scaled kernel in oneDNN's layout.
#include <unordered_map>

#include "core/compile/passes.h"
#include "core/ops/conv_ops.h"
#include "core/ops/op.h"

namespace kb {

namespace {

// One value per output channel of a channels-last convolution's output y: dims (oc) or
// (1, ..., 1, oc), so that it broadcasts along the kernel's last axis as it does along y's.
bool last_axis_vector(const TensorType& t, const TensorType& y) {
  if (t.dtype != y.dtype || !t.parts.empty() || !t.shape.fully_known()) return false;
  const Dims& d = t.shape.dims;
  const Dims& yd = y.shape.dims;
  if (d.empty() || d.size() > yd.size() || d.back() != yd.back()) return false;
  for (size_t i = 0; i + 1 < d.size(); ++i)
    if (d[i] != 1) return false;
  return true;
}

// The convolutions whose scale can be folded: float32, channels last, one group (the kernel's
// last axis is then the output channels), no relu before the scale.
bool foldable_conv(const Step& st) {
  const Node& n = *st.node;
  if (!(n.is(ops::Conv) || n.is(ops::FusedConv)) || st.run_time || st.out_type.dtype != DType::f32)
    return false;
  if (n.attrs.i(attr::relu, 0) != 0 || st.in_types.size() < 2) return false;
  ConvGeom g = ConvGeom::from(n.attrs);
  if (g.channels_first || g.groups != 1 || !st.out_type.shape.fully_known()) return false;
  const Dims& k = st.in_types[1].shape.dims;
  return !k.empty() && k.back() == st.out_type.shape.dims.back();
}

// The other operand's position in a binary step reading `slot` at one position.
int other_operand(const Step& st, int slot) {
  if (st.in.size() != 2 || st.in[0] == st.in[1]) return -1;
  return st.in[0] == slot ? 1 : st.in[1] == slot ? 0 : -1;
}

}  // namespace

void fold_conv_scales(Plan& plan) {
  if (plan.device != Device::cpu) return;
  const std::vector<bool> invariant = invariant_slots(plan);
  // The steps reading each slot; outputs and updates count as readers that cannot be fused.
  std::vector<int> readers(size_t(plan.num_slots), 0), reader(size_t(plan.num_slots), -1);
  for (size_t i = 0; i < plan.steps.size(); ++i)
    for (int s : plan.steps[i].in) {
      ++readers[size_t(s)];
      reader[size_t(s)] = int(i);
    }
  for (int s : plan.outputs) readers[size_t(s)] += 2;
  for (auto& u : plan.updates) readers[size_t(u.second)] += 2;
  auto next = [&](int slot) -> int {
    return readers[size_t(slot)] == 1 ? reader[size_t(slot)] : -1;
  };
  auto is = [&](int i, OpName op) { return i >= 0 && plan.steps[size_t(i)].node->is(op); };

  std::vector<bool> removed(plan.steps.size(), false);
  std::unordered_map<size_t, std::vector<Step>> inserted;  // before step i
  for (size_t a = 0; a < plan.steps.size(); ++a) {
    const Step& conv = plan.steps[a];
    if (removed[a] || !foldable_conv(conv)) continue;
    const TensorType& y = conv.out_type;
    int m = next(conv.out);
    if (!is(m, ops::Mul) || removed[size_t(m)]) continue;
    const Step& mul = plan.steps[size_t(m)];
    int sp = other_operand(mul, conv.out);
    if (sp < 0 || !(mul.out_type.shape == y.shape) || !invariant[size_t(mul.in[size_t(sp)])] ||
        !last_axis_vector(mul.in_types[size_t(sp)], y))
      continue;
    int last = m, t = -1, tp = -1;
    if (int s = next(mul.out); is(s, ops::Add)) {
      const Step& add = plan.steps[size_t(s)];
      int p = other_operand(add, mul.out);
      if (p >= 0 && add.out_type.shape == y.shape && last_axis_vector(add.in_types[size_t(p)], y))
        last = t = s, tp = p;
    }
    bool relu = false;
    if (int r = next(plan.steps[size_t(last)].out);
        is(r, ops::Relu) && plan.steps[size_t(r)].out_type.shape == y.shape)
      last = r, relu = true;

    // New steps, placed where the last replaced one was (every operand is computed by then).
    std::vector<Step> steps;
    auto add_step = [&](const char* op_name, std::vector<int> in, std::vector<NodePtr> nodes,
                        std::vector<TensorType> types, Attrs attrs, const std::string& name,
                        int out = -1) {
      TensorType type = op(op_name).infer(types, attrs);
      NodePtr node = plan_node(op_name, std::move(nodes), std::move(attrs), type, name);
      Step st;
      st.in = std::move(in);
      st.in_types = std::move(types);
      st.out_type = type;
      st.out = out >= 0 ? out : plan.num_slots++;
      st.node = node.get();
      plan.nodes.push_back(node);
      steps.push_back(std::move(st));
      return steps.back().out;
    };
    const Node& cn = *conv.node;
    const Node& mn = *mul.node;
    const int s_slot = mul.in[size_t(sp)];
    const NodePtr& s_node = mn.inputs[size_t(sp)];
    const TensorType& s_type = mul.in_types[size_t(sp)];
    int kernel = add_step("Mul", {conv.in[1], s_slot}, {cn.inputs[1], s_node},
                          {conv.in_types[1], s_type}, {}, cn.name + "/folded_kernel");
    NodePtr kernel_node = plan.nodes.back();
    int bias = -1;
    NodePtr bias_node;
    TensorType bias_type;
    if (conv.in.size() == 3) {  // (conv + b) * s = conv * s + b * s
      bias = add_step("Mul", {conv.in[2], s_slot}, {cn.inputs[2], s_node},
                      {conv.in_types[2], s_type}, {}, cn.name + "/folded_bias");
      bias_node = plan.nodes.back();
      bias_type = steps.back().out_type;
    }
    if (t >= 0) {
      const Step& add = plan.steps[size_t(t)];
      int t_slot = add.in[size_t(tp)];
      const NodePtr& t_node = add.node->inputs[size_t(tp)];
      const TensorType& t_type = add.in_types[size_t(tp)];
      if (bias >= 0) {
        bias = add_step("Add", {bias, t_slot}, {bias_node, t_node}, {bias_type, t_type}, {},
                        cn.name + "/folded_shift");
        bias_node = plan.nodes.back();
        bias_type = steps.back().out_type;
      } else {
        bias = t_slot, bias_node = t_node, bias_type = t_type;
      }
    }
    Attrs attrs = cn.attrs;
    attrs.set(attr::relu, int64_t(relu));
    std::vector<int> in = {conv.in[0], kernel};
    std::vector<NodePtr> nodes = {cn.inputs[0], kernel_node};
    std::vector<TensorType> types = {conv.in_types[0], steps.front().out_type};
    if (bias >= 0) {
      in.push_back(bias);
      nodes.push_back(bias_node);
      types.push_back(bias_type);
    }
    add_step("FusedConv", std::move(in), std::move(nodes), std::move(types), std::move(attrs),
             cn.name, plan.steps[size_t(last)].out);
    for (int i : {int(a), m, t, last})
      if (i >= 0) removed[size_t(i)] = true;
    inserted[size_t(last)] = std::move(steps);
  }
  if (inserted.empty()) return;
  std::vector<Step> steps;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    auto it = inserted.find(i);
    if (it != inserted.end())
      for (Step& st : it->second) steps.push_back(std::move(st));
    if (!removed[i]) steps.push_back(std::move(plan.steps[i]));
  }
  plan.steps = std::move(steps);
}

}  // namespace kb
