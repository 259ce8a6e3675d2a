// What the lowering pass and the kernel choice share (core/compile/choose_kernels.cpp).
#pragma once
#include <vector>

#include "core/backend/kernel.h"
#include "core/graph/node.h"

namespace kb {

// The CPU's kernel factory of n's op; for an op that specializes on its tensor arguments and has
// no kernel of its own, one that specializes when the step runs.
KernelFactory cpu_factory(const Node& n);

// A Switch whose condition is known only when it runs needs branches of one shape.
void check_switch_branches(const Node& n, const std::vector<TensorType>& in_types);

}  // namespace kb
