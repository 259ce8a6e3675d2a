// The epilogue rewrite (core/compile/passes.h): a convolution or a matrix product followed by a
// bias add and/or a relu becomes one FusedConv / FusedMatMul node (oneDNN's bias and relu post-ops
// on the CPU; on the GPU cuDNN's fused forward convolution and cuBLASLt's epilogues) when the
// intermediate values have no other reader. Gradients are taken on the user's graph before any
// function is compiled, so the rewrite sees forward and gradient nodes alike and only fuses where
// nothing else reads the product's or the bias add's value (readers of their shape alone are
// redirected).
#include "core/compile/passes.h"

#include <optional>
#include <string>
#include <unordered_map>

#include "core/backend/device.h"
#include "core/backend/kernel.h"
#include "core/graph/session.h"
#include "core/ops/build.h"
#include "core/ops/conv_ops.h"
#include "core/ops/op.h"
#include "core/graph/traversal.h"

namespace kb {

namespace {

bool same_type(const TensorType& a, const TensorType& b) {
  return a.dtype == b.dtype && a.shape == b.shape && a.parts.empty() && b.parts.empty();
}

// b as the second operand of Add(conv, b): one value per output channel of the convolution,
// broadcast along every other axis (bias_add's Add in either data format).
bool is_channel_bias(const NodePtr& b, const Node& conv) {
  if (b->dtype() != conv.dtype() || !b->shape().fully_known()) return false;
  const Dims& bd = b->shape().dims;
  const Dims& yd = conv.shape().dims;
  ConvGeom g = ConvGeom::from(conv.attrs);
  size_t ca = channel_axis(g.channels_first, g.nsp());
  int64_t oc = yd[ca];
  if (oc < 0 || bd.size() > yd.size() || numel(bd) != oc) return false;
  size_t off = yd.size() - bd.size();
  for (size_t i = 0; i < bd.size(); ++i)
    if (bd[i] != (off + i == ca ? oc : 1)) return false;
  return true;
}

// b as the second operand of Add(product, b): one value per column of a matrix product without
// batch axes, shape (n) or (1, n).
bool is_column_bias(const NodePtr& b, const Node& product) {
  if (b->dtype() != product.dtype() || !b->shape().fully_known()) return false;
  const Dims& bd = b->shape().dims;
  int64_t n = product.shape().dims.back();
  return n >= 0 && (bd == Dims{n} || bd == Dims{1, n});
}

// The fused op of a product whose epilogue can be fused on `device` (one with a kernel for it):
// float32, or bfloat16 on the CPU, whose oneDNN bf16 kernels add the bias and apply the relu
// before rounding the result once.
std::optional<OpName> fused_op(const Node& n, Device device) {
  bool bf16_here = n.dtype() == DType::bf16 && device == Device::cpu;
  if ((n.dtype() != DType::f32 && !bf16_here) || n.inputs.size() != 2) return std::nullopt;
  std::optional<OpName> op;
  if (n.is(ops::Conv)) op = ops::FusedConv;
  if (n.is(ops::MatMul) && n.shape().rank_known && n.rank() == 2) op = ops::FusedMatMul;
  if (op && find_kernel(device_name(device), op->c_str())) return op;
  return std::nullopt;
}
bool is_bias(const NodePtr& b, const Node& product) {
  return product.is(ops::Conv) ? is_channel_bias(b, product) : is_column_bias(b, product);
}

struct Fusion {
  NodePtr product, bias;  // bias may be null
  bool relu = false;
  std::vector<const Node*> replaced;  // product, the Add, the Relu: all become the fused value
  NodePtr fused;                      // created when the graph is rebuilt
};

}  // namespace

bool rewrite_epilogues(std::vector<NodePtr>& outputs, std::vector<NodePtr>& updates,
                       Device device) {
  std::vector<NodePtr> roots = outputs;
  roots.insert(roots.end(), updates.begin(), updates.end());
  for (auto& r : roots)
    if (!r) return false;  // lower reports it
  std::vector<NodePtr> order = topo_order(roots);

  // Readers of each value (not counting readers of its shape alone); outputs count as readers.
  std::unordered_map<const Node*, int> readers;
  std::unordered_map<const Node*, const Node*> reader;  // the last one seen
  for (auto& n : order) {
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      if (reads_shape_only(*n, i)) continue;
      ++readers[n->inputs[i].get()];
      reader[n->inputs[i].get()] = n.get();
    }
  }
  for (auto& o : outputs) readers[o.get()] += 2;  // never an intermediate of a fusion
  auto only_reader = [&](const Node* n) -> const Node* {
    auto it = readers.find(n);
    return it != readers.end() && it->second == 1 ? reader.at(n) : nullptr;
  };

