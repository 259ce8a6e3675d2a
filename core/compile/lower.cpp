// The lowering pass (core/compile/passes.h): the graph of a function as a plan's schedule of
// steps over slots.
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "core/compile/choose_kernels.h"
#include "core/compile/passes.h"
#include "core/graph/scalar.h"
#include "core/graph/traversal.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {

namespace {

struct SlotInfo {
  int slot = -1;
  TensorType type;
  std::shared_ptr<Buffer> constant;  // set when the value is known at plan time
};

struct CseKey {
  const OpDef* op;
  std::vector<int> in;
  const Attrs* attrs;
  bool operator==(const CseKey& o) const { return op == o.op && in == o.in && *attrs == *o.attrs; }
};
struct CseHash {
  size_t operator()(const CseKey& k) const {
    size_t h = std::hash<const void*>()(k.op) ^ k.attrs->hash();
    for (int s : k.in) h = h * 1000003u ^ size_t(s);
    return h;
  }
};

void check_input_shape(const Node& ph, const TensorType& t) {
  check(t.dtype == ph.dtype(), Status::dtype, "function: input '", ph.name, "' has dtype ",
        dtype_name(t.dtype), ", expected ", dtype_name(ph.dtype()));
  const Shape& s = ph.shape();
  if (!s.rank_known) return;
  bool ok = int64_t(t.shape.dims.size()) == s.rank();
  for (size_t i = 0; ok && i < s.dims.size(); ++i)
    ok = s.dims[i] < 0 || s.dims[i] == t.shape.dims[i];
  check(ok, Status::shape, "function: input '", ph.name, "' has shape ", t.shape.str(),
        ", the placeholder expects ", s.str());
}

std::shared_ptr<Buffer> evaluate_now(const Node& n, const std::vector<TensorType>& in_types,
                                     const TensorType& out_type,
                                     const std::vector<std::shared_ptr<Buffer>>& ins,
                                     const Kernel& kernel) {
  auto out = std::make_shared<Buffer>(out_type.dtype, out_type.shape.dims);
  if (!n.op->view && !n.op->dynamic) out->allocate();
  std::vector<const Buffer*> raw;
  for (auto& b : ins) raw.push_back(b.get());
  (void)in_types;
  kernel(raw, *out);
  if (!out->storage) out->allocate();
  return out;
}

}  // namespace

