// The kernel choice pass (core/compile/passes.h) and the kernels of steps chosen at run time.
#include "core/compile/choose_kernels.h"

#include <string>
#include <tuple>
#include <unordered_map>

#include "core/backend/device.h"
#include "core/compile/passes.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {

namespace {

// An op with tensor arguments whose values the plan did not know (OpDef::specialize): the CPU
// specializes it for the values it has when the function runs, and runs what that gives.
Kernel specialize_when_run(const KernelArgs& k) {
  const Node* node = &k.node;
  return [node](const std::vector<const Buffer*>& in, Buffer& out) {
    NodePtr s = node->op->specialize(*node, in);
    check(s != nullptr, Status::internal, node->op->name, ": no specialization for its values");
    if (s->is(ops::Constant)) {
      out.dims = s->value->dims;
      out.storage = s->value->storage;
      return;
    }
    std::vector<const Buffer*> args;
    std::vector<TensorType> types;
    for (auto& c : s->inputs) {
      const Buffer* b = c->is(ops::Constant) ? c->value.get() : nullptr;
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
                                      const TensorType& out, Device device, bool fallback_is_error,
                                      const std::vector<bool>* used_parts = nullptr,
                                      const std::vector<bool>* stable = nullptr) {
  KernelFactory cpu_f = cpu_factory(n);
  KernelArgs args{n, in, out, used_parts, stable};
  if (device != Device::cpu)
    if (KernelFactory f = find_kernel(device_name(device), n.op->name)) {
      if (!beyond_device_rank(args))
        if (Kernel k = f(args)) return {std::move(k), device};
      // The CPU's factory first: bad input gets its message, not the fallback's.
      Kernel k = cpu_f(args);
      check(!fallback_is_error, Status::not_implemented, n.op->name, ": the ", device_name(device),
            " kernel declines (", types_str(in),
            ") and KB_DEVICE_FALLBACK=error forbids running it on the CPU");
      return {std::move(k), Device::cpu};
    }
  return {cpu_f(args), Device::cpu};
}

}  // namespace

KernelFactory cpu_factory(const Node& n) {
  KernelFactory f = find_kernel("cpu", n.op->name);
  if (!f && n.op->specialize) return specialize_when_run;
  check(f != nullptr, Status::not_implemented, n.op->name, ": no CPU kernel");
  return f;
}

void check_switch_branches(const Node& n, const std::vector<TensorType>& in_types) {
  if (n.is(ops::Switch) && !(in_types[1].shape == in_types[2].shape))
    fail(Status::shape, "switch: the branches have shapes ", in_types[1].shape.str(), " and ",
         in_types[2].shape.str(),
         "; branches of different shapes need a condition known when the function is built");
}

void choose_kernels(Plan& plan, const CompileOptions& options) {
  // The parts of each tuple (a Loop's results) that the plan reads.
  std::unordered_map<const Node*, std::vector<bool>> tuple_reads;
  for (const Step& st : plan.steps)
    if (st.node->is(ops::TupleGet)) {
      const Node* tuple = st.node->inputs[0].get();
      auto& used = tuple_reads[tuple];
      used.resize(tuple->type.parts.size(), false);
      size_t index = size_t(st.node->attrs.i(attr::index));
      if (index < used.size()) used[index] = true;
    }
  const std::vector<bool> invariant = invariant_slots(plan);
  std::vector<bool> stable;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    Step& st = plan.steps[i];
    stable.clear();
    for (int s : st.in) stable.push_back(invariant[size_t(s)]);
    // A tuple's parts stay where the tuple was made (a tuple cannot be transferred): TupleGet
    // runs on the device of the step that produced its tuple.
    st.device = plan.device;
    if (plan.device != Device::cpu && st.node->is(ops::TupleGet) && st.in[0] >= 0)
      for (size_t j = i; j-- > 0;)
        if (plan.steps[j].out == st.in[0]) {
          st.device = plan.steps[j].device;
          break;
        }
    if (st.run_time) {
      st.run_time->fallback_is_error = options.fallback_is_error;
      continue;
    }
    auto reads = tuple_reads.find(st.node);
    std::tie(st.kernel, st.device) =
        step_kernel(*st.node, st.in_types, st.out_type, st.device, options.fallback_is_error,
                    reads == tuple_reads.end() ? nullptr : &reads->second, &stable);
  }
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
  std::tie(e.kernel, e.device) =
      step_kernel(n, in_types, e.out_type, st.device, rt.fallback_is_error);
  return rt.by_signature.emplace(key, std::move(e)).first->second;
}

}  // namespace kb
