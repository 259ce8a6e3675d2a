// The compiler's passes, in the order build_plan (core/compile/plan.cpp) runs them; each is a
// function of its own file.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/compile/options.h"
#include "core/compile/plan.h"

namespace kb {

// A node made by a pass for the steps it writes (kept in Plan::nodes): of the type the plan
// knows for it, which inference from its inputs' graph types could not always give.
NodePtr plan_node(const std::string& op_name, std::vector<NodePtr> inputs, Attrs attrs,
                  const TensorType& type, const std::string& name);

// rewrite_epilogues (fuse_epilogue.cpp): a product with its bias add and relu becomes one fused
// node; rewrites `outputs` and `updates` in place, false when there was nothing to fuse.
bool rewrite_epilogues(std::vector<NodePtr>& outputs, std::vector<NodePtr>& updates, Device device);

// lower (lower.cpp): the graph as a schedule of steps over slots, their kernels not yet chosen:
// pruned to what the roots need (one branch of a Switch on a value known now), leaves bound,
// ops of known tensor arguments specialized, constant and shape-only values folded, common
// subexpressions merged. Arguments as build_plan's.
std::shared_ptr<Plan> lower(const std::vector<NodePtr>& inputs,
                            const std::vector<TensorType>& input_types,
                            const std::vector<NodePtr>& outputs,
                            const std::vector<NodePtr>& updates, int phase, Device device,
                            const std::vector<int>& fed_phases);

// sole_reader (sole_reader.cpp): per slot, the index of the one step reading it, or -1 where
// several steps read it, none does, or it is an output or an update.
std::vector<int> sole_reader(const Plan& plan);

// fold_conv_pads (fold_conv_pads.cpp): zero padding of the spatial axes read only by a convolution
// with explicit pads becomes part of the convolution's pads; CPU plans.
void fold_conv_pads(Plan& plan);

// fold_conv_scales (fold_conv_scales.cpp): a channels-last float32 convolution followed by a
// per-channel scale of invariant values (and a per-channel shift, a relu) becomes one FusedConv
// by the scaled kernel (BatchNormalization folded into the convolution in inference); CPU plans.
void fold_conv_scales(Plan& plan);

// choose_kernels (choose_kernels.cpp): each step's kernel and device, the plan's device where
// its kernel takes the step, else the CPU.
void choose_kernels(Plan& plan, const CompileOptions& options);

// fuse_elementwise (fuse_elementwise.cpp): trees of elementwise steps become one step.
void fuse_elementwise(Plan& plan, const std::vector<TensorType>& input_types);

// drop_unread_steps (drop_unread_steps.cpp): steps whose value nothing reads go.
void drop_unread_steps(Plan& plan);

// bucket_collectives (bucket_collectives.cpp): the all-reduces of one dtype, kind and device, in
// the order the plan computes their operands, gathered into buckets of about `bucket_bytes`:
// each bucket packs its operands into one buffer, reduces it in place with one collective and
// hands each reader a view of its part; the steps are reordered so that every reader follows its
// bucket. The same plan on every process gives the same buckets.
void bucket_collectives(Plan& plan, long long bucket_bytes);

// describe_collectives (collective_check.cpp): the plan's collectives in order (Plan::collectives),
// which its first run compares across the processes (check_collectives_agree).
void describe_collectives(Plan& plan);

// invariant_slots (invariant_steps.cpp): per slot, whether its value depends only on constants
// and on variables the plan does not update, through deterministic steps.
std::vector<bool> invariant_slots(const Plan& plan);
// mark_invariant_steps (invariant_steps.cpp): Step::invariant and Step::kept, and
// Plan::invariant_inputs.
void mark_invariant_steps(Plan& plan);

// log_plan (log_plan.cpp): the steps on stderr at KB_LOG_PLAN's level (nothing at 0).
void log_plan(const Plan& plan, int level);

// place_constants (place_constants.cpp): constants that device steps read go there once, now.
void place_constants(Plan& plan);

// plan_memory (memory_plan.cpp): buffer lifetimes, in-place steps and the arena.
void plan_memory(Plan& plan, bool arena);

// Before a plan's first run in a job of several processes: every process' plan must issue the same
// collectives, else each fails with Status::distributed naming the ranks that differ (instead of
// waiting on collectives that never match).
void check_collectives_agree(const Plan& plan);

}  // namespace kb
