// The scale fold (core/compile/passes.h): a convolution whose every output channel is then
// multiplied by a value the plan computes from invariant values alone (BatchNormalization in
// inference: x * gamma / sqrt(var + eps) + shift) becomes a convolution by the scaled kernel,
// conv(x, W) * s + t = conv(x, W * s) + t, so that the scale, the shift and a relu after them
// run as the convolution's own bias and post-op instead of a pass over its output. W * s is an
// invariant step: computed once per change of the weights (mark_invariant_steps), as the
// convolution then keeps the scaled kernel in oneDNN's layout. A relu after them, bounded or not
// (Keras' ReLU(max_value): relu6 in MobileNets), becomes the convolution's post-op.
#include <cmath>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/compile/passes.h"
#include "core/graph/scalar.h"
#include "core/ops/build.h"
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

// The convolutions whose scale can be folded: float32 or bfloat16, channels last, no relu before
// the scale; one group (the kernel's last axis is then the output channels) or depthwise (a group
// per input channel: the kernel's last two axes, (C, multiplier), are the output channels in
// order).
bool foldable_conv(const Step& st) {
  const Node& n = *st.node;
  DType t = st.out_type.dtype;
  if (!(n.is(ops::Conv) || n.is(ops::FusedConv)) || st.run_time ||
      (t != DType::f32 && t != DType::bf16))
    return false;
  if (n.attrs.i(attr::relu, 0) != 0 || st.in_types.size() < 2) return false;
  ConvGeom g = ConvGeom::from(n.attrs);
  if (g.channels_first || !st.out_type.shape.fully_known()) return false;
  const Dims& k = st.in_types[1].shape.dims;
  const int64_t oc = st.out_type.shape.dims.back();
  if (k.size() < 2) return false;
  if (g.groups == 1) return k.back() == oc;
  return g.groups == k[k.size() - 2] && g.groups * k.back() == oc;
}

bool depthwise(const Step& st) { return ConvGeom::from(st.node->attrs).groups != 1; }

// The value of a binary step's operand p when it is a scalar constant.
std::optional<double> scalar_operand(const Step& st, int p) {
  if (p < 0) return std::nullopt;
  const NodePtr& n = st.node->inputs[size_t(p)];
  if (!is_constant(n) || n->value->numel() != 1) return std::nullopt;
  return read_scalar(n->dtype(), n->value->data());
}

