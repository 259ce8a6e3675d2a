#include "core/autodiff/gradients.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/autodiff/loop_gradients.h"
#include "core/graph/scalar.h"
#include "core/ops/build.h"
#include "core/ops/op.h"
#include "core/ops/slice_spec.h"
#include "core/util/error.h"
#include "core/graph/traversal.h"

namespace kb {

namespace {

// d loss / d loss: ones of the loss' shape. A constant when that shape is known and small (a
// scalar loss, always in training), so that a plan never computes the loss only to read its
// shape (a Reduce over the whole activation when only the gradients are fetched); else ones
// filled at run time (FillLike reads the loss for its shape alone), so that building the
// gradient of a huge loss allocates nothing.
NodePtr ones_seed(const NodePtr& loss) {
  constexpr int64_t kConstantSeedElements = 1 << 16;
  if (!loss->shape().fully_known() || numel(loss->shape().dims) > kConstantSeedElements)
    return fill_like(loss, 1.0, loss->dtype());
  auto b = Buffer::make(loss->dtype(), loss->shape().dims);
  auto* p = static_cast<char*>(b->data());
  for (int64_t i = 0; i < b->numel(); ++i)
    write_scalar(loss->dtype(), p + i * int64_t(dtype_size(loss->dtype())), 1.0);
  return constant_node(b);
}

// The sum of the gradients reaching `target`, in the order they arrived. Blocks sliced from
// `target` that tile one axis (the gates cut from one product, the columns of a concatenated
// weight) each send a zero-padded StridedSliceGrad; their sum is then the concatenation of their
// gradients: one copy instead of a padded tensor per block and the additions.
NodePtr sum_gradients(const NodePtr& target, const std::vector<NodePtr>& gs) {
  std::vector<std::pair<AxisBlock, NodePtr>> blocks;
  std::vector<NodePtr> rest;
  for (auto& g : gs) {
    AxisBlock b;
    if (g->is(ops::StridedSliceGrad) && g->inputs[1] == target &&
        axis_block(target->shape().dims, g->attrs, &b) &&
        (blocks.empty() || blocks[0].first.axis == b.axis))
      blocks.push_back({b, g->inputs[0]});
    else
      rest.push_back(g);
  }
  NodePtr joined;
  if (blocks.size() >= 2) {
    std::stable_sort(blocks.begin(), blocks.end(),
                     [](const auto& x, const auto& y) { return x.first.begin < y.first.begin; });
    std::vector<NodePtr> parts;
    int64_t axis = blocks[0].first.axis, at = 0;
    bool tiles = true;
    for (size_t i = 0; i < blocks.size() && tiles; ++i) {
      const AxisBlock& b = blocks[i].first;
      if (i > 0 && b.begin == blocks[i - 1].first.begin && b.end == blocks[i - 1].first.end) {
        parts.back() = add(parts.back(), blocks[i].second);  // the same block sliced twice
        continue;
      }
      tiles = b.begin == at && b.end > b.begin;
      at = b.end;
      parts.push_back(blocks[i].second);
    }
    if (tiles && at == target->shape().dims[size_t(axis)])
      joined = make_node(ops::Concat, parts, {{attr::axis, axis}});
  }
  if (!joined) {
    NodePtr sum;
    for (auto& g : gs) sum = sum ? add(sum, g) : g;
    return sum;
  }
  for (auto& g : rest) joined = add(joined, g);
  return joined;
}

}  // namespace

std::vector<NodePtr> gradients(const NodePtr& loss, const std::vector<NodePtr>& wrt) {
  check(loss != nullptr, Status::invalid_argument, "gradients: loss is NULL");
  check(is_floating(loss->dtype()), Status::dtype, "gradients: loss must be floating, got ",
        dtype_name(loss->dtype()));
  std::unordered_set<const Node*> targets;
  for (size_t i = 0; i < wrt.size(); ++i) {
    check(wrt[i] != nullptr, Status::invalid_argument, "gradients: variable ", i, " is NULL");
    targets.insert(wrt[i].get());
  }
  std::vector<NodePtr> order = topo_order({loss});
  // Only nodes that depend on a target carry gradients.
  std::unordered_set<const Node*> depends;
  for (auto& n : order) {
    bool d = targets.count(n.get()) > 0;
    for (auto& c : n->inputs) d = d || depends.count(c.get());
    if (d) depends.insert(n.get());
  }
  // Gradients reaching each node, summed when the node is reached (all its users are done).
  std::unordered_map<const Node*, std::vector<NodePtr>> incoming;
  if (depends.count(loss.get())) incoming[loss.get()] = {ones_seed(loss)};
  auto total = [&](const NodePtr& n) -> NodePtr {
    auto it = incoming.find(n.get());
    if (it == incoming.end()) return nullptr;
    if (it->second.size() > 1) it->second = {sum_gradients(n, it->second)};
    return it->second[0];
  };
  // Tuple-typed nodes (Loop) collect one gradient per part from their TupleGet users.
  std::unordered_map<const Node*, std::vector<NodePtr>> part_grads;

  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const NodePtr& n = *it;
    std::vector<NodePtr> ig;
    if (n->is(ops::Loop)) {
      auto pg = part_grads.find(n.get());
      if (pg == part_grads.end()) continue;
      ig = grad_loop(n, pg->second);
    } else {
      NodePtr g = total(n);
      if (!g) continue;
      if (n->is(ops::TupleGet)) {
        const NodePtr& t = n->inputs[0];
        if (!depends.count(t.get())) continue;
        auto& parts = part_grads[t.get()];
        parts.resize(t->type.parts.size());
        auto& slot = parts[size_t(n->attrs.i(attr::index))];
        slot = slot ? add(slot, g) : g;
        continue;
      }
      if (!n->op->grad || n->inputs.empty()) continue;
      ig = n->op->grad(n, g);
    }
    for (size_t i = 0; i < n->inputs.size() && i < ig.size(); ++i) {
      const NodePtr& c = n->inputs[i];
      if (!ig[i] || !depends.count(c.get()) || !is_floating(c->dtype())) continue;
      incoming[c.get()].push_back(ig[i]);
    }
  }
  std::vector<NodePtr> out;
  for (auto& w : wrt) {
    NodePtr g = total(w);
    out.push_back(g ? g : zeros_like(w));
  }
  return out;
}

}  // namespace kb