  std::vector<Fusion> fusions;
  std::unordered_map<const Node*, size_t> fusion_of;  // replaced node -> its fusion
  for (auto& n : order) {
    if (!fused_op(*n, device)) continue;
    Fusion f;
    f.product = n;
    f.replaced.push_back(n.get());
    const Node* top = n.get();
    const Node* r = only_reader(top);
    if (r && r->is(ops::Add) && same_type(r->type, n->type) && !fusion_of.count(r)) {
      const NodePtr& other = r->inputs[0].get() == n.get() ? r->inputs[1] : r->inputs[0];
      if (other.get() != n.get() && is_bias(other, *n)) {
        f.bias = other;
        top = r;
        f.replaced.push_back(r);
        r = only_reader(top);
      }
    }
    if (r && r->is(ops::Relu) && same_type(r->type, n->type) && !fusion_of.count(r)) {
      f.relu = true;
      f.replaced.push_back(r);
    }
    if (f.replaced.size() == 1) continue;
    for (const Node* p : f.replaced) fusion_of[p] = fusions.size();
    fusions.push_back(std::move(f));
  }
  if (fusions.empty()) return false;

  // Nodes downstream of a fusion are rebuilt; a Random node must not be (its draws are counted
  // per node), so the fusions upstream of one are dropped.
  std::unordered_map<const Node*, std::vector<bool>> upstream;
  std::vector<bool> keep(fusions.size(), true);
  for (auto& n : order) {
    std::vector<bool> up(fusions.size(), false);
    bool any = false;
    for (auto& c : n->inputs) {
      auto it = upstream.find(c.get());
      if (it == upstream.end()) continue;
      for (size_t i = 0; i < up.size(); ++i) up[i] = up[i] || it->second[i];
      any = true;
    }
    auto fo = fusion_of.find(n.get());
    if (fo != fusion_of.end()) up[fo->second] = any = true;
    if (!any) continue;
    if (n->is(ops::Random))
      for (size_t i = 0; i < up.size(); ++i)
        if (up[i]) keep[i] = false;
    upstream[n.get()] = std::move(up);
  }
  bool kept_any = false;
  for (size_t i = 0; i < fusions.size(); ++i) {
    kept_any = kept_any || keep[i];
    if (!keep[i])
      for (const Node* p : fusions[i].replaced) fusion_of.erase(p);
  }
  if (!kept_any) return false;

  // Rebuild: the replaced nodes become their fusion's node, which reads the product's inputs
  // and the bias; nodes whose inputs changed are copied with the new inputs; everything else
  // (leaves included) stays as it is. The order puts a fusion's inputs before all its nodes.
  auto deps = [&](const Node* n) -> std::vector<NodePtr> {
    auto fo = fusion_of.find(n);
    if (fo == fusion_of.end()) return n->inputs;
    const Fusion& f = fusions[fo->second];
    std::vector<NodePtr> d = f.product->inputs;
    if (f.bias) d.push_back(f.bias);
    return d;
  };
  std::vector<NodePtr> rebuild_order;
  {
    std::unordered_map<const Node*, int> state;  // 1: on the stack, 2: done
    std::vector<std::pair<NodePtr, std::vector<NodePtr>>> stack;
    for (auto& r : roots) {
      if (state[r.get()] == 2) continue;
      stack.push_back({r, deps(r.get())});
      state[r.get()] = 1;
      while (!stack.empty()) {
        auto& [n, pending] = stack.back();
        if (!pending.empty()) {
          NodePtr c = pending.back();
          pending.pop_back();
          int& st = state[c.get()];
          if (st == 1) return false;  // a fusion would depend on itself: leave the graph alone
          if (st == 0) {
            st = 1;
            auto d = deps(c.get());
            stack.push_back({c, std::move(d)});
          }
          continue;
        }
        state[n.get()] = 2;
        rebuild_order.push_back(n);
        stack.pop_back();
      }
    }
  }
  std::unordered_map<const Node*, NodePtr> now;
  auto mapped = [&](const NodePtr& n) {
    auto it = now.find(n.get());
    return it != now.end() ? it->second : n;
  };
  for (auto& n : rebuild_order) {
    auto fo = fusion_of.find(n.get());
    if (fo != fusion_of.end()) {
      Fusion& f = fusions[fo->second];
      if (!f.fused) {
        Attrs a = f.product->attrs;
        a.set(attr::relu, int64_t(f.relu));
        std::vector<NodePtr> ins = {mapped(f.product->inputs[0]), mapped(f.product->inputs[1])};
        if (f.bias) ins.push_back(mapped(f.bias));
        f.fused =
            make_node(*fused_op(*f.product, device), std::move(ins), std::move(a), f.product->name);
      }
      now[n.get()] = f.fused;
      continue;
    }
    bool changed = false;
    std::vector<NodePtr> ins;
    for (auto& c : n->inputs) {
      ins.push_back(mapped(c));
      changed = changed || ins.back() != c;
    }
    if (!changed) continue;
    auto copy = std::make_shared<Node>();
    copy->op = n->op;
    copy->inputs = std::move(ins);
    copy->attrs = n->attrs;
    copy->type = n->type;
    copy->name = n->name;
    copy->id = Session::get().next_node_id();
    copy->value = n->value;
    copy->keras_tensor = n->keras_tensor;
    copy->uses_learning_phase = n->uses_learning_phase;
    now[n.get()] = copy;
  }

  for (auto& o : outputs) o = mapped(o);
  for (auto& u : updates) u = mapped(u);
  return true;
}

}  // namespace kb
