// Work that a loop body repeats at every step without reading the states moves out of the loop.
#pragma once
#include <unordered_map>

#include "core/ops/loop.h"

namespace kb {

// A MatMul of the body whose left operand depends on the per-step inputs but not on the states,
// through elementwise operations only, and whose right operand is the same at every step (x_t W
// in a recurrent cell) becomes one MatMul over the whole sequence before the loop; the body
// reads its rows as a new per-step input. The gradient of the hoisted product is then one GEMM
// after the backward loop too, instead of T small ones accumulated step by step. Per-step
// inputs the body no longer reads are dropped. Returns `spec` unchanged when nothing qualifies.
LoopSpec hoist_sequence_matmuls(const LoopSpec& spec);

// A product of a step value with a fixed matrix transposed (dh = dz U^T in a gradient loop)
// reads the matrix transposed once, before the loop: oneDNN's sgemm runs the plain layout faster
// for these shapes (64x256 by 256x256 on two threads: 295 against 246 GFLOP/s alone; W6
// forward+backward 2-5% faster). Returns `spec` unchanged when nothing qualifies.
LoopSpec pretranspose_fixed_operands(const LoopSpec& spec);

// The body's values that change with the states (h_t U, the gates' activations, tanh(c_t)), other
// than its results: make_loop stacks them as extra parts, which the gradient loop reads instead
// of computing them again where it needs them (sigmoid's gradient reads the sigmoid), and which a
// plan stores only then. Views, tuples, random draws and non-float values are left out.
std::vector<NodePtr> state_values(const LoopSpec& spec);

// Rebuilds the body nodes of `spec` that read a replaced node (transitively), with the
// replacements, and points the spec's step outputs and new states at the rebuilt ones.
void substitute(LoopSpec& spec, const std::unordered_map<const Node*, NodePtr>& replacement);

// KB_HOIST=0 turns hoisting off (here and for the gradient loops' weight gradients), to compare.
bool hoisting_enabled();

}  // namespace kb
