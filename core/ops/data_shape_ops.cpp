// Primitives whose output shape comes from the input values (OpDef::dynamic): Where (the
// coordinates of the non-zero entries) and TrimTrailing (drops the trailing padding along an
// axis). Plans run what follows them with kernels chosen once the shapes are known.
#include "core/ops/infer_util.h"
#include "core/ops/op.h"
#include "core/util/error.h"

namespace kb {
namespace {

using Ins = std::vector<TensorType>;

OpDef dynamic_op(const char* name, InferFn infer) {
  OpDef d;
  d.name = name;
  d.infer = infer;
  d.dynamic = true;
  return d;
}

TensorType infer_where(const Ins& in, const Attrs&) {
  check_arity(in, 1, "where");
  check(in[0].shape.rank_known, Status::shape, "where: the input rank is unknown");
  return {DType::i64, Shape(Dims{-1, in[0].shape.rank()})};
}
OpRegistrar r1(dynamic_op("Where", infer_where));

TensorType infer_trim_trailing(const Ins& in, const Attrs& a) {
  check_arity(in, 1, "trim_trailing");
  check(in[0].shape.rank_known, Status::shape, "trim_trailing: the input rank is unknown");
  int64_t axis = a.i(attr::axis);
  check(axis >= 0 && axis < in[0].shape.rank(), Status::invalid_argument, "trim_trailing: axis ",
        axis, " is out of range for rank ", in[0].shape.rank());
  Dims d = in[0].shape.dims;
  d[size_t(axis)] = -1;
  return {in[0].dtype, Shape(d)};
}
OpRegistrar r2(dynamic_op("TrimTrailing", infer_trim_trailing));

}  // namespace
}  // namespace kb