// Whether step i is a Cast of its one input to dtype t, of the same shape.
bool is_cast_to(const Plan& plan, int i, DType t) {
  if (i < 0) return false;
  const Step& st = plan.steps[size_t(i)];
  return st.node->is(ops::Cast) && st.in.size() == 1 && st.out_type.dtype == t &&
         st.out_type.shape == st.in_types[0].shape;
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
  const std::vector<int> reader = sole_reader(plan);
  auto next = [&](int slot) -> int { return reader[size_t(slot)]; };
  auto is = [&](int i, OpName op) { return i >= 0 && plan.steps[size_t(i)].node->is(op); };

  std::vector<bool> removed(plan.steps.size(), false);
  std::unordered_map<size_t, std::vector<Step>> inserted;  // before step i
  for (size_t a = 0; a < plan.steps.size(); ++a) {
    const Step& conv = plan.steps[a];
    if (removed[a] || !foldable_conv(conv)) continue;
    // A bfloat16 convolution (mixed_bfloat16) whose BatchNormalization computes in float32
    // between two casts, as Keras 3's does: conv -> float32 -> * s (+ t) -> bfloat16 (-> relu)
    // folds into a bfloat16 convolution by the float32 kernel times s, rounded once to
    // bfloat16 (the result within bfloat16's rounding of the unfolded one's).
    const bool bf16 = conv.out_type.dtype == DType::bf16;
    int up = -1;
    if (bf16) {
      up = next(conv.out);
      if (!is_cast_to(plan, up, DType::f32) || removed[size_t(up)]) continue;
    }
    const TensorType& y = bf16 ? plan.steps[size_t(up)].out_type : conv.out_type;
    const int y_slot = bf16 ? plan.steps[size_t(up)].out : conv.out;
    int m = next(y_slot);
    if (!is(m, ops::Mul) || removed[size_t(m)]) continue;
    const Step& mul = plan.steps[size_t(m)];
    int sp = other_operand(mul, y_slot);
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
    int down = -1;
    if (bf16) {
      down = next(plan.steps[size_t(last)].out);
      if (!is_cast_to(plan, down, DType::bf16) || removed[size_t(down)]) continue;
      last = down;
    }
    // A relu, and its bound: the relu's value read by Maximum(., 0) (nothing to it) and then by
    // Minimum(., c), as Keras' ReLU(max_value = c) is built.
    bool relu = false;
    double relu_max = INFINITY;
    std::vector<int> gone;  // the relu and its bound's steps, replaced too
    auto reader_with_scalar = [&](int i, OpName op) -> std::pair<int, double> {
      int j = next(plan.steps[size_t(i)].out);
      if (!is(j, op) || removed[size_t(j)]) return {-1, 0.0};
      const Step& st = plan.steps[size_t(j)];
      std::optional<double> v = scalar_operand(st, other_operand(st, plan.steps[size_t(i)].out));
      if (!v || !(st.out_type.shape == y.shape)) return {-1, 0.0};
      return {j, *v};
    };
    if (int r = next(plan.steps[size_t(last)].out);
        is(r, ops::Relu) && plan.steps[size_t(r)].out_type.shape == y.shape) {
      gone.push_back(r);
      last = r, relu = true;
      auto [lo, zero] = reader_with_scalar(r, ops::Maximum);
      if (zero != 0) lo = -1;  // not the no-op on a relu's value
      auto [hi, c] = reader_with_scalar(lo >= 0 ? lo : r, ops::Minimum);
      if (hi >= 0 && c > 0 && std::isfinite(c) && double(float(c)) == c) {
        if (lo >= 0) gone.push_back(lo);
        gone.push_back(hi);
        last = hi, relu_max = c;
      }
    }

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
    // A bfloat16 operand of the convolution seen in float32 (exact), and a float32 value
    // rounded back for it.
    auto cast_step = [&](int slot, const NodePtr& node, const TensorType& type, DType to,
                         const std::string& name) {
      return add_step("Cast", {slot}, {node}, {type}, {{attr::dtype, int64_t(to)}}, name);
    };
    int k_slot = conv.in[1];
    NodePtr k_node = cn.inputs[1];
    TensorType k_type = conv.in_types[1];
    if (bf16) {
      k_slot = cast_step(k_slot, k_node, k_type, DType::f32, cn.name + "/kernel_f32");
      k_node = plan.nodes.back();
      k_type = steps.back().out_type;
    }
    // A depthwise kernel (spatial..., C, multiplier) scales by s laid out as its last two axes.
    int ks_slot = s_slot;
    NodePtr ks_node = s_node;
    TensorType ks_type = s_type;
    if (depthwise(conv)) {
      const Dims& kd = conv.in_types[1].shape.dims;
      ks_slot = add_step("Reshape", {s_slot}, {s_node}, {s_type},
                         {{attr::dims, Dims{kd[kd.size() - 2], kd.back()}}}, cn.name + "/scale");
      ks_node = plan.nodes.back();
      ks_type = steps.back().out_type;
    }
    int kernel = add_step("Mul", {k_slot, ks_slot}, {k_node, ks_node}, {k_type, ks_type}, {},
                          cn.name + "/folded_kernel");
    NodePtr kernel_node = plan.nodes.back();
    TensorType kernel_type = steps.back().out_type;
    if (bf16) {
      kernel = cast_step(kernel, kernel_node, kernel_type, DType::bf16, cn.name + "/kernel_bf16");
      kernel_node = plan.nodes.back();
      kernel_type = steps.back().out_type;
    }
    int bias = -1;
    NodePtr bias_node;
    TensorType bias_type;
    if (conv.in.size() == 3) {  // (conv + b) * s = conv * s + b * s
      int b_slot = conv.in[2];
      NodePtr b_node = cn.inputs[2];
      TensorType b_type = conv.in_types[2];
      if (bf16) {
        b_slot = cast_step(b_slot, b_node, b_type, DType::f32, cn.name + "/bias_f32");
        b_node = plan.nodes.back();
        b_type = steps.back().out_type;
      }
      bias = add_step("Mul", {b_slot, s_slot}, {b_node, s_node}, {b_type, s_type}, {},
                      cn.name + "/folded_bias");
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
    if (bias >= 0 && bf16) {
      bias = cast_step(bias, bias_node, bias_type, DType::bf16, cn.name + "/bias_bf16");
      bias_node = plan.nodes.back();
      bias_type = steps.back().out_type;
    }
    Attrs attrs = cn.attrs;
    attrs.set(attr::relu, int64_t(relu));
    if (std::isfinite(relu_max)) attrs.set(attr::relu_max, relu_max);
    std::vector<int> in = {conv.in[0], kernel};
    std::vector<NodePtr> nodes = {cn.inputs[0], kernel_node};
    std::vector<TensorType> types = {conv.in_types[0], kernel_type};
    if (bias >= 0) {
      in.push_back(bias);
      nodes.push_back(bias_node);
      types.push_back(bias_type);
    }
    add_step("FusedConv", std::move(in), std::move(nodes), std::move(types), std::move(attrs),
             cn.name, plan.steps[size_t(last)].out);
    for (int i : {int(a), up, m, t, down, last})
      if (i >= 0) removed[size_t(i)] = true;
    for (int i : gone) removed[size_t(i)] = true;
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
