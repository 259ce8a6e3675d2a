// Plan-time rewrite: maximal trees of elementwise steps of a plan (the scalar-op table's
// unary and binary operations and casts, float32 or float64, all of the same concrete output
// shape) whose intermediate values are read only inside the tree (not returned, not an update
// value) become one FusedElementwise step. It reads the tree's external inputs (each may
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
#pragma once
#include <vector>

#include "core/compile/plan.h"

namespace kb {

// Rewrites `plan`'s steps in place (before buffer lifetimes are computed). `input_types` are
// the concrete types of the plan's function inputs. KB_FUSE=0 turns the rewrite off.
void fuse_elementwise(Plan& plan, const std::vector<TensorType>& input_types);

}  // namespace kb
