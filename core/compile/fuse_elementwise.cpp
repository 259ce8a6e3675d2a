// The elementwise fusion pass (core/compile/passes.h): maximal trees of elementwise steps of a plan
// (the scalar-op table's unary and binary operations and casts, float32 or float64, all of the same
// concrete output shape) whose intermediate values are read only inside the tree (not returned, not
// an update value) become one FusedElementwise step. It reads the tree's external inputs (each may
// broadcast to the output shape) and evaluates a small register program per block of elements
// (CPU) or per element (CUDA). In a device plan only the steps on the plan's device fuse, when
// the device has the kernel (a device factory may decline a group: it then stays unfused).
//
// FusedElementwise attributes:
//   program: 5 ints per instruction {kind, op, dst, a, b}; kind 0 = load input a (converted to
//            the output dtype), 1 = unary table op number `op` of register a, 2 = binary table
//            op number `op` of registers a and b. Op numbers are positions in KB_UNARY_OPS /
//            KB_BINARY_OPS (core/ops/scalar_ops.h).
//   registers: how many registers the program uses; result: the register holding the output.
//   rounded (CPU only, in a group that mixes float32 and bfloat16 steps): one int per
//            instruction, 1 where its value is a bfloat16 one (a load converts through
//            bfloat16, any other instruction's result is rounded to it); kind 3 then copies
//            register a (a cast to bfloat16 inside the group). Loads otherwise convert exactly
//            to the float32 registers.
#include "core/compile/passes.h"

#include <string>
#include <unordered_map>

#include "core/backend/device.h"
#include "core/backend/kernel.h"
#include "core/ops/op.h"
#include "core/ops/scalar_ops.h"

