// Memory planning: the values that live only inside one run of a plan get fixed places in one
// arena per plan, from their lifetimes; everything a run needs besides is kept for the next run
// (RunState), so that a compiled function's steady state asks the allocator for nothing.
#pragma once
#include <array>
#include <memory>
#include <vector>

#include "core/graph/buffer.h"
#include "core/graph/node.h"
#include "core/util/exclusive.h"

namespace kb {

struct Plan;
struct OutputPlace;

// Lifetimes: which step lets go of each value (Step::release) and which may write over a dying
// operand (Step::in_place). Then gives each step whose value stays inside the run (not returned,
// not an update, not aliased by anything that is, on the plan's device, of a type known at plan
// time) an offset in the plan's arena, host memory for a CPU plan and device memory for a device
// plan: Step::arena_offset and Plan::arena_bytes. Two values share bytes only when their
// lifetimes (extended by the views that alias them) do not overlap, or when an elementwise step
// on the CPU writes its result over an operand it reads for the last time, element by element.
// Without `arena` (KB_ARENA=0) every value has an allocation of its own.
void plan_memory(Plan& plan, bool arena);

// What a run of a plan reuses from the previous run: the arena, a Buffer object per step
// (handed out again once nothing outside the plan holds it, with its storage when that is the
// Buffer's alone: a variable's previous value takes the next update), the slot table.
struct RunState {
  std::shared_ptr<void> arena;
  std::vector<std::shared_ptr<void>> arena_places;  // per step: its place in the arena, or null
  std::vector<std::array<std::shared_ptr<Buffer>, 2>> spares;  // per step
  // Per step: its value's storage belongs to someone else (the arena, a view's operand), so a
  // spare lets go of it after the run.
  std::vector<bool> borrows_storage;
  std::vector<std::shared_ptr<Buffer>> slots;
  std::vector<const Buffer*> ins;
  std::vector<const OutputPlace*> slot_place;
  size_t arena_steps = 0;
  // The kept steps' values (per step, Step::kept) and the values of the variables they were
  // computed from (per Plan::invariant_inputs entry), held so that neither is written over;
  // `kept_valid` once a run computed them all.
  std::vector<std::shared_ptr<Buffer>> kept;
  std::vector<std::shared_ptr<Buffer>> kept_from;
  bool kept_valid = false;

  // Sizes the tables for `plan` and makes the arena on the first run (or after a detach).
  void prepare(const Plan& plan);
  // The Buffer for step i's value of type `t` on `device`: a spare nobody else holds, or a new one
  // (kept as a spare). `storage_kept`: the spare's own storage fits and is held by nothing else.
  std::shared_ptr<Buffer> buffer_for(size_t step, const TensorType& t, Device device, bool reusable,
                                     bool& storage_kept);
  // Whether b is one of step's spares (the spare table holds it besides the slot).
  bool is_spare(int step, const std::shared_ptr<Buffer>& b) const {
    return step >= 0 && (spares[size_t(step)][0] == b || spares[size_t(step)][1] == b);
  }
  // Whether the slot's Buffer b (computed by `step`; -1: an input, a variable, a constant) is
  // held by nothing but its slot and the step's spares.
  bool only_in_slot(int step, const std::shared_ptr<Buffer>& b) const {
    return b.use_count() - (is_spare(step, b) ? 1 : 0) == 1;
  }
  // Keeps `old` (a variable's previous value) as a spare of the step that computes its update.
  void stash(int step, std::shared_ptr<Buffer> old);
  // After a run: drops every slot's reference and the arena places of the spares; when something
  // outside the run still holds arena memory (an alias that escaped), the next run gets a fresh
  // arena instead of writing under it.
  void finish();
  // Makes the spares nobody else holds let go of storage that is not theirs alone.
  void drop_borrowed_storage();
};

// For a caller that lent the plan storage (output places) and wants to know whether it is its
// own again: the plan's kept Buffers let go of what they borrowed (skipped while a run is on).
void release_borrowed(const Plan& plan);

// Takes the plan's RunState for one run (or a fresh one while another run holds it), prepared
// for the plan, and finishes it when the run ends.
class RunStateLease {
 public:
  explicit RunStateLease(const Plan& plan);
  ~RunStateLease() { (*lease_).finish(); }
  RunStateLease(const RunStateLease&) = delete;
  RunStateLease& operator=(const RunStateLease&) = delete;
  RunState& operator*() { return *lease_; }
  RunState* operator->() { return &*lease_; }

 private:
  Exclusive<RunState>::Lease lease_;
};

}  // namespace kb
