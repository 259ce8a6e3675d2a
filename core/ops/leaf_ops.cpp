// Leaves (placeholders, variables, constants, the learning phase), identity-like nodes,
// printing, and variable updates.
#include "core/ops/build.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {
namespace {

using Ins = std::vector<TensorType>;
using Grads = std::vector<NodePtr>;

TensorType infer_leaf(const Ins&, const Attrs&) {
  fail(Status::internal, "a leaf has no inference");
}
OpRegistrar r1({ops::Placeholder, infer_leaf, nullptr, false, false, false, true});
OpRegistrar r2({ops::Variable, infer_leaf, nullptr, false, false, false, true});
OpRegistrar r3({ops::Constant, infer_leaf, nullptr, false, false, false, true});
OpRegistrar r4({ops::LearningPhase, infer_leaf, nullptr, false, false, false, true});

TensorType infer_same(const Ins& in, const Attrs&) { return in[0]; }
Grads grad_pass(const NodePtr&, const NodePtr& dy) { return {dy}; }
OpRegistrar r5({ops::Identity, infer_same, grad_pass, false, true});
OpRegistrar r6({ops::StopGradient, infer_same, nullptr, false, true});
OpRegistrar r7({ops::Print, infer_same, grad_pass, true, true});

// Assign(variable, value, extra updates...): writes value into the variable after the outputs of
// the function are computed; its own value is the new value. Extra inputs are updates that must
// run together with this one (moving_average_update's hidden state).
TensorType infer_assign(const Ins& in, const Attrs&) {
  check(in.size() >= 2, Status::internal, "update: missing operands");
  check(in[0].dtype == in[1].dtype, Status::dtype, "update: the value's dtype ",
        dtype_name(in[1].dtype), " differs from the variable's ", dtype_name(in[0].dtype));
  const Shape& v = in[0].shape;
  const Shape& x = in[1].shape;
  bool ok = !x.rank_known || x.rank() == v.rank();
  for (size_t i = 0; ok && x.rank_known && i < v.dims.size(); ++i)
    ok = x.dims[i] < 0 || x.dims[i] == v.dims[i];
  check(ok, Status::shape, "update: the value's shape ", x.str(), " differs from the variable's ",
        v.str());
  return in[0];
}
OpRegistrar r8({ops::Assign, infer_assign, nullptr, true});

}  // namespace
}  // namespace kb
