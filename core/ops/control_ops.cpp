// Switch: a choice between two whole tensors by a scalar bool condition (Keras switch with a
// scalar condition, in_train_phase). The branches may differ in shape; a plan whose condition is
// known when it is built (the learning phase, a constant) aliases the chosen branch and never
// computes the other one (core/compile/plan.cpp).
#include "core/ops/build.h"
#include "core/ops/infer_util.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {
namespace {

TensorType infer_switch(const std::vector<TensorType>& in, const Attrs&) {
  check_arity(in, 3, "switch");
  check(in[0].dtype == DType::b8, Status::dtype, "switch: the condition must be bool, got ",
        dtype_name(in[0].dtype));
  check(!in[0].shape.rank_known || in[0].shape.rank() == 0, Status::shape,
        "switch: the condition must be a scalar, got ", in[0].shape.str());
  check(in[1].dtype == in[2].dtype, Status::dtype, "switch: the branches have different dtypes (",
        dtype_name(in[1].dtype), " and ", dtype_name(in[2].dtype), ")");
  const Shape& a = in[1].shape;
  const Shape& b = in[2].shape;
  if (!a.rank_known || !b.rank_known || a.rank() != b.rank())
    return {in[1].dtype, Shape::unknown_rank()};
  Dims d = a.dims;
  for (size_t i = 0; i < d.size(); ++i)
    if (d[i] != b.dims[i]) d[i] = -1;
  return {in[1].dtype, Shape(d)};
}

std::vector<NodePtr> grad_switch(const NodePtr& n, const NodePtr& dy) {
  const NodePtr& c = n->inputs[0];
  return {nullptr, make_node(ops::Switch, {c, dy, zeros_like(n->inputs[1])}),
          make_node(ops::Switch, {c, zeros_like(n->inputs[2]), dy})};
}

OpRegistrar reg_switch({ops::Switch, infer_switch, grad_switch});

}  // namespace
}  // namespace kb