namespace kb {

namespace {

// Table operations a float group can evaluate: those whose result has the input's dtype (the
// comparisons and IsFinite yield bool and stay unfused).
#define KB_FUSE_NAME(Name, ...) #Name,
#define KB_FUSE_OK(Name, Dom, Res, ...) (ScalarResult::Res == ScalarResult::SAME),
const char* const kUnaryNames[] = {KB_UNARY_OPS(KB_FUSE_NAME)};
const bool kUnaryOk[] = {KB_UNARY_OPS(KB_FUSE_OK)};
const char* const kBinaryNames[] = {KB_BINARY_OPS(KB_FUSE_NAME)};
const bool kBinaryOk[] = {KB_BINARY_OPS(KB_FUSE_OK)};
#undef KB_FUSE_NAME
#undef KB_FUSE_OK

// kBroadcast: BroadcastLike, whose operand the fused kernel loads broadcast in place.
enum Kind { kLoad = 0, kUnary = 1, kBinary = 2, kCast = 3, kBroadcast = 4 };

// The table position of a fusable unary (kind 1) or binary (kind 2) operation, else -1.
int table_index(const std::string& name, int kind) {
  const char* const* names = kind == kUnary ? kUnaryNames : kBinaryNames;
  const bool* ok = kind == kUnary ? kUnaryOk : kBinaryOk;
  size_t n = kind == kUnary ? std::size(kUnaryNames) : std::size(kBinaryNames);
  for (size_t i = 0; i < n; ++i)
    if (name == names[i]) return ok[i] ? int(i) : -1;
  return -1;
}

// The table position of a comparison (a binary operation of numbers yielding bool), else -1.
#define KB_FUSE_CMP(Name, Dom, Res, ...) (ScalarResult::Res == ScalarResult::BOOL),
const bool kBinaryCompare[] = {KB_BINARY_OPS(KB_FUSE_CMP)};
#undef KB_FUSE_CMP
int comparison_index(const std::string& name) {
  for (size_t i = 0; i < std::size(kBinaryNames); ++i)
    if (name == kBinaryNames[i]) return kBinaryCompare[i] ? int(i) : -1;
  return -1;
}

// Whether steps of dtypes a and b may share a group: on the CPU a float32 computation and the
// bfloat16 steps around it (Keras' BatchNormalization between bfloat16 layers) run as one
// program in float32 registers, each bfloat16 value rounded (the `rounded` attribute).
bool mixable(Device device, DType a, DType b) {
  auto f = [](DType t) { return t == DType::f32 || t == DType::bf16; };
  return a == b || (device == Device::cpu && f(a) && f(b));
}

// What a step is to the rewrite: not fusable (-1 kind) or a cast / table operation.
struct Member {
  int kind = -1;
  int op = -1;
};

Member classify(const Step& st, Device device, const std::vector<TensorType>& slot_type,
                const std::vector<bool>& slot_known) {
  Member m;
  if (st.device != device || st.run_time || st.dynamic || st.view || !st.node) return m;
  const Node& n = *st.node;
  if (n.op->stateful || !st.out_type.parts.empty() || !is_floating(st.out_type.dtype) ||
      !st.out_type.shape.fully_known() || numel(st.out_type.shape.dims) <= 0)
    return m;
  for (int s : st.in) {
    if (s < 0 || !slot_known[size_t(s)]) return m;
    const TensorType& t = slot_type[size_t(s)];
    if (!t.parts.empty() || !t.shape.fully_known()) return m;
  }
  const std::string& name = n.op->name;
  if (name == "Cast" && st.in.size() == 1) {
    const TensorType& t = slot_type[size_t(st.in[0])];
    if (t.shape.dims == st.out_type.shape.dims) m.kind = kCast;
    return m;
  }
  if (name == "BroadcastLike") {
    if (slot_type[size_t(st.in[0])].dtype == st.out_type.dtype) m.kind = kBroadcast;
    return m;
  }
  int kind = st.in.size() == 1 ? kUnary : st.in.size() == 2 ? kBinary : -1;
  if (kind < 0) return m;
  int op = table_index(name, kind);
  if (op < 0) return m;
  for (int s : st.in)
    if (slot_type[size_t(s)].dtype != st.out_type.dtype) return m;
  if (kind == kUnary && slot_type[size_t(st.in[0])].shape.dims != st.out_type.shape.dims) return m;
  m.kind = kind;
  m.op = op;
  return m;
}

}  // namespace

void fuse_elementwise(Plan& plan, const std::vector<TensorType>& input_types) {
  // Steps the plan's device runs fuse into a step it runs; those falling back to the CPU in a
  // device plan stay as they are.
  const Device device = plan.device;
  KernelFactory factory = find_kernel(device_name(device), "FusedElementwise");
  if (!factory) return;

  size_t ns = size_t(plan.num_slots);
  std::vector<TensorType> slot_type(ns);
  std::vector<bool> slot_known(ns, false);
  auto set_type = [&](int s, TensorType t) {
    if (s < 0) return;
    slot_type[size_t(s)] = std::move(t);
    slot_known[size_t(s)] = true;
  };
  for (auto& [idx, s] : plan.inputs)
    if (idx < input_types.size()) set_type(s, input_types[idx]);
  for (auto& [var, s] : plan.variables) set_type(s, {var->value->dtype, Shape(var->value->dims)});
  for (auto& [s, b] : plan.constants) set_type(s, {b->dtype, Shape(b->dims)});
  for (auto& st : plan.steps) set_type(st.out, st.out_type);

  // Readers of each slot (steps), and the slots that leave the plan.
  std::vector<std::vector<int>> readers(ns);
  for (size_t i = 0; i < plan.steps.size(); ++i)
    for (int s : plan.steps[i].in)
      if (s >= 0) readers[size_t(s)].push_back(int(i));
  std::vector<bool> pinned(ns, false);
  for (int s : plan.outputs) pinned[size_t(s)] = true;
  for (auto& u : plan.updates) pinned[size_t(u.second)] = true;

  size_t n = plan.steps.size();
  std::vector<Member> member(n);
  for (size_t i = 0; i < n; ++i) member[i] = classify(plan.steps[i], device, slot_type, slot_known);

  // A comparison read only by a cast to the group's float type (a relu's gradient mask) is
  // absorbed into the cast: one instruction computing 1 or 0 in the float type, as the two
  // steps do, instead of a bool tensor written and read back.
  std::vector<int> producer(ns, -1);
  for (size_t i = 0; i < n; ++i)
    if (plan.steps[i].out >= 0) producer[size_t(plan.steps[i].out)] = int(i);
  std::vector<int> absorbs(n, -1), absorbed_by(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const Step& cast = plan.steps[i];
    if (member[i].kind != kCast) continue;
    int in = cast.in[0];
    int p = producer[size_t(in)];
    if (p < 0 || pinned[size_t(in)] || readers[size_t(in)].size() != 1) continue;
    const Step& cmp = plan.steps[size_t(p)];
    if (cmp.device != device || cmp.run_time || cmp.dynamic || !cmp.node || cmp.in.size() != 2)
      continue;
    int op = comparison_index(cmp.node->op->name);
    if (op < 0) continue;
    bool same_type = true;
    for (int s : cmp.in)
      same_type = same_type && s >= 0 && slot_known[size_t(s)] &&
                  slot_type[size_t(s)].dtype == cast.out_type.dtype &&
                  slot_type[size_t(s)].parts.empty() && slot_type[size_t(s)].shape.fully_known();
    if (!same_type) continue;
    member[i] = {kBinary, op};
    absorbs[i] = p;
    absorbed_by[size_t(p)] = int(i);
  }

  // Groups, from the last step back: a fusable step joins the group of its readers when they
  // all belong to one group of its dtype and shape and its value does not leave the plan.
  std::vector<int> group(n, -1);
  std::vector<int> roots;  // group -> its root step
  for (size_t i = n; i-- > 0;) {
    const Step& st = plan.steps[i];
    if (absorbed_by[i] >= 0) {  // goes with its cast
      group[i] = group[size_t(absorbed_by[i])];
      continue;
    }
    if (member[i].kind < 0) continue;
    int g = -1;
    const auto& rd = readers[size_t(st.out)];
    if (!pinned[size_t(st.out)] && !rd.empty()) {
      g = group[size_t(rd[0])];
      for (int r : rd)
        if (group[size_t(r)] != g) g = -1;
      if (g >= 0) {
        const Step& root = plan.steps[size_t(roots[size_t(g)])];
        if (!mixable(device, root.out_type.dtype, st.out_type.dtype) ||
            root.out_type.shape.dims != st.out_type.shape.dims)
          g = -1;
      }
    }
    if (g < 0) {
      g = int(roots.size());
      roots.push_back(int(i));
    }
    group[i] = g;
  }

  std::vector<std::vector<int>> members(roots.size());
  for (size_t i = 0; i < n; ++i)
    if (group[i] >= 0) members[size_t(group[i])].push_back(int(i));

  std::vector<bool> removed(n, false);
  std::vector<std::pair<size_t, Step>> replaced;  // root step -> fused step
  for (size_t g = 0; g < roots.size(); ++g) {
    const std::vector<int>& ms = members[g];
    const Step& root = plan.steps[size_t(roots[g])];
    // One op alone stays itself, except a bfloat16 table op on the CPU, whose fused kernel
    // converts a block at a time (vectorized) where the single-op kernel converts per element
    // (4-9 times slower for a transformer's broadcasting Mul and Add).
    bool bf16_alone =
        ms.size() == 1 && device == Device::cpu && root.out_type.dtype == DType::bf16 &&
        (member[size_t(ms[0])].kind == kUnary || member[size_t(ms[0])].kind == kBinary);
    if (ms.size() < 2 && !bf16_alone) continue;
    bool mixed = false;
    for (int i : ms)
      if (absorbed_by[size_t(i)] < 0 && plan.steps[size_t(i)].out_type.dtype != root.out_type.dtype)
        mixed = true;

    // The program over virtual registers (one per value), members in plan order.
    std::vector<std::array<int64_t, 5>> prog;
    std::vector<int64_t> rounded;        // per instruction, in a mixed group
    std::unordered_map<int, int> value;  // slot -> virtual register
    std::vector<int> ext_slots;
    std::vector<NodePtr> ext_nodes;
    std::vector<TensorType> ext_types;
    int nv = 0;
    // A load of operand pos of step st from outside the group (round: through bfloat16).
    auto load = [&](const Step& st, size_t pos, bool round) {
      int s = st.in[pos];
      int k = int(ext_slots.size());
      ext_slots.push_back(s);
      ext_nodes.push_back(st.node->inputs[pos]);
      ext_types.push_back(slot_type[size_t(s)]);
      prog.push_back({kLoad, 0, nv, k, 0});
      rounded.push_back(round ? 1 : 0);
      return nv++;
    };
    auto operand = [&](const Step& st, size_t pos) {
      auto it = value.find(st.in[pos]);
      if (it != value.end()) return it->second;
      // Exact: a float32 or bfloat16 value in a float32 register.
      return value[st.in[pos]] = load(st, pos, false);
    };
    // An instruction of member st (a value of its dtype).
    auto emit = [&](const Step& st, std::array<int64_t, 5> ins) {
      prog.push_back(ins);
      rounded.push_back(st.out_type.dtype == DType::bf16 ? 1 : 0);
    };
    for (int i : ms) {
      const Step& st = plan.steps[size_t(i)];
      const Member& m = member[size_t(i)];
      if (absorbed_by[size_t(i)] >= 0) continue;  // computed by its cast
      if (absorbs[size_t(i)] >= 0) {
        const Step& cmp = plan.steps[size_t(absorbs[size_t(i)])];
        int a = operand(cmp, 0);
        int b = operand(cmp, 1);
        emit(st, {kBinary, m.op, nv, a, b});
        value[st.out] = nv++;
      } else if (mixed && m.kind == kCast) {
        int s = st.in[0];
        DType from = slot_type[size_t(s)].dtype, to = st.out_type.dtype;
        if (from != DType::f32 && from != DType::bf16) {
          // An external value of another type (an integer mask) converts at its load, as the
          // cast would, straight to the cast's type.
          value[st.out] = load(st, 0, to == DType::bf16);
        } else if (to == DType::bf16 && from != DType::bf16) {
          int a = operand(st, 0);
          emit(st, {kCast, 0, nv, a, 0});  // the copy, rounded
          value[st.out] = nv++;
        } else {
          value[st.out] = operand(st, 0);  // a bfloat16 value is exact in float32
        }
      } else if (m.kind == kCast || m.kind == kBroadcast) {
        // A load converts and broadcasts; a member is already of this dtype and shape.
        value[st.out] = operand(st, 0);
      } else if (m.kind == kUnary) {
        int a = operand(st, 0);
        emit(st, {kUnary, m.op, nv, a, 0});
        value[st.out] = nv++;
      } else {
        int a = operand(st, 0);
        int b = operand(st, 1);
        emit(st, {kBinary, m.op, nv, a, b});
        value[st.out] = nv++;
      }
    }
    int result = value.at(root.out);

    // Physical registers: a register is free again after its value's last use (operands are
    // freed after the destination is taken, so that no instruction writes over its operand).
    std::vector<int> last_use(size_t(nv), -1);
    for (size_t j = 0; j < prog.size(); ++j) {
      if (prog[j][0] != kLoad) last_use[size_t(prog[j][3])] = int(j);
      if (prog[j][0] == kBinary) last_use[size_t(prog[j][4])] = int(j);
    }
    last_use[size_t(result)] = int(prog.size());
    std::vector<int> phys(size_t(nv), -1);
    std::vector<int> free_regs;
    int nregs = 0;
    std::vector<int64_t> code;
    for (size_t j = 0; j < prog.size(); ++j) {
      auto ins = prog[j];
      int v = int(ins[2]);
      if (free_regs.empty()) {
        phys[size_t(v)] = nregs++;
      } else {
        phys[size_t(v)] = free_regs.back();
        free_regs.pop_back();
      }
      int64_t a = ins[3], b = ins[4];
      if (ins[0] != kLoad) a = phys[size_t(ins[3])];
      if (ins[0] == kBinary) b = phys[size_t(ins[4])];
      code.insert(code.end(), {ins[0], ins[1], int64_t(phys[size_t(v)]), a, b});
      if (last_use[size_t(v)] < 0) free_regs.push_back(phys[size_t(v)]);  // never read
      if (ins[0] != kLoad && last_use[size_t(ins[3])] == int(j))
        free_regs.push_back(phys[size_t(ins[3])]);
      if (ins[0] == kBinary && ins[4] != ins[3] && last_use[size_t(ins[4])] == int(j))
        free_regs.push_back(phys[size_t(ins[4])]);
    }

    Attrs attrs{{attr::program, code},
                {attr::registers, int64_t(nregs)},
                {attr::result, int64_t(phys[size_t(result)])},
                {attr::dtype, int64_t(root.out_type.dtype)},
                {attr::dims, root.out_type.shape.dims}};
    if (mixed) attrs.set(attr::rounded, rounded);
    NodePtr node =
        plan_node("FusedElementwise", ext_nodes, std::move(attrs), root.out_type, root.node->name);
    Kernel k = factory(KernelArgs{*node, ext_types, root.out_type});
    if (!k) continue;

    Step fused;
    fused.kernel = std::move(k);
    fused.in = ext_slots;
    fused.out = root.out;
    fused.out_type = root.out_type;
    fused.node = node.get();
    fused.device = device;
    plan.nodes.push_back(node);
    for (int i : ms) removed[size_t(i)] = true;
    replaced.push_back({size_t(roots[g]), std::move(fused)});
  }
  if (replaced.empty()) return;
  for (auto& [i, st] : replaced) {
    plan.steps[i] = std::move(st);
    removed[i] = false;
  }
  std::vector<Step> steps;
  steps.reserve(n);
  for (size_t i = 0; i < n; ++i)
    if (!removed[i]) steps.push_back(std::move(plan.steps[i]));
  plan.steps = std::move(steps);
}

}  // namespace kb
