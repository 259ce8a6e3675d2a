// function(inputs, outputs, updates) -> Plan: prune (only what the roots need), bind leaves,
// specialize shapes, fold constants and shape-only values, merge common subexpressions, and
// compute buffer lifetimes and places (plan_memory).
#include "core/compile/plan.h"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "core/backend/device.h"
#include "core/compile/fuse_epilogue.h"
#include "core/compile/fuse_elementwise.h"
#include "core/compile/step_profile.h"
#include "core/graph/scalar.h"
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

void check_switch_branches(const Node& n, const std::vector<TensorType>& in_types) {
  if (n.is("Switch") && !(in_types[1].shape == in_types[2].shape))
    fail(Status::shape, "switch: the branches have shapes ", in_types[1].shape.str(), " and ",
         in_types[2].shape.str(),
         "; branches of different shapes need a condition known when the function is built");
}

Kernel specialize_when_run(const KernelArgs& k);

KernelFactory cpu_factory(const Node& n) {
  KernelFactory f = find_kernel("cpu", n.op->name);
  if (!f && n.op->specialize) return specialize_when_run;
  check(f != nullptr, Status::not_implemented, n.op->name, ": no CPU kernel");
  return f;
}

// An op with tensor arguments whose values the plan did not know (OpDef::specialize): the CPU
// specializes it for the values it has when the function runs, and runs what that gives.
Kernel specialize_when_run(const KernelArgs& k) {
  const Node* node = &k.node;
  return [node](const std::vector<const Buffer*>& in, Buffer& out) {
    NodePtr s = node->op->specialize(*node, in);
    check(s != nullptr, Status::internal, node->op->name, ": no specialization for its values");
    if (s->is("Constant")) {
      out.dims = s->value->dims;
      out.storage = s->value->storage;
      return;
    }
    std::vector<const Buffer*> args;
    std::vector<TensorType> types;
    for (auto& c : s->inputs) {
      const Buffer* b = c->is("Constant") ? c->value.get() : nullptr;
      for (size_t j = 0; !b && j < node->inputs.size(); ++j)
        if (node->inputs[j] == c) b = in[j];
      check(b != nullptr, Status::internal, node->op->name, ": a specialization reads '", c->name,
            "', which is not an input");
      args.push_back(b);
      types.push_back({b->dtype, Shape(b->dims)});
    }
    TensorType t = s->op->infer(types, s->attrs);
    Kernel kernel = cpu_factory(*s)(KernelArgs{*s, types, t});
    out.dims = t.shape.dims;
    if (!s->op->view && !s->op->dynamic) out.allocate();
    kernel(args, out);
    if (!out.storage) out.allocate();
  };
}

// KB_DEVICE_FALLBACK=error: a step whose device kernel declines its types fails the plan
// instead of running on the CPU (ops the device has no kernel for at all still run there). A
// test on a GPU then cannot pass through the CPU unnoticed. Read per plan, so that a program
// can change it between functions.
bool fallback_is_error() {
  const char* v = std::getenv("KB_DEVICE_FALLBACK");
  return v && std::string(v) == "error";
}

std::string types_str(const std::vector<TensorType>& in) {
  std::string s;
  for (auto& t : in)
    s += (s.empty() ? "" : ", ") + std::string(dtype_name(t.dtype)) + t.shape.str();
  return s;
}

// Whether a step has an operand of more dims than a device kernel indexes.
bool beyond_device_rank(const KernelArgs& k) {
  auto deep = [](const TensorType& t) {
    return t.shape.rank_known && t.shape.rank() > kMaxDeviceRank;
  };
  if (deep(k.out)) return true;
  for (const TensorType& t : k.in)
    if (deep(t)) return true;
  return false;
}

// The kernel of a step and where it runs: on `device` when that has a kernel accepting these
// types (a device factory declines with an empty Kernel) and their ranks, else on the CPU.
std::pair<Kernel, Device> step_kernel(const Node& n, const std::vector<TensorType>& in,
                                      const TensorType& out, Device device,
                                      const std::vector<bool>* used_parts = nullptr) {
  KernelFactory cpu_f = cpu_factory(n);
  KernelArgs args{n, in, out, used_parts};
  if (device != Device::cpu)
    if (KernelFactory f = find_kernel(device_name(device), n.op->name)) {
      if (!beyond_device_rank(args))
        if (Kernel k = f(args)) return {std::move(k), device};
      // The CPU's factory first: bad input gets its message, not the fallback's.
      Kernel k = cpu_f(args);
      check(!fallback_is_error(), Status::not_implemented, n.op->name, ": the ",
            device_name(device), " kernel declines (", types_str(in),
            ") and KB_DEVICE_FALLBACK=error forbids running it on the CPU");
      return {std::move(k), Device::cpu};
    }
  return {cpu_f(args), Device::cpu};
}

