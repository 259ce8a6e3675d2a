// Convolution and pooling primitives: Conv, ConvBackwardData, ConvBackwardFilter (explicit
// backward primitives, each differentiable with the others, so second derivatives work), Pool,
// PoolBackward and MaxPoolGradGrad (the gradient of max pooling's backward pass).
#include "core/ops/conv_ops.h"

#include <algorithm>

#include "core/ops/build.h"
#include "core/ops/infer_util.h"
#include "core/ops/op.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace kb {

namespace {

using Ins = std::vector<TensorType>;
using Grads = std::vector<NodePtr>;

TensorType tensor_type(DType t, Dims dims) {
  TensorType r;
  r.dtype = t;
  r.shape = Shape(std::move(dims));
  return r;
}

void check_lists(const std::string& who, size_t nsp, const std::vector<const char*>& names,
                 const std::vector<const std::vector<int64_t>*>& lists) {
  check(nsp >= 1 && nsp <= 3, Status::invalid_argument, who, ": ", nsp,
        " spatial dimensions (1 to 3 are supported)");
  for (size_t i = 0; i < lists.size(); ++i)
    check(lists[i]->size() == nsp, Status::invalid_argument, who, ": ", names[i], " has ",
          lists[i]->size(), " entries for ", nsp, " spatial dimensions");
}

void check_geom(const ConvGeom& g) {
  check_lists(g.who, g.nsp(), {"dilation", "pad_before", "pad_after"},
              {&g.dilation, &g.pad_before, &g.pad_after});
  for (size_t i = 0; i < g.nsp(); ++i) {
    check(g.strides[i] >= 1, Status::invalid_argument, g.who, ": strides must be positive, got ",
          dims_str(g.strides));
    check(g.dilation[i] >= 1, Status::invalid_argument, g.who,
          ": dilation_rate must be positive, got ", dims_str(g.dilation));
    check(g.pad_before[i] >= 0 && g.pad_after[i] >= 0, Status::invalid_argument, g.who,
          ": negative padding");
  }
  check(g.groups >= 1, Status::invalid_argument, g.who, ": groups must be positive, got ",
        g.groups);
}

void check_float_pair(const TensorType& a, const TensorType& b, const std::string& who,
                      const char* an, const char* bn) {
  check(is_floating(a.dtype), Status::dtype, who, ": ", an, " must be floating, got ",
        dtype_name(a.dtype));
  check(a.dtype == b.dtype, Status::dtype, who, ": ", an, " is ", dtype_name(a.dtype), " but ", bn,
        " is ", dtype_name(b.dtype));
}

void check_rank(const Shape& s, size_t nsp, const std::string& who, const char* what) {
  check(s.rank_known && s.rank() == int64_t(nsp + 2), Status::shape, who, ": ", what,
        " must have rank ", nsp + 2, ", got ", s.str());
}

// The output dims of Conv for input dims x and kernel dims k (both of rank nsp + 2).
Dims conv_out_dims(const Dims& x, const Dims& k, const ConvGeom& g) {
  size_t nsp = g.nsp(), ca = channel_axis(g.channels_first, nsp);
  int64_t c = x[ca], kc = k[nsp], ocg = k[nsp + 1];
  check(c < 0 || kc < 0 || c == kc, Status::shape, g.who, ": the input has ", c,
        " channels but the kernel expects ", kc);
  int64_t cin = c >= 0 ? c : kc;
  check(cin < 0 || cin % g.groups == 0, Status::shape, g.who, ": ", cin,
        " input channels do not split into ", g.groups, " groups");
  Dims out(nsp + 2);
  out[0] = x[0];
  out[ca] = ocg < 0
                ? -1
                : checked_mul(ocg, g.groups, g.who, ": ", ocg, " output channels per group times ",
                              g.groups, " groups overflows int64");
  for (size_t i = 0; i < nsp; ++i) {
    int64_t keff = dilated_size(k[i], g.dilation[i], g.who);
    size_t ax = spatial_axis(g.channels_first, i);
    out[ax] = windowed_size(x[ax], keff, g.strides[i], g.pad_before[i], g.pad_after[i], g.who,
                            "kernel window");
  }
  return out;
}

void check_matches(const Dims& expected, const Dims& got, const std::string& who,
                   const char* what) {
  bool ok = expected.size() == got.size();
  for (size_t i = 0; ok && i < got.size(); ++i)
    ok = expected[i] < 0 || got[i] < 0 || expected[i] == got[i];
  check(ok, Status::shape, who, ": ", what, " has shape ", dims_str(got), ", expected ",
        dims_str(expected));
}

// ---- Conv -----------------------------------------------------------------------------------
TensorType infer_conv(const Ins& in, const Attrs& a) {
  ConvGeom g = ConvGeom::from(a);
  check_geom(g);
  check_arity(in, 2, g.who);
  check_float_pair(in[0], in[1], g.who, "the input", "the kernel");
  check_rank(in[0].shape, g.nsp(), g.who, "the input");
  check_rank(in[1].shape, g.nsp(), g.who, "the kernel");
  g = g.resolved(in[0].shape.dims, in[1].shape.dims);
  return tensor_type(in[0].dtype, conv_out_dims(in[0].shape.dims, in[1].shape.dims, g));
}
Grads grad_conv(const NodePtr& n, const NodePtr& dy) {
  const NodePtr& x = n->inputs[0];
  const NodePtr& k = n->inputs[1];
  Attrs a = ConvGeom::from(n->attrs).attrs();
  return {make_node(ops::ConvBackwardData, {dy, k, x}, a),
          make_node(ops::ConvBackwardFilter, {x, dy, k}, a)};
}
OpRegistrar r1({ops::Conv, infer_conv, grad_conv});

// ---- FusedConv(x, kernel[, bias]) -----------------------------------------------------------
// Conv, then + bias (one value per output channel) when there is a third input, then relu when
// the attribute relu is 1 (the other attributes are Conv's). Built only by the plan-time rewrite
// of core/compile/fuse_epilogue.cpp, after gradients were taken on the unfused graph: no gradient.
TensorType infer_fused_conv(const Ins& in, const Attrs& a) {
  ConvGeom g = ConvGeom::from(a);
  check(in.size() == 2 || in.size() == 3, Status::invalid_argument, g.who,
        ": a fused convolution takes 2 or 3 inputs, got ", in.size());
  TensorType y = infer_conv({in[0], in[1]}, a);
  if (in.size() == 3) {
    check(in[2].dtype == y.dtype, Status::dtype, g.who, ": the bias is ", dtype_name(in[2].dtype),
          " but the convolution is ", dtype_name(y.dtype));
    int64_t oc = y.shape.dims[channel_axis(g.channels_first, g.nsp())];
    int64_t nb = in[2].shape.fully_known() ? numel(in[2].shape.dims) : -1;
    check(oc < 0 || nb < 0 || nb == oc, Status::shape, g.who, ": a bias of ", nb, " values for ",
          oc, " output channels");
  }
  return y;
}
OpRegistrar r1f({ops::FusedConv, infer_fused_conv, nullptr});

// ---- ConvBackwardData(dy, kernel[, like x]) -> dx --------------------------------------------
// x's shape comes from the third input (any tensor of that shape; only its shape is read) or,
// without one, from the attribute x_dims, whose unknown batch dimension is dy's.
TensorType infer_conv_bd(const Ins& in, const Attrs& a) {
  ConvGeom g = ConvGeom::from(a);
  check_geom(g);
  check(in.size() == 2 || in.size() == 3, Status::internal, g.who,
        ": ConvBackwardData takes 2 or 3 inputs");
  check_float_pair(in[0], in[1], g.who, "the gradient", "the kernel");
  check_rank(in[0].shape, g.nsp(), g.who, "the gradient");
  check_rank(in[1].shape, g.nsp(), g.who, "the kernel");
  Dims x;
  if (in.size() == 3) {
    check_rank(in[2].shape, g.nsp(), g.who, "the input");
    x = in[2].shape.dims;
  } else {
    x = a.ints(attr::x_dims);
    check(x.size() == g.nsp() + 2, Status::invalid_argument, g.who, ": output shape ", dims_str(x),
          " must have rank ", g.nsp() + 2);
  }
  if (x[0] < 0) x[0] = in[0].shape.dims[0];
  g = g.resolved(x, in[1].shape.dims);
  check_matches(conv_out_dims(x, in[1].shape.dims, g), in[0].shape.dims, g.who,
                "the input of the transposed convolution");
  return tensor_type(in[0].dtype, x);
}
Grads grad_conv_bd(const NodePtr& n, const NodePtr& gx) {
  const NodePtr& dy = n->inputs[0];
  const NodePtr& k = n->inputs[1];
  Attrs a = ConvGeom::from(n->attrs).attrs();
  Grads g{make_node(ops::Conv, {gx, k}, a), make_node(ops::ConvBackwardFilter, {gx, dy, k}, a)};
  if (n->inputs.size() == 3) g.push_back(nullptr);
  return g;
}
OpRegistrar r2({.name = ops::ConvBackwardData,
                .infer = infer_conv_bd,
                .grad = grad_conv_bd,
                .shape_input = 2});

// ---- ConvBackwardFilter(x, dy, like kernel) -> dkernel ----------------------------------------
TensorType infer_conv_bf(const Ins& in, const Attrs& a) {
  ConvGeom g = ConvGeom::from(a);
  check_geom(g);
  check_arity(in, 3, g.who);
  check_float_pair(in[0], in[1], g.who, "the input", "the gradient");
  check_rank(in[0].shape, g.nsp(), g.who, "the input");
  check_rank(in[1].shape, g.nsp(), g.who, "the gradient");
  check_rank(in[2].shape, g.nsp(), g.who, "the kernel");
  const Dims& k = in[2].shape.dims;
  g = g.resolved(in[0].shape.dims, k);
  check_matches(conv_out_dims(in[0].shape.dims, k, g), in[1].shape.dims, g.who, "the gradient");
  return tensor_type(in[0].dtype, k);
}
Grads grad_conv_bf(const NodePtr& n, const NodePtr& gk) {
  const NodePtr& x = n->inputs[0];
  const NodePtr& dy = n->inputs[1];
  Attrs a = ConvGeom::from(n->attrs).attrs();
  return {make_node(ops::ConvBackwardData, {dy, gk, x}, a), make_node(ops::Conv, {x, gk}, a),
          nullptr};
}
OpRegistrar r3({.name = ops::ConvBackwardFilter,
                .infer = infer_conv_bf,
                .grad = grad_conv_bf,
                .shape_input = 2});

// ---- pooling ----------------------------------------------------------------------------------
void check_pool_geom(const PoolGeom& g) {
  check_lists(g.who, g.nsp(), {"strides", "pad_before", "pad_after"},
              {&g.strides, &g.pad_before, &g.pad_after});
  check(g.mode == PoolMode::max || g.mode == PoolMode::avg, Status::invalid_argument, g.who,
        ": unknown pool_mode ", int64_t(g.mode));
  for (size_t i = 0; i < g.nsp(); ++i) {
    check(g.window[i] >= 1, Status::invalid_argument, g.who, ": pool_size must be positive, got ",
          dims_str(g.window));
    check(g.strides[i] >= 1, Status::invalid_argument, g.who, ": strides must be positive, got ",
          dims_str(g.strides));
    // Every window then holds at least one real cell.
    check(g.pad_before[i] >= 0 && g.pad_after[i] >= 0 && g.pad_before[i] < g.window[i] &&
              g.pad_after[i] < g.window[i],
          Status::invalid_argument, g.who, ": padding must be in [0, pool_size)");
  }
}

Dims pool_out_dims(const TensorType& x, const PoolGeom& g0) {
  check(is_floating(x.dtype), Status::dtype, g0.who, ": the input must be floating, got ",
        dtype_name(x.dtype));
  check_rank(x.shape, g0.nsp(), g0.who, "the input");
  PoolGeom g = g0.resolved(x.shape.dims);
  check_pool_geom(g);
  Dims out = x.shape.dims;
  for (size_t i = 0; i < g.nsp(); ++i) {
    size_t ax = spatial_axis(g.channels_first, i);
    out[ax] = windowed_size(out[ax], g.window[i], g.strides[i], g.pad_before[i], g.pad_after[i],
                            g.who, "pool window");
  }
  return out;
}

TensorType infer_pool(const Ins& in, const Attrs& a) {
  PoolGeom g = PoolGeom::from(a);
  check_pool_geom(g);
  check_arity(in, 1, g.who);
  return tensor_type(in[0].dtype, pool_out_dims(in[0], g));
}
Grads grad_pool(const NodePtr& n, const NodePtr& dy) {
  return {make_node(ops::PoolBackward, {dy, n->inputs[0]}, n->attrs)};
}
OpRegistrar r4({ops::Pool, infer_pool, grad_pool});

// PoolBackward(dy, x) -> dx: max routes dy to the first maximum of each window, avg spreads it
// over the real cells of each window.
TensorType infer_pool_bwd(const Ins& in, const Attrs& a) {
  PoolGeom g = PoolGeom::from(a);
  check_pool_geom(g);
  check_arity(in, 2, g.who);
  check(in[0].dtype == in[1].dtype, Status::dtype, g.who, ": the gradient's dtype differs");
  check_rank(in[0].shape, g.nsp(), g.who, "the gradient");
  check_matches(pool_out_dims(in[1], g), in[0].shape.dims, g.who, "the gradient");
  return in[1];
}
Grads grad_pool_bwd(const NodePtr& n, const NodePtr& gx) {
  const NodePtr& x = n->inputs[1];
  if (PoolGeom::from(n->attrs).mode == PoolMode::avg)
    return {make_node(ops::Pool, {gx}, n->attrs), nullptr};
  return {make_node(ops::MaxPoolGradGrad, {gx, x}, n->attrs), nullptr};
}
OpRegistrar r5({ops::PoolBackward, infer_pool_bwd, grad_pool_bwd});

// MaxPoolGradGrad(g, x) -> the pooled shape: picks g at the cell that max pooling of x selects.
TensorType infer_max_pool_gg(const Ins& in, const Attrs& a) {
  PoolGeom g = PoolGeom::from(a);
  check_pool_geom(g);
  check_arity(in, 2, g.who);
  check(in[0].dtype == in[1].dtype, Status::dtype, g.who, ": the gradient's dtype differs");
  check_rank(in[0].shape, g.nsp(), g.who, "the gradient");
  check_matches(in[1].shape.dims, in[0].shape.dims, g.who, "the gradient");
  return tensor_type(in[1].dtype, pool_out_dims(in[1], g));
}
Grads grad_max_pool_gg(const NodePtr& n, const NodePtr& dy) {
  return {make_node(ops::PoolBackward, {dy, n->inputs[1]}, n->attrs), nullptr};
}
OpRegistrar r6({ops::MaxPoolGradGrad, infer_max_pool_gg, grad_max_pool_gg});

}  // namespace
}  // namespace kb
