// What the collective primitives (core/ops/collective_ops.cpp) accept, for their builders and the
// collectives' engine alike.
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/graph/dtype.h"
#include "core/util/error.h"
#include "core/util/host_device.h"

namespace kb {

// Whether values of t can be summed across processes (MPI has a type for them).
bool summable_across_processes(DType t);
// Fails with Status::dtype, naming `who`, unless they can.
void check_summable_across_processes(DType t, const std::string& who);
// An element of an average over `size` processes from their sum, as every device computes it:
// floats times the reciprocal (a division per element costs as much as the reduction itself),
// integers divided, truncating toward zero.
template <class T>
KB_HD inline T average_of_sum(T sum, int32_t size) {
  if constexpr (std::is_floating_point_v<T>)
    return sum * (T(1) / T(size));
  else
    return T(sum / T(size));
}

// Fails with Status::distributed, naming `who`, unless a graph built for `built` processes (its
// node's "size") runs in a job of `now`: AllGather's and ReduceScatter's blocks depend on it.
// Inline: the device plugins check it too.
inline void check_job_size(int64_t built, int64_t now, const char* who) {
  check(built == now, Status::distributed, who, ": the graph was built for ", built,
        " processes, the job has ", now, " (call dist_init before building it)");
}

}  // namespace kb
