// Pad (zero padding; its gradient is a slice), Resize and ResizeGrad (nearest and legacy bilinear
// upsampling by integer factors, and its adjoint).
//
// Pad attributes: pad_before, pad_after (one entry per axis, >= 0), who (the Keras function).
// Resize / ResizeGrad attributes: layout (0: channels last (N, spatial..., C); 1: channels first
// (N, C, spatial...)), factors (one per spatial dimension, 2 or 3 of them, >= 1), mode (0 nearest,
// 1 bilinear), who. Resize maps x to (N, spatial * factors, C); ResizeGrad(dy, like x) is its
// adjoint (the gradient), of x's shape. Both are linear in their first input.
#include "core/ops/build.h"
#include "core/ops/infer_util.h"
#include "core/ops/op.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace kb {
namespace {

using Ins = std::vector<TensorType>;
using Grads = std::vector<NodePtr>;

std::string who_of(const Attrs& a, const char* fallback) {
  return a.has(attr::who) ? a.s(attr::who) : std::string(fallback);
}

// ---- Pad ------------------------------------------------------------------------------------
TensorType infer_pad(const Ins& in, const Attrs& a) {
  std::string who = who_of(a, "pad");
  check_arity(in, 1, who);
  const auto& pb = a.ints(attr::pad_before);
  const auto& pa = a.ints(attr::pad_after);
  check(in[0].shape.rank_known, Status::shape, who, ": the input rank is unknown");
  int64_t r = in[0].shape.rank();
  check(int64_t(pb.size()) == r && int64_t(pa.size()) == r, Status::invalid_argument, who,
        ": padding has ", pb.size(), " entries for rank ", r);
  Dims out = in[0].shape.dims;
  for (int64_t i = 0; i < r; ++i) {
    check(pb[i] >= 0 && pa[i] >= 0, Status::invalid_argument, who,
          ": padding must be non-negative, got ", dims_str(pb), " and ", dims_str(pa));
    if (out[i] < 0) continue;
    out[i] = padded_size(out[i], pb[i], pa[i], who, ": padding axis ", i, " of size ", out[i],
                         " by ", pb[i], " and ", pa[i], " overflows int64");
  }
  return {in[0].dtype, Shape(out)};
}
// The gradient is dy[pb : dim - pa] on every axis (a negative end, so unknown dims work).
Grads grad_pad(const NodePtr& n, const NodePtr& dy) {
  const auto& pb = n->attrs.ints(attr::pad_before);
  const auto& pa = n->attrs.ints(attr::pad_after);
  std::vector<int64_t> end(pb.size(), 0), strides(pb.size(), 1);
  int64_t end_mask = 0;
  for (size_t i = 0; i < pb.size(); ++i) {
    if (pa[i] == 0)
      end_mask |= int64_t(1) << i;
    else
      end[i] = -pa[i];
  }
  return {make_node(ops::StridedSlice, {dy},
                    {{attr::begin, pb},
                     {attr::end, end},
                     {attr::strides, strides},
                     {attr::begin_mask, int64_t(0)},
                     {attr::end_mask, end_mask},
                     {attr::shrink_mask, int64_t(0)}})};
}
OpRegistrar r1({ops::Pad, infer_pad, grad_pad});

// ---- Resize / ResizeGrad ----------------------------------------------------------------------
struct ResizeAttrs {
  bool channels_first;
  std::vector<int64_t> factors;
  ResizeMode mode;
  std::string who;
};

ResizeAttrs resize_attrs(const Attrs& a) {
  ResizeAttrs r{a.i(attr::layout) != 0, a.ints(attr::factors), mode_of<ResizeMode>(a),
                who_of(a, "resize")};
  check(r.factors.size() == 2 || r.factors.size() == 3, Status::invalid_argument, r.who, ": ",
        r.factors.size(), " factors (2 or 3 spatial dimensions are supported)");
  for (int64_t f : r.factors)
    check(f >= 1, Status::invalid_argument, r.who, ": factors must be positive, got ",
          dims_str(r.factors));
  check(r.mode == ResizeMode::nearest || r.mode == ResizeMode::bilinear, Status::invalid_argument,
        r.who, ": unknown interpolation ", int64_t(r.mode));
  return r;
}

void check_resize_input(const TensorType& t, const ResizeAttrs& r, const char* what) {
  size_t nsp = r.factors.size();
  check(t.shape.rank_known && t.shape.rank() == int64_t(nsp + 2), Status::shape, r.who, ": ", what,
        " must have rank ", nsp + 2, ", got ", t.shape.str());
  check(!is_bool(t.dtype), Status::dtype, r.who, ": ", what, " must be numeric, got bool");
  check(r.mode == ResizeMode::nearest || is_floating(t.dtype), Status::dtype, r.who,
        ": bilinear interpolation needs a floating input, got ", dtype_name(t.dtype));
}

Dims resized_dims(const Dims& x, const ResizeAttrs& r) {
  Dims out = x;
  for (size_t i = 0; i < r.factors.size(); ++i) {
    size_t ax = (r.channels_first ? 2 : 1) + i;
    if (out[ax] >= 0)
      check(!__builtin_mul_overflow(out[ax], r.factors[i], &out[ax]), Status::invalid_argument,
            r.who, ": the resized dimension is too large");
  }
  return out;
}

TensorType infer_resize(const Ins& in, const Attrs& a) {
  ResizeAttrs r = resize_attrs(a);
  check_arity(in, 1, r.who);
  check_resize_input(in[0], r, "x");
  return {in[0].dtype, Shape(resized_dims(in[0].shape.dims, r))};
}
Grads grad_resize(const NodePtr& n, const NodePtr& dy) {
  return {make_node(ops::ResizeGrad, {dy, n->inputs[0]}, n->attrs)};
}
OpRegistrar r2({ops::Resize, infer_resize, grad_resize});

TensorType infer_resize_grad(const Ins& in, const Attrs& a) {
  ResizeAttrs r = resize_attrs(a);
  check_arity(in, 2, r.who);
  check_resize_input(in[0], r, "the gradient");
  check_resize_input(in[1], r, "x");
  check(in[0].dtype == in[1].dtype, Status::dtype, r.who, ": the gradient's dtype differs");
  Dims want = resized_dims(in[1].shape.dims, r);
  const Dims& got = in[0].shape.dims;
  for (size_t i = 0; i < got.size(); ++i)
    check(want[i] < 0 || got[i] < 0 || want[i] == got[i], Status::shape, r.who,
          ": the gradient has shape ", dims_str(got), ", expected ", dims_str(want));
  return in[1];
}
Grads grad_resize_grad(const NodePtr& n, const NodePtr& gx) {
  return {make_node(ops::Resize, {gx}, n->attrs), nullptr};
}
OpRegistrar r3({ops::ResizeGrad, infer_resize_grad, grad_resize_grad});

}  // namespace
}  // namespace kb
