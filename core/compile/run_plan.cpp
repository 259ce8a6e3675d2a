// Runs a plan: binds inputs, variables and constants to slots, calls each step's kernel on a
// Buffer whose storage comes from the arena, the caller's place, a dying operand or the host
// pool (in that order), and applies the updates.
#include "core/backend/device.h"
#include "core/compile/passes.h"
#include "core/compile/plan.h"
#include "core/compile/step_profile.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {

namespace {

// How many runs the calling thread is inside: a loop's body runs inside the loop's run, and only
// the outermost run settles its device.
thread_local int t_run_depth = 0;

struct RunDepth {
  RunDepth() { ++t_run_depth; }
  ~RunDepth() { --t_run_depth; }
  bool outermost() const { return t_run_depth == 1; }
};

// Whether the kept values of the invariant steps still hold: computed by an earlier run from the
// variables' current values (held since, so no one wrote over them), none of them external.
// Otherwise the run computes them again (and forgets the old ones first).
bool kept_still_hold(const Plan& plan, RunState& rs) {
  if (!plan.any_invariant) return false;
  bool hold = rs.kept_valid && rs.kept_from.size() == plan.invariant_inputs.size();
  for (size_t k = 0; hold && k < plan.invariant_inputs.size(); ++k) {
    const std::shared_ptr<Buffer>& now = plan.variables[plan.invariant_inputs[k]].first->value;
    hold = now == rs.kept_from[k] && !now->external;
  }
  if (!hold) {
    rs.kept_valid = false;
    rs.kept_from.clear();
    rs.kept.assign(plan.steps.size(), nullptr);
  }
  return hold;
}

void run_steps(const Plan& plan, RunState& rs, const std::vector<std::shared_ptr<Buffer>>& inputs,
               const std::vector<OutputPlace>& places,
               std::vector<std::shared_ptr<Buffer>>& results) {
  std::vector<std::shared_ptr<Buffer>>& slots = rs.slots;
  // The place of each slot that is an output with a place (the first such output of a slot).
  bool any_place = false;
  for (size_t k = 0; k < plan.outputs.size() && k < places.size(); ++k)
    any_place = any_place || places[k].storage;
  if (any_place) {
    // Not for a slot that is also an update: the variable would share the caller's storage.
    rs.slot_place.assign(size_t(plan.num_slots), nullptr);
    for (size_t k = 0; k < plan.outputs.size() && k < places.size(); ++k)
      if (places[k].storage && !rs.slot_place[size_t(plan.outputs[k])] &&
          !plan.is_update_slot[size_t(plan.outputs[k])])
        rs.slot_place[size_t(plan.outputs[k])] = &places[k];
  }
  for (auto& [idx, s] : plan.inputs) slots[size_t(s)] = transfer(inputs[idx], plan.device);
  for (auto& [var, s] : plan.variables) {
    // Variables live where they are used: move them to the plan's device once.
    if (var->value->device != plan.device) var->value = transfer(var->value, plan.device);
    slots[size_t(s)] = var->value;
  }
  for (auto& [s, b] : plan.constants) slots[size_t(s)] = b;
  const bool reuse_kept = kept_still_hold(plan, rs);
  std::vector<const Buffer*>& ins = rs.ins;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& st = plan.steps[i];
    if (reuse_kept && st.invariant) {
      if (st.kept) slots[size_t(st.out)] = rs.kept[i];
      continue;
    }
    const Kernel* kernel = &st.kernel;
    const TensorType* out_type = &st.out_type;
    Device device = st.device;
    if (st.run_time) {
      const RunTimeKernels::Entry& e = run_time_kernel(st, slots);
      kernel = &e.kernel;
      out_type = &e.out_type;
      device = e.device;
    }
    ins.clear();
    for (int s : st.in) {
      std::shared_ptr<Buffer>& b = slots[size_t(s)];
      if (b->device != device) b = transfer(b, device);
      ins.push_back(b.get());
    }
    bool storage_kept = false;
    std::shared_ptr<Buffer> out =
        rs.buffer_for(i, *out_type, device, !st.run_time && !st.dynamic, storage_kept);
    const OutputPlace* place = any_place ? rs.slot_place[size_t(st.out)] : nullptr;
    if (st.view || st.dynamic) {
      out->storage.reset();  // the kernel sets it
    } else if (st.arena_offset >= 0 && !rs.arena_places.empty()) {
      out->storage = rs.arena_places[i];
    } else if (place && device == plan.device && place->bytes == out->nbytes()) {
      out->storage = place->storage;
    } else {
      bool taken = false;
      if (st.in_place) {
        // Reuse a dying operand's storage that nothing else holds: the output lands in cached
        // lines, and no memory is asked for.
        for (int s : st.release) {
          const std::shared_ptr<Buffer>& b = slots[size_t(s)];
          if (rs.only_in_slot(plan.producer[size_t(s)], b) && b->storage.use_count() == 1 &&
              b->device == Device::cpu && b->dims == out->dims && b->nbytes() == out->nbytes()) {
            out->storage = b->storage;
            taken = true;
            break;
          }
        }
      }
      if (!taken && !storage_kept) out->allocate();
    }
    {
      StepTimer timer(st.node->op->name, *out, ins);
      (*kernel)(ins, *out);
    }
    check(!st.dynamic || Shape(out->dims).fully_known(), Status::internal, st.node->op->name,
          ": the kernel did not set the output's shape");
    if (!out->storage) out->allocate();
    if (st.kept) rs.kept[i] = out;
    slots[size_t(st.out)] = std::move(out);
    for (int s : st.release) {
      // A value dying here gives its memory back now (to later steps, to the device's pool),
      // not when its Buffer is next handed out: only what outlives the run is kept.
      std::shared_ptr<Buffer>& b = slots[size_t(s)];
      if (rs.only_in_slot(plan.producer[size_t(s)], b)) b->storage.reset();
      b.reset();
    }
  }
  if (plan.any_invariant && !reuse_kept) {
    rs.kept_from.clear();
    for (size_t v : plan.invariant_inputs) rs.kept_from.push_back(plan.variables[v].first->value);
    rs.kept_valid = true;
  }
  results.resize(plan.outputs.size());
  for (size_t k = 0; k < plan.outputs.size(); ++k) {
    const std::shared_ptr<Buffer>& b = slots[size_t(plan.outputs[k])];
    bool landed = any_place && k < places.size() && places[k].storage &&
                  b->storage.get() == places[k].storage.get() && b->device == plan.device;
    results[k] = landed ? nullptr : b;
  }
}

