// The collectives of data-parallel training as primitives, so that a compiled function holding
// them stays one plan, and gradients flow through them. Each is stateful: never folded, merged or
// dropped on one rank and kept on another (every rank must run the same sequence).
//
// AllReduce: the sum over the processes of x; `average` divides it by their number (integers
// truncate toward zero; for an AllReduce with `async` 1, AllReduceWait does, below); `root_only` r
// >= 0 keeps the result on rank r alone (zeros elsewhere: the gradient of Broadcast). Broadcast:
// rank `root`'s x on every rank. AllGather: the ranks' x concatenated along axis 0, rank order;
// ReduceScatter: the sum over the processes, rank r keeping the r-th of `size` equal blocks along
// axis 0 (AllGather's gradient). `size` is the number of processes the graph was built for; the
// kernels check it.
#include "core/ops/collective_ops.h"

#include "core/ops/build.h"
#include "core/ops/infer_util.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {

bool summable_across_processes(DType t) {
  switch (t) {
    case DType::f32:
    case DType::f64:
    case DType::i8:
    case DType::i16:
    case DType::i32:
    case DType::i64:
    case DType::u8:
      return true;
    default:
      return false;
  }
}

void check_summable_across_processes(DType t, const std::string& who) {
  check(summable_across_processes(t), Status::dtype, who, ": cannot sum ", dtype_name(t),
        " across processes (float32, float64 or an integer dtype)");
}

namespace {

using Ins = std::vector<TensorType>;

TensorType infer_all_reduce(const Ins& in, const Attrs&) {
  check_arity(in, 1, "all_reduce");
  check_summable_across_processes(in[0].dtype, "all_reduce");
  return in[0];
}

TensorType infer_broadcast(const Ins& in, const Attrs& a) {
  check_arity(in, 1, "broadcast");
  check(a.i(attr::root) >= 0, Status::invalid_argument, "broadcast: root must be >= 0, got ",
        a.i(attr::root));
  return in[0];
}

// Axis 0 of x, scaled by `size` (times) or divided by it.
TensorType blocks_along_axis0(const TensorType& x, int64_t size, bool gather, const char* who) {
  check(size >= 1, Status::internal, who, ": size ", size);
  check(x.shape.rank_known && x.shape.rank() >= 1, Status::shape, who,
        ": x needs at least one dimension, got ", x.shape.str());
  Dims d = x.shape.dims;
  if (d[0] >= 0) {
    if (gather) {
      d[0] *= size;
    } else {
      check(d[0] % size == 0, Status::shape, who, ": axis 0 of ", x.shape.str(),
            " does not split into ", size, " equal blocks");
      d[0] /= size;
    }
  }
  return {x.dtype, Shape(d)};
}

TensorType infer_all_gather(const Ins& in, const Attrs& a) {
  check_arity(in, 1, "all_gather");
  return blocks_along_axis0(in[0], a.i(attr::size), true, "all_gather");
}

TensorType infer_reduce_scatter(const Ins& in, const Attrs& a) {
  check_arity(in, 1, "reduce_scatter");
  check_summable_across_processes(in[0].dtype, "reduce_scatter");
  return blocks_along_axis0(in[0], a.i(attr::size), false, "reduce_scatter");
}

// y = f(sum_i x_i): dx_j = sum_i dy_i, scaled alike; kept on one rank, it is that rank's dy.
std::vector<NodePtr> grad_all_reduce(const NodePtr& n, const NodePtr& dy) {
  int64_t root = n->attrs.i(attr::root_only);
  if (root >= 0) return {make_node(ops::Broadcast, {dy}, {{attr::root, root}})};
  return {make_node(ops::AllReduce, {dy},
                    {{attr::average, n->attrs.i(attr::average)}, {attr::root_only, -1}})};
}
std::vector<NodePtr> grad_broadcast(const NodePtr& n, const NodePtr& dy) {
  return {make_node(ops::AllReduce, {dy},
                    {{attr::average, 0}, {attr::root_only, n->attrs.i(attr::root)}})};
}
std::vector<NodePtr> grad_all_gather(const NodePtr& n, const NodePtr& dy) {
  return {make_node(ops::ReduceScatter, {dy}, {{attr::size, n->attrs.i(attr::size)}})};
}
std::vector<NodePtr> grad_reduce_scatter(const NodePtr& n, const NodePtr& dy) {
  return {make_node(ops::AllGather, {dy}, {{attr::size, n->attrs.i(attr::size)}})};
}

// A bucket's parts (core/compile/bucket_collectives.cpp), made by the compiler only. Pack: its
// operands (one dtype) flattened and concatenated; Unpack: the part of `dims` at element
// `offset` of a packed buffer, a view of it.
TensorType infer_pack(const Ins& in, const Attrs&) {
  check(!in.empty(), Status::internal, "Pack: no operand");
  int64_t total = 0;
  for (const auto& t : in) {
    check(t.dtype == in[0].dtype && t.shape.fully_known(), Status::internal,
          "Pack: operands of one dtype and known shapes");
    total += numel(t.shape.dims);
  }
  return {in[0].dtype, Shape(Dims{total})};
}
TensorType infer_unpack(const Ins& in, const Attrs& a) {
  check_arity(in, 1, "Unpack");
  Dims d = a.ints(attr::dims);
  check(a.i(attr::offset) >= 0 && in[0].shape.fully_known() &&
            a.i(attr::offset) + numel(d) <= numel(in[0].shape.dims),
        Status::internal, "Unpack: the part lies outside the packed buffer");
  return {in[0].dtype, Shape(d)};
}
OpDef plan_op(const char* name, InferFn infer, bool view) {
  OpDef d;
  d.name = name;
  d.infer = infer;
  d.view = view;
  return d;
}
OpRegistrar r5(plan_op("Pack", infer_pack, false));
OpRegistrar r6(plan_op("Unpack", infer_unpack, true));

// A bucket's all-reduce runs while later steps compute: its AllReduce (attr `async` 1) starts it
// and AllReduceWait, before the first step that reads the bucket, completes it (and divides for
// the AllReduce's average): a view of its input once the collective has written it.
TensorType infer_wait(const Ins& in, const Attrs&) {
  check_arity(in, 1, "AllReduceWait");
  return in[0];
}
OpDef waits(OpDef d) {
  d.stateful = true;
  return d;
}
OpRegistrar r7(waits(plan_op("AllReduceWait", infer_wait, true)));

OpDef collective(const char* name, InferFn infer, GradFn grad) {
  OpDef d;
  d.name = name;
  d.infer = infer;
  d.grad = grad;
  d.stateful = true;
  return d;
}
OpDef reduces_in_place(OpDef d) {
  d.in_place = true;
  return d;
}
OpRegistrar r1(reduces_in_place(collective("AllReduce", infer_all_reduce, grad_all_reduce)));
OpRegistrar r2(collective("Broadcast", infer_broadcast, grad_broadcast));
OpRegistrar r3(collective("AllGather", infer_all_gather, grad_all_gather));
OpRegistrar r4(collective("ReduceScatter", infer_reduce_scatter, grad_reduce_scatter));

}  // namespace
}  // namespace kb
