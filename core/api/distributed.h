// Data-parallel training: the collectives as graph builders (core/ops/collective_ops.cpp) and
// the eager ones a training loop needs between its functions (initial weights, metrics). The
// processes themselves are core/backend/collectives.h's.
#pragma once
#include <cstddef>
#include <vector>

#include "core/graph/node.h"

namespace kb::api {

enum class ReduceOp : int32_t { sum = 0, average = 1 };

NodePtr all_reduce(const NodePtr& x, ReduceOp op);
NodePtr broadcast(const NodePtr& x, int64_t root);
// The ranks' x concatenated along axis 0 (every rank's x of the same shape), for the number of
// processes of the job now: dist_init comes first.
NodePtr all_gather(const NodePtr& x);

// Sets every variable to rank root's value, with one collective for them all.
void broadcast_variables(const std::vector<NodePtr>& vars, int64_t root);
// The sum or average over the processes of count values of dtype t; out may be in.
void all_reduce_values(const void* in, void* out, size_t count, DType t, ReduceOp op);

}  // namespace kb::api
