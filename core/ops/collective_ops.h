// What the collective primitives (core/ops/collective_ops.cpp) accept, for their builders and the
// collectives' engine alike.
#pragma once
#include <cstdint>
#include <string>

#include "core/graph/dtype.h"
#include "core/util/error.h"

namespace kb {

// Whether values of t can be summed across processes (MPI has a type for them).
bool summable_across_processes(DType t);
// Fails with Status::dtype, naming `who`, unless they can.
void check_summable_across_processes(DType t, const std::string& who);
// Fails with Status::distributed, naming `who`, unless a graph built for `built` processes (its
// node's "size") runs in a job of `now`: AllGather's and ReduceScatter's blocks depend on it.
// Inline: the device plugins check it too.
inline void check_job_size(int64_t built, int64_t now, const char* who) {
  check(built == now, Status::distributed, who, ": the graph was built for ", built,
        " processes, the job has ", now, " (call dist_init before building it)");
}

}  // namespace kb
