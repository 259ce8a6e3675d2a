// A compiled plan: the flat list of kernel calls for one input signature.
#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/backend/kernel.h"
#include "core/compile/memory_plan.h"
#include "core/graph/node.h"
#include "core/util/exclusive.h"

namespace kb {

// A step whose input shapes are known only at run time (downstream of a dynamic op): its
// kernel is chosen per concrete input signature when the plan runs, and kept.
struct RunTimeKernels {
  struct Entry {
    Kernel kernel;
    TensorType out_type;
    Device device = Device::cpu;
  };
  std::mutex mu;
  std::map<std::string, Entry> by_signature;
  bool fallback_is_error = false;  // the plan's CompileOptions
};

struct Step {
  Kernel kernel;
  std::vector<int> in;
  int out = -1;
  std::vector<TensorType> in_types;  // known at plan time: what the kernel is chosen for
  TensorType out_type;
  bool view = false;
  std::vector<int> release;  // slots whose last reader is this step
  // An elementwise kernel (element i read before element i is written): the output may take
  // the storage of an input of its shape released here that nothing else holds.
  bool in_place = false;
  const Node* node = nullptr;
  Device device = Device::cpu;  // where the kernel runs (the plan's device, or a CPU fallback)
  bool dynamic = false;         // the kernel sets the output's dims (OpDef::dynamic)
  std::shared_ptr<RunTimeKernels> run_time;  // set when the kernel is chosen at run time
  int64_t arena_offset = -1;  // the value's place in the plan's arena (plan_memory), or -1
  // The value depends only on constants and on variables the plan does not update (a model's
  // weights in predict): computed on a run after one of those variables changed, skipped on the
  // others (mark_invariant_steps). A kept step's value is read by other steps: the run state
  // keeps it between runs.
  bool invariant = false;
  bool kept = false;
};

struct Plan {
  Device device = Device::cpu;
  int num_slots = 0;
  std::vector<std::pair<size_t, int>> inputs;      // (function input index, slot)
  std::vector<std::pair<NodePtr, int>> variables;  // read when the plan runs
  std::vector<std::pair<int, std::shared_ptr<Buffer>>> constants;
  std::vector<Step> steps;
  std::vector<int> outputs;
  std::vector<std::pair<NodePtr, int>> updates;  // variable, slot of its new value
  // Entries of `variables` that the invariant steps read (their values, compared from run to
  // run, tell whether the kept values still hold).
  std::vector<size_t> invariant_inputs;
  bool any_invariant = false;            // some step is
  std::vector<NodePtr> nodes;            // nodes made by plan-time rewrites, which steps name
  std::vector<TensorType> output_types;  // per output (the shape may be known only at run time)

  // Memory (plan_memory): the arena's size, the step computing each slot and each update (-1:
  // none: an input, a variable, a constant).
  size_t arena_bytes = 0;
  std::vector<int> producer;
  std::vector<int> update_steps;
  std::vector<bool> is_update_slot;
  // The collectives the steps issue, in order ("" when none), and whether every process' plan
  // was found to issue the same (describe_collectives, check_collectives_agree).
  std::string collectives;
  mutable std::atomic<bool> collectives_agreed{false};
  // Kept between runs (RunStateLease): one run at a time uses it, a concurrent one its own.
  mutable Exclusive<RunState> run_state;
};

// Builds a plan for `outputs` and `updates` (Assign nodes) given the concrete types of `inputs`.
// `phase` is the learning-phase value used when the learning phase is not among the inputs.
// `fed_phases` (empty, or one entry per input): 0 / 1 for a learning phase fed as an input with
// that scalar value, which the plan then holds as a constant (a Switch on it is resolved and the
// other branch pruned, as for `phase`); -1 for the other inputs.
std::shared_ptr<Plan> build_plan(const std::vector<NodePtr>& inputs,
                                 const std::vector<TensorType>& input_types,
                                 const std::vector<NodePtr>& outputs,
                                 const std::vector<NodePtr>& updates, int phase,
                                 Device device = Device::cpu,
                                 const std::vector<int>& fed_phases = {});

// Where a caller wants an output written: storage of the output's size on the plan's device
// (an aliasing pointer whose owner keeps it alive), or null for a fresh buffer.
struct OutputPlace {
  std::shared_ptr<void> storage;
  size_t bytes = 0;
};

// Runs a plan; returns the output buffers (on the plan's device) and applies the updates.
// `places` (empty, or one per output): the step computing output k writes into places[k] when
// it can (a kernel writing fresh memory, sizes equal, not an update's value); results[k] is then
// null. Elsewhere (a view, an input or a constant passed through) results[k] is the value, to
// be copied by the caller.
// `results` (resized to the outputs) may be a vector kept from call to call.
void run_plan(const Plan& plan, const std::vector<std::shared_ptr<Buffer>>& inputs,
              const std::vector<OutputPlace>& places,
              std::vector<std::shared_ptr<Buffer>>& results);
std::vector<std::shared_ptr<Buffer>> run_plan(const Plan& plan,
                                              const std::vector<std::shared_ptr<Buffer>>& inputs,
                                              const std::vector<OutputPlace>& places = {});

// The kernel of a step chosen at run time, for the shapes its inputs have now (made once per
// signature and kept).
const RunTimeKernels::Entry& run_time_kernel(const Step& st,
                                             const std::vector<std::shared_ptr<Buffer>>& slots);

}  // namespace kb
