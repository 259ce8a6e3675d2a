#include "core/api/distributed.h"

#include <cstring>

#include "core/api/api.h"
#include "core/backend/collectives.h"
#include "core/backend/device.h"
#include "core/ops/build.h"
#include "core/ops/collective_ops.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace kb::api {

namespace {
void check_op(ReduceOp op, const char* who) {
  check(op == ReduceOp::sum || op == ReduceOp::average, Status::invalid_argument, who,
        ": unknown reduction ", int32_t(op), " (sum or average)");
}
void check_root(int64_t root, const char* who) {
  int32_t n = dist::size();
  check(root >= 0 && root < n, Status::invalid_argument, who, ": root ", root,
        " is not a rank of the ", n, " processes");
}
}  // namespace

NodePtr all_reduce(const NodePtr& x, ReduceOp op) {
  require(x, "all_reduce", "x");
  check_op(op, "all_reduce");
  return make_node(
      ops::AllReduce, {x},
      {{attr::average, int64_t(op == ReduceOp::average)}, {attr::root_only, int64_t(-1)}});
}

NodePtr broadcast(const NodePtr& x, int64_t root) {
  require(x, "broadcast", "x");
  check_root(root, "broadcast");
  return make_node(ops::Broadcast, {x}, {{attr::root, root}});
}

NodePtr all_gather(const NodePtr& x) {
  require(x, "all_gather", "x");
  return make_node(ops::AllGather, {x}, {{attr::size, int64_t(dist::size())}});
}

void broadcast_variables(const std::vector<NodePtr>& vars, int64_t root) {
  const char* who = "dist_broadcast_variables";
  check_root(root, who);
  std::vector<std::shared_ptr<Buffer>> values;
  int64_t total = 0;
  for (const NodePtr& v : vars) {
    require(v, who, "a variable");
    check(v->is(ops::Variable), Status::invalid_argument, who, ": '", v->name,
          "' is not a variable");
    values.push_back(to_host(v->value));
    total = checked_add(total, int64_t(values.back()->nbytes()), who, ": variables too large");
  }
  // One message for them all: many small variables cost one latency.
  auto packed = Buffer::make(DType::u8, Dims{total});
  size_t at = 0;
  for (const auto& b : values) {
    if (b->nbytes()) std::memcpy(packed->as<uint8_t>() + at, b->data(), b->nbytes());
    at += b->nbytes();
  }
  dist::broadcast(*packed, int32_t(root), who);
  at = 0;
  for (size_t i = 0; i < vars.size(); ++i) {
    // A fresh buffer, as set_value: values handed out earlier keep their contents.
    vars[i]->value =
        Buffer::from_bytes(values[i]->dtype, values[i]->dims, packed->as<uint8_t>() + at);
    at += values[i]->nbytes();
  }
}

void all_reduce_values(const void* in, void* out, size_t count, DType t, ReduceOp op) {
  const char* who = "dist_all_reduce";
  check_op(op, who);
  check_summable_across_processes(t, who);
  check(count == 0 || (in != nullptr && out != nullptr), Status::invalid_argument, who,
        ": data is NULL");
  check(count <= size_t(INT64_MAX) / 8, Status::invalid_argument, who, ": count too large");
  // A copy the library owns: a collective that passes its deadline keeps its buffer, which the
  // engine may still write, and the caller's memory cannot be kept.
  auto b = Buffer::from_bytes(t, Dims{int64_t(count)}, in);
  dist::all_reduce(*b, *b, op == ReduceOp::average, who);
  if (count) std::memcpy(out, b->data(), b->nbytes());
}

}  // namespace kb::api