std::shared_ptr<Plan> lower(const std::vector<NodePtr>& inputs,
                            const std::vector<TensorType>& input_types,
                            const std::vector<NodePtr>& outputs,
                            const std::vector<NodePtr>& updates, int phase, Device device,
                            const std::vector<int>& fed_phases) {
  auto plan = std::make_shared<Plan>();
  plan->device = device;
  // Updates may carry further updates as extra inputs (hidden state): collect them all.
  std::vector<NodePtr> assigns;
  for (auto& u : updates) {
    check(u && u->is(ops::Assign), Status::invalid_argument,
          "function: an update is not an update operation (use update, update_add, ...)");
  }
  for (auto& n : topo_order(updates))
    if (n->is(ops::Assign)) assigns.push_back(n);

  std::vector<NodePtr> roots = outputs;
  roots.insert(roots.end(), assigns.begin(), assigns.end());

  std::unordered_map<const Node*, size_t> input_index;
  for (size_t i = 0; i < inputs.size(); ++i) input_index[inputs[i].get()] = i;

  std::unordered_map<const Node*, SlotInfo> info;
  std::unordered_map<CseKey, int, CseHash> cse;
  std::unordered_map<const Buffer*, int> const_ids;
  auto new_slot = [&]() { return plan->num_slots++; };

  // An op with tensor arguments whose values are known now, as the ops of static attributes
  // it specializes into (OpDef::specialize), or null.
  auto specialization = [&](const Node& n) -> NodePtr {
    if (!n.op->specialize) return nullptr;
    std::vector<const Buffer*> values;
    for (auto& c : n.inputs) {
      const SlotInfo& ci = info.at(c.get());
      if (!ci.type.shape.fully_known()) return nullptr;
      values.push_back(ci.constant.get());
    }
    return n.op->specialize(n, values);
  };

  std::function<void(const NodePtr&)> plan_node;
  plan_node = [&](const NodePtr& np) {
    const Node& n = *np;
    if (NodePtr s = specialization(n)) {
      plan->nodes.push_back(s);
      for (auto& c : s->inputs)  // constants it made (n's own inputs are planned)
        if (!info.count(c.get())) plan_node(c);
      plan_node(s);
      info[&n] = info.at(s.get());
      return;
    }
    SlotInfo si;
    auto in_it = input_index.find(&n);
    int fed_phase = -1;
    if (in_it != input_index.end() && in_it->second < fed_phases.size())
      fed_phase = fed_phases[in_it->second];
    if (fed_phase >= 0) {  // the learning phase, fed: a constant of this plan
      auto b = Buffer::make(DType::b8, {});
      write_scalar(DType::b8, b->data(), fed_phase);
      si.type = {DType::b8, Shape(Dims{})};
      si.constant = b;
    } else if (in_it != input_index.end()) {
      si.type = input_types[in_it->second];
      check_input_shape(n, si.type);
      si.slot = new_slot();
      plan->inputs.push_back({in_it->second, si.slot});
    } else if (n.is(ops::Placeholder)) {
      fail(Status::invalid_argument, "function: placeholder '", n.name,
           "' is needed to compute the outputs but is not among the inputs");
    } else if (n.is(ops::LearningPhase)) {
      auto b = Buffer::make(DType::b8, {});
      write_scalar(DType::b8, b->data(), phase);
      si.type = {DType::b8, Shape(Dims{})};
      si.constant = b;
    } else if (n.is(ops::Constant)) {
      si.type = {n.value->dtype, Shape(n.value->dims)};
      si.constant = n.value;
    } else if (n.is(ops::Variable)) {
      si.type = {n.value->dtype, Shape(n.value->dims)};
      si.slot = new_slot();
      plan->variables.push_back({np, si.slot});
    } else if (n.is(ops::Assign)) {
      const SlotInfo& v = info.at(n.inputs[1].get());
      const SlotInfo& var = info.at(n.inputs[0].get());
      check(n.inputs[0]->is(ops::Variable), Status::invalid_argument, "update: '",
            n.inputs[0]->name, "' is not a variable");
      // A value whose shape is known only at run time is checked by run_plan.
      check(!v.type.shape.fully_known() || v.type.shape.dims == var.type.shape.dims, Status::shape,
            "update: the new value of '", n.inputs[0]->name, "' has shape ", v.type.shape.str(),
            ", the variable has ", var.type.shape.str());
      si = v;
      if (si.slot < 0) {  // constant value: give it a slot
        si.slot = new_slot();
        plan->constants.push_back({si.slot, si.constant});
        si.constant = nullptr;
      }
    } else {
      std::vector<TensorType> in_types;
      bool all_const = true;
      bool known = true;  // false downstream of a dynamic op: the kernel is chosen at run time
      std::vector<int> in_slots;
      for (auto& c : n.inputs) {
        const SlotInfo& ci = info.at(c.get());
        in_types.push_back(ci.type);
        all_const = all_const && ci.constant;
        known = known && ci.type.shape.fully_known();
        if (ci.constant) {
          auto id = const_ids.emplace(ci.constant.get(), -1 - int(const_ids.size())).first->second;
          in_slots.push_back(ci.slot >= 0 ? ci.slot : id);
        } else {
          in_slots.push_back(ci.slot);
        }
      }
      if (known) check_switch_branches(n, in_types);
      if (n.op->infer_values) {
        std::vector<const Buffer*> values;
        for (auto& c : n.inputs) values.push_back(info.at(c.get()).constant.get());
        si.type = n.op->infer_values(in_types, values, n.attrs);
      } else {
        si.type = n.op->infer(in_types, n.attrs);
      }
      check(!known || n.op->dynamic || si.type.shape.fully_known(), Status::shape, n.op->name,
            ": could not determine the shape of '", n.name, "' for these inputs");
      if (known && !n.op->stateful && (all_const || n.op->shape_only)) {
        Kernel k = cpu_factory(n)(KernelArgs{n, in_types, si.type});
        std::vector<std::shared_ptr<Buffer>> ins;
        for (auto& c : n.inputs) ins.push_back(info.at(c.get()).constant);
        if (n.op->shape_only) {
          for (auto& b : ins)
            if (!b) b = std::make_shared<Buffer>();
        }
        si.constant = evaluate_now(n, in_types, si.type, ins, k);
        si.type.shape = Shape(si.constant->dims);
      } else {
        CseKey key{n.op, in_slots, &n.attrs};
        auto hit = n.op->stateful ? cse.end() : cse.find(key);
        if (hit != cse.end()) {
          si.slot = hit->second;
        } else {
          // Constants feeding a step get slots of their own.
          Step st;
          for (auto& c : n.inputs) {
            SlotInfo& ci = info.at(c.get());
            if (ci.constant) {
              if (ci.slot < 0) {
                ci.slot = new_slot();
                plan->constants.push_back({ci.slot, ci.constant});
              }
            }
            st.in.push_back(ci.slot);
          }
          // An input read for its type alone, whose shape is known now, is not read at run
          // time: another value stands in, so that nothing computes it for this step.
          int like = n.op->shape_input;
          if (known && like > 0 && size_t(like) < st.in.size()) st.in[size_t(like)] = st.in[0];
          if (known)
            st.in_types = in_types;
          else
            st.run_time = std::make_shared<RunTimeKernels>();
          st.out_type = si.type;
          st.view =
              n.op->view && (!known || !n.op->view_when || n.op->view_when(in_types, si.type));
          st.dynamic = n.op->dynamic;
          st.node = &n;
          si.slot = new_slot();
          st.out = si.slot;
          plan->steps.push_back(std::move(st));
          if (!n.op->stateful) cse.emplace(CseKey{n.op, in_slots, &n.attrs}, si.slot);
        }
      }
    }
    info[&n] = si;
  };

  // A Switch (or a Select with the branches' type) whose condition is a scalar known now (the
  // learning phase, a constant) is an alias of the chosen branch: 1 or 2, else -1.
  auto static_choice = [&](const Node& n) -> int {
    const SlotInfo& c = info.at(n.inputs[0].get());
    if (!c.constant || !c.type.shape.dims.empty()) return -1;
    int pick = read_scalar(c.constant->dtype, c.constant->data()) != 0 ? 1 : 2;
    if (n.is(ops::Select)) {
      const NodePtr& b = n.inputs[size_t(pick)];
      if (b->type.dtype != n.type.dtype || !(b->type.shape == n.type.shape) ||
          !n.type.shape.fully_known())
        return -1;
    }
    return pick;
  };
  // Walks the graph children first, deciding such choices before the branches are planned, so
  // that the branch ruled out is never visited (pruned).
  struct Frame {
    NodePtr n;
    size_t i = 0;
    bool chooser = false;
    bool decided = false;
    int pick = -1;
    bool pick_pushed = false;
  };
  std::unordered_set<const Node*> done;
  for (auto& r : roots) {
    if (!r || done.count(r.get())) continue;
    std::vector<Frame> stack;
    auto push = [&](const NodePtr& c) {
      Frame f;
      f.n = c;
      f.chooser = (c->is(ops::Switch) || c->is(ops::Select)) && !input_index.count(c.get());
      stack.push_back(std::move(f));
    };
    push(r);
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.chooser && !f.decided && f.i == 1) {
        f.decided = true;
        f.pick = static_choice(*f.n);
      }
      NodePtr child;
      if (f.pick >= 0) {
        if (!f.pick_pushed) {
          f.pick_pushed = true;
          child = f.n->inputs[size_t(f.pick)];
        }
      } else if (f.i < f.n->inputs.size() && !input_index.count(f.n.get())) {
        // An input's value is given: what it was computed from (a loop body's captured
        // transpose of an outer placeholder, say) is neither needed nor available.
        child = f.n->inputs[f.i++];
      }
      if (child) {
        if (!done.count(child.get())) push(child);
        continue;
      }
      NodePtr n = f.n;
      int pick = f.pick;
      stack.pop_back();
      if (pick >= 0)
        info[n.get()] = info.at(n->inputs[size_t(pick)].get());
      else
        plan_node(n);
      done.insert(n.get());
    }
  }

  auto slot_of = [&](const NodePtr& n) {
    SlotInfo& si = info.at(n.get());
    if (si.slot < 0) {
      si.slot = new_slot();
      plan->constants.push_back({si.slot, si.constant});
    }
    return si.slot;
  };
  for (auto& o : outputs) {
    plan->outputs.push_back(slot_of(o));
    plan->output_types.push_back(info.at(o.get()).type);
  }
  for (auto& a : assigns) plan->updates.push_back({a->inputs[0], slot_of(a->inputs[1])});
  return plan;
}

}  // namespace kb