// Steps whose value no output, update or kept step reads are dropped (a stateful op stays: it
// advances its state). They arise where a graph names a value only for its shape or type, or
// where a rewrite left the value it replaced reachable.
void drop_unread_steps(Plan& plan) {
  std::vector<bool> read(size_t(plan.num_slots), false);
  for (int s : plan.outputs) read[size_t(s)] = true;
  for (auto& u : plan.updates) read[size_t(u.second)] = true;
  std::vector<bool> keep(plan.steps.size(), false);
  for (size_t i = plan.steps.size(); i-- > 0;) {
    const Step& st = plan.steps[i];
    keep[i] = read[size_t(st.out)] || st.node->op->stateful;
    if (keep[i])
      for (int s : st.in) read[size_t(s)] = true;
  }
  std::vector<Step> kept;
  for (size_t i = 0; i < plan.steps.size(); ++i)
    if (keep[i]) kept.push_back(std::move(plan.steps[i]));
  plan.steps = std::move(kept);
}

}  // namespace

std::shared_ptr<Plan> build_plan(const std::vector<NodePtr>& inputs,
                                 const std::vector<TensorType>& input_types,
                                 const std::vector<NodePtr>& outputs,
                                 const std::vector<NodePtr>& updates, int phase, Device device,
                                 const std::vector<int>& fed_phases) {
  if (auto p = fused_plan(inputs, input_types, outputs, updates, phase, device, fed_phases))
    return p;
  auto plan = std::make_shared<Plan>();
  plan->device = device;
  // Updates may carry further updates as extra inputs (hidden state): collect them all.
  std::vector<NodePtr> assigns;
  for (auto& u : updates) {
    check(u && u->is("Assign"), Status::invalid_argument,
          "function: an update is not an update operation (use update, update_add, ...)");
  }
  for (auto& n : topo_order(updates))
    if (n->is("Assign")) assigns.push_back(n);

  std::vector<NodePtr> roots = outputs;
  roots.insert(roots.end(), assigns.begin(), assigns.end());

  std::unordered_map<const Node*, size_t> input_index;
  for (size_t i = 0; i < inputs.size(); ++i) input_index[inputs[i].get()] = i;

  // The parts of each tuple (a Loop's results) that anything in the graph reads.
  std::unordered_map<const Node*, std::vector<bool>> tuple_reads;
  for (auto& n : topo_order(roots))
    if (n->is("TupleGet")) {
      const Node* tuple = n->inputs[0].get();
      auto& used = tuple_reads[tuple];
      used.resize(tuple->type.parts.size(), false);
      size_t index = size_t(n->attrs.i("index"));
      if (index < used.size()) used[index] = true;
    }

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
    } else if (n.is("Placeholder")) {
      fail(Status::invalid_argument, "function: placeholder '", n.name,
           "' is needed to compute the outputs but is not among the inputs");
    } else if (n.is("LearningPhase")) {
      auto b = Buffer::make(DType::b8, {});
      write_scalar(DType::b8, b->data(), phase);
      si.type = {DType::b8, Shape(Dims{})};
      si.constant = b;
    } else if (n.is("Constant")) {
      si.type = {n.value->dtype, Shape(n.value->dims)};
      si.constant = n.value;
    } else if (n.is("Variable")) {
      si.type = {n.value->dtype, Shape(n.value->dims)};
      si.slot = new_slot();
      plan->variables.push_back({np, si.slot});
    } else if (n.is("Assign")) {
      const SlotInfo& v = info.at(n.inputs[1].get());
      const SlotInfo& var = info.at(n.inputs[0].get());
      check(n.inputs[0]->is("Variable"), Status::invalid_argument, "update: '", n.inputs[0]->name,
            "' is not a variable");
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
      KernelFactory cpu_f = cpu_factory(n);
      // Run on the plan's device when it has a kernel for this op, else on the CPU. A tuple's
      // parts stay where the tuple was made (a tuple cannot be transferred): TupleGet runs on
      // the device of the step that produced its tuple.
      Device step_device = device;
      if (device != Device::cpu && n.is("TupleGet") && in_slots[0] >= 0) {
        for (auto it = plan->steps.rbegin(); it != plan->steps.rend(); ++it)
          if (it->out == in_slots[0]) {
            step_device = it->device;
            break;
          }
      }
      if (known && !n.op->stateful && (all_const || n.op->shape_only)) {
        Kernel k = cpu_f(KernelArgs{n, in_types, si.type});
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
          if (known) {
            auto reads = tuple_reads.find(&n);
            std::tie(st.kernel, step_device) =
                step_kernel(n, in_types, si.type, step_device,
                            reads == tuple_reads.end() ? nullptr : &reads->second);
          } else
            st.run_time = std::make_shared<RunTimeKernels>();
          st.out_type = si.type;
          st.view =
              n.op->view && (!known || !n.op->view_when || n.op->view_when(in_types, si.type));
          st.dynamic = n.op->dynamic;
          st.node = &n;
          st.device = step_device;
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
    if (n.is("Select")) {
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
      f.chooser = (c->is("Switch") || c->is("Select")) && !input_index.count(c.get());
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
  fuse_elementwise(*plan, input_types);
  drop_unread_steps(*plan);

  // KB_LOG_PLAN=1 lists the steps and where each runs (to spot CPU fallbacks on a GPU); 2 adds
  // each step's output shape and the ops of the nodes it reads; 3 lists one step per line with
  // the slots it reads and writes (inputs, variables and constants first).
  static const int log_plan = [] {
    const char* v = std::getenv("KB_LOG_PLAN");
    return v ? std::atoi(v) : 0;
  }();
  if (log_plan >= 3) {
    std::string text = "kbackend plan (" + std::string(device_name(device)) + "):\n  inputs";
    for (auto& [idx, slot] : plan->inputs)
      text += " s" + std::to_string(slot) + "=#" + std::to_string(idx);
    text += "\n  variables";
    for (auto& [var, slot] : plan->variables) text += " s" + std::to_string(slot);
    text += "\n  constants";
    for (auto& [slot, b] : plan->constants) text += " s" + std::to_string(slot);
    for (auto& st : plan->steps) {
      text += "\n  s" + std::to_string(st.out) + " = " + st.node->op->name + "(";
      for (size_t i = 0; i < st.in.size(); ++i)
        text += (i ? ", s" : "s") + std::to_string(st.in[i]);
      text += ") " + dims_str(st.out_type.shape.dims);
    }
    text += "\n  outputs";
    for (int slot : plan->outputs) text += " s" + std::to_string(slot);
    std::fprintf(stderr, "%s\n", text.c_str());
  } else if (log_plan > 0) {
    std::string text = "kbackend plan (" + std::string(device_name(device)) + "):";
    for (auto& st : plan->steps) {
      text += " " + st.node->op->name + "@" + device_name(st.device);
      if (log_plan < 2) continue;
      text += dims_str(st.out_type.shape.dims) + "<-";
      for (auto& c : st.node->inputs) text += c->op->name + ",";
    }
    std::fprintf(stderr, "%s\n", text.c_str());
  }

  // Constants read by device steps are copied there once, now.
  if (device != Device::cpu) {
    std::vector<bool> on_device(plan->num_slots, false);
    for (auto& st : plan->steps)
      if (st.device == device)
        for (int s : st.in) on_device[s] = true;
    for (auto& [s, b] : plan->constants)
      if (on_device[s]) b = transfer(b, device);
  }

  plan_memory(*plan);
  return plan;
}

const RunTimeKernels::Entry& run_time_kernel(const Step& st,
                                             const std::vector<std::shared_ptr<Buffer>>& slots) {
  std::vector<TensorType> in_types;
  std::string key;
  for (int s : st.in) {
    const Buffer& b = *slots[size_t(s)];
    in_types.push_back({b.dtype, Shape(b.dims)});
    key += std::to_string(int(b.dtype)) + dims_str(b.dims) + ";";
  }
  RunTimeKernels& rt = *st.run_time;
  std::lock_guard<std::mutex> l(rt.mu);
  auto it = rt.by_signature.find(key);
  if (it != rt.by_signature.end()) return it->second;
  const Node& n = *st.node;
  check_switch_branches(n, in_types);
  RunTimeKernels::Entry e;
  e.out_type = n.op->infer(in_types, n.attrs);
  check(n.op->dynamic || e.out_type.shape.fully_known(), Status::shape, n.op->name,
        ": could not determine the shape of '", n.name, "' for these inputs");
  std::tie(e.kernel, e.device) = step_kernel(n, in_types, e.out_type, st.device);
  return rt.by_signature.emplace(key, std::move(e)).first->second;
}

}  // namespace kb
