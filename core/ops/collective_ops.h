// What the collective primitives (core/ops/collective_ops.cpp) accept, for their builders and the
// collectives' engine alike.
#pragma once
#include <string>

#include "core/graph/dtype.h"

namespace kb {

// Whether values of t can be summed across processes (MPI has a type for them).
bool summable_across_processes(DType t);
// Fails with Status::dtype, naming `who`, unless they can.
void check_summable_across_processes(DType t, const std::string& who);

}  // namespace kb