// The updates take effect (the new values' shapes checked first, as some are known only now).
void commit_updates(const Plan& plan, RunState& rs) {
  std::vector<std::shared_ptr<Buffer>>& slots = rs.slots;
  // Shapes known only now are checked before any variable changes.
  for (auto& [var, s] : plan.updates)
    if (slots[size_t(s)]->dims != var->value->dims)
      fail(Status::shape, "update: the new value of '", var->name, "' has shape ",
           dims_str(slots[size_t(s)]->dims), ", the variable has ", dims_str(var->value->dims));
  for (size_t u = 0; u < plan.updates.size(); ++u) {
    auto& [var, s] = plan.updates[u];
    std::shared_ptr<Buffer> old = std::move(var->value);
    var->value = slots[size_t(s)];
    // The previous value takes the next update when nothing else holds it by then.
    rs.stash(plan.update_steps[u], std::move(old));
  }
}

}  // namespace

void run_plan(const Plan& plan, const std::vector<std::shared_ptr<Buffer>>& inputs,
              const std::vector<OutputPlace>& places,
              std::vector<std::shared_ptr<Buffer>>& results) {
  if (!plan.collectives.empty() && !plan.collectives_agreed.load(std::memory_order_acquire))
    check_collectives_agree(plan);
  RunStateLease rs(plan);
  RunDepth depth;
  if (!depth.outermost() || plan.device == Device::cpu) {
    run_steps(plan, *rs, inputs, places, results);
  } else {
    // A device reports some errors only when settled: before the updates take effect, and
    // before another error, which came later.
    try {
      run_steps(plan, *rs, inputs, places, results);
    } catch (...) {
      settle(plan.device);
      throw;
    }
    settle(plan.device);
  }
  commit_updates(plan, *rs);
}

std::vector<std::shared_ptr<Buffer>> run_plan(const Plan& plan,
                                              const std::vector<std::shared_ptr<Buffer>>& inputs,
                                              const std::vector<OutputPlace>& places) {
  std::vector<std::shared_ptr<Buffer>> results;
  run_plan(plan, inputs, places, results);
  return results;
}

}  // namespace kb
