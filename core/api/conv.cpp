// conv1d/2d/3d, conv2d/3d_transpose (deconv2d), depthwise_conv2d, separable_conv1d/2d,
// pool2d/3d over the Conv, ConvBackwardData and Pool primitives (core/ops/conv_ops.h).
#include "core/api/conv.h"

#include "core/api/api.h"
#include "core/ops/build.h"
#include "core/ops/conv_ops.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace kb::api {

namespace {

DataFormat resolve(Format f) { return f ? *f : Session::get().image_data_format(); }

const char* padding_name(Padding p) {
  switch (p) {
    case Padding::valid:
      return "valid";
    case Padding::same:
      return "same";
    case Padding::causal:
      return "causal";
  }
  return "?";
}

void check_padding(Padding p, bool causal_ok, const char* who) {
  check(p == Padding::valid || p == Padding::same || p == Padding::causal, Status::invalid_argument,
        who, ": unknown padding ", int32_t(p));
  check(causal_ok || p != Padding::causal, Status::invalid_argument, who,
        ": padding must be 'same' or 'valid', got 'causal' (only conv1d takes it)");
}

void check_tuple(const Ints& v, size_t nsp, const char* who, const char* what) {
  check(v.size() == nsp, Status::invalid_argument, who, ": ", what, " must have ", nsp,
        " entries, got ", v.size());
  for (int64_t e : v)
    check(e >= 1, Status::invalid_argument, who, ": ", what, " must be positive, got ",
          dims_str(v));
}

void check_dilation_strides(const Ints& strides, const Ints& dilation, const char* who) {
  bool dilated = false, strided = false;
  for (int64_t d : dilation) dilated = dilated || d > 1;
  for (int64_t s : strides) strided = strided || s > 1;
  check(!(dilated && strided), Status::invalid_argument, who,
        ": dilation_rate > 1 needs strides of 1, got strides ", dims_str(strides),
        " and dilation_rate ", dims_str(dilation));
}

// x: a floating tensor of rank nsp + 2.
void check_input(const NodePtr& x, size_t nsp, const char* who) {
  require(x, who, "x");
  check(x->shape().rank_known && x->rank() == int64_t(nsp + 2), Status::shape, who,
        ": x must have rank ", nsp + 2, " (batch, ", nsp, " spatial, channels), got ",
        x->shape().str());
  check(is_floating(x->dtype()), Status::dtype, who, ": x must be floating, got ",
        dtype_name(x->dtype()));
}

// A kernel of x's rank and dtype.
void check_kernel(const NodePtr& k, const NodePtr& x, const char* who, const char* what) {
  require(k, who, what);
  check(k->shape().rank_known, Status::shape, who, ": the rank of ", what, " is unknown");
  check(k->rank() == x->rank(), Status::shape, who, ": ", what, " rank ", k->rank(),
        " does not match input rank ", x->rank());
  check(k->dtype() == x->dtype(), Status::dtype, who, ": ", what, " is ", dtype_name(k->dtype()),
        " but x is ", dtype_name(x->dtype()));
}

void check_channels(int64_t have, int64_t want, const NodePtr& k, const char* who,
                    const char* what) {
  check(have < 0 || have == want, Status::shape, who, ": x has ", have, " channels but ", what, " ",
        k->shape().str(), " expects ", want);
}

// The geometry of a convolution of x by kernel k (Keras layout) with Keras' padding rule.
ConvGeom geometry(size_t nsp, const Ints& strides, const Ints& dilation, Padding padding,
                  DataFormat df, int64_t groups, const char* who) {
  ConvGeom g;
  g.channels_first = df == DataFormat::channels_first;
  g.strides = strides;
  g.dilation = dilation;
  g.pad_before.assign(nsp, 0);
  g.pad_after.assign(nsp, 0);
  g.groups = groups;
  g.who = who;
  g.same = padding == Padding::same;
  g.causal = padding == Padding::causal;
  return g;
}

NodePtr conv_nd(const char* who, size_t nsp, const NodePtr& x, const NodePtr& kernel,
                const Ints& strides, Padding padding, Format data_format, const Ints& dilation,
                bool depthwise, int64_t groups = 1) {
  check_input(x, nsp, who);
  check_kernel(kernel, x, who, depthwise ? "depthwise_kernel" : "kernel");
  check_tuple(strides, nsp, who, "strides");
  check_tuple(dilation, nsp, who, "dilation_rate");
  check_padding(padding, nsp == 1 && !depthwise, who);
  check_dilation_strides(strides, dilation, who);
  DataFormat df = resolve(data_format);
  bool first = df == DataFormat::channels_first;
  check(!(padding == Padding::causal && first), Status::invalid_argument, who,
        ": causal padding needs data_format channels_last");
  int64_t c = x->shape().dims[channel_axis(first, nsp)];
  const Dims& kd = kernel->shape().dims;
  check_channels(c, kd[nsp], kernel, who, depthwise ? "depthwise_kernel" : "kernel");
  check(groups >= 1 && (c < 0 || c % groups == 0), Status::invalid_argument, who, ": ", groups,
        " groups do not divide the ", c, " input channels");
  if (depthwise) {
    groups = kd[nsp] >= 0 ? kd[nsp] : c;
    check(groups >= 1, Status::shape, who, ": the number of input channels must be known");
  }
  ConvGeom g = geometry(nsp, strides, dilation, padding, df, groups, who);
  return make_node(ops::Conv, {x, kernel}, g.attrs());
}

NodePtr conv_transpose(const char* who, size_t nsp, const NodePtr& x, const NodePtr& kernel,
                       const Dims& output_shape, Ints strides, Padding padding, Format data_format,
                       const Ints& dilation) {
  check_input(x, nsp, who);
  check_kernel(kernel, x, who, "kernel");
  check_tuple(strides, nsp, who, "strides");
  check_tuple(dilation, nsp, who, "dilation_rate");
  check_padding(padding, false, who);
  bool dilated = false;
  for (int64_t d : dilation) {
    dilated = dilated || d != 1;
    check(d == dilation[0], Status::invalid_argument, who,
          ": dilation_rate entries must be equal, got ", dims_str(dilation));
  }
  if (dilated) strides.assign(nsp, 1);  // Keras' TF backend: atrous transpose, strides ignored
  DataFormat df = resolve(data_format);
  bool first = df == DataFormat::channels_first;
  size_t ca = channel_axis(first, nsp);
  const Dims& kd = kernel->shape().dims;
  const Dims& xd = x->shape().dims;
  // The kernel is (spatial..., out, in): x has `in` channels, the result `out`.
  check_channels(xd[ca], kd[nsp + 1], kernel, who, "kernel");
  check(output_shape.size() == nsp + 2, Status::invalid_argument, who, ": output_shape ",
        dims_str(output_shape), " must have ", nsp + 2, " entries");
  for (size_t i = 1; i < output_shape.size(); ++i)
    check(output_shape[i] >= 1, Status::invalid_argument, who, ": output_shape ",
          dims_str(output_shape), " must have positive dimensions (the batch may be -1)");
  check(output_shape[0] >= -1, Status::invalid_argument, who, ": output_shape ",
        dims_str(output_shape), " has an invalid batch dimension");
  check(output_shape[0] < 0 || xd[0] < 0 || output_shape[0] == xd[0], Status::shape, who,
        ": output_shape ", dims_str(output_shape), " has batch ", output_shape[0], " but x has ",
        xd[0]);
  check(kd[nsp] < 0 || output_shape[ca] == kd[nsp], Status::shape, who, ": output_shape ",
        dims_str(output_shape), " has ", output_shape[ca], " channels but the kernel ",
        dims_str(kd), " gives ", kd[nsp]);
  // 'same' pads follow from output_shape and the kernel size (resolved when the kernel's shape is
  // known; the primitive checks the result again when the function is planned).
  ConvGeom g = geometry(nsp, strides, dilation, padding, df, 1, who);
  // The transposed convolution is the adjoint of the convolution from output_shape to x's shape.
  Dims expect(nsp, -1), got(nsp);
  bool ok = true;
  ConvGeom r = g.resolved(output_shape, kd);
  for (size_t i = 0; i < nsp; ++i) {
    size_t ax = spatial_axis(first, i);
    got[i] = xd[ax];
    if (kd[i] < 0) continue;
    int64_t keff = dilated_size(kd[i], dilation[i], who);
    int64_t padded = padded_size(output_shape[ax], r.pad_before[i], r.pad_after[i], who,
                                 ": output_shape ", dims_str(output_shape), " padded by ",
                                 r.pad_before[i], " and ", r.pad_after[i], " overflows int64");
    check(keff <= padded, Status::shape, who, ": the kernel window (", keff,
          ") is larger than the padded output_shape (", padded, ")");
    expect[i] = (padded - keff) / strides[i] + 1;
    ok = ok && (got[i] < 0 || got[i] == expect[i]);
  }
  check(ok, Status::shape, who, ": output_shape ", dims_str(output_shape), " does not fit x: a ",
        padding_name(padding), " convolution of it with strides ", dims_str(strides),
        " has spatial dims ", dims_str(expect), " but x ", x->shape().str(), " has ",
        dims_str(got));
  Attrs a = g.attrs();
  a.set(attr::x_dims, output_shape);
  return make_node(ops::ConvBackwardData, {x, kernel}, a);
}

NodePtr separable(const char* who, size_t nsp, const NodePtr& x, const NodePtr& dk,
                  const NodePtr& pk, const Ints& strides, Padding padding, Format data_format,
                  const Ints& dilation) {
  check_input(x, nsp, who);
  check_kernel(pk, x, who, "pointwise_kernel");
  NodePtr depth = conv_nd(who, nsp, x, dk, strides, padding, data_format, dilation, true);
  const Dims& pd = pk->shape().dims;
  for (size_t i = 0; i < nsp; ++i)
    check(pd[i] == 1 || pd[i] < 0, Status::shape, who, ": pointwise_kernel ", dims_str(pd),
          " must have spatial size 1");
  int64_t mid =
      depth->shape().dims[channel_axis(resolve(data_format) == DataFormat::channels_first, nsp)];
  check(pd[nsp] == mid || pd[nsp] < 0 || mid < 0, Status::shape, who, ": pointwise_kernel ",
        dims_str(pd), " expects ", pd[nsp], " channels but the depthwise step gives ", mid);
  DataFormat df = resolve(data_format);
  ConvGeom g = geometry(nsp, Ints(nsp, 1), Ints(nsp, 1), Padding::valid, df, 1, who);
  return make_node(ops::Conv, {depth, pk}, g.attrs());
}

NodePtr pool_nd(const char* who, size_t nsp, const NodePtr& x, const Ints& pool_size,
                const Ints& strides, Padding padding, Format data_format, PoolKind mode) {
  check_input(x, nsp, who);
  check_tuple(pool_size, nsp, who, "pool_size");
  check_tuple(strides, nsp, who, "strides");
  check_padding(padding, false, who);
  check(mode == PoolKind::max || mode == PoolKind::avg, Status::invalid_argument, who,
        ": unknown pool_mode ", int32_t(mode), " (expected max or avg)");
  PoolGeom g;
  g.channels_first = resolve(data_format) == DataFormat::channels_first;
  g.mode = mode == PoolKind::max ? PoolMode::max : PoolMode::avg;
  g.window = pool_size;
  g.strides = strides;
  g.pad_before.assign(nsp, 0);
  g.pad_after.assign(nsp, 0);
  g.same = padding == Padding::same;
  g.who = who;
  return make_node(ops::Pool, {x}, g.attrs());
}

}  // namespace

NodePtr conv1d(const NodePtr& x, const NodePtr& kernel, int64_t strides, Padding padding,
               Format data_format, int64_t dilation_rate) {
  return conv_nd("conv1d", 1, x, kernel, {strides}, padding, data_format, {dilation_rate}, false);
}

NodePtr conv2d(const NodePtr& x, const NodePtr& kernel, const Ints& strides, Padding padding,
               Format data_format, const Ints& dilation_rate) {
  return conv_nd("conv2d", 2, x, kernel, strides, padding, data_format, dilation_rate, false);
}

NodePtr conv3d(const NodePtr& x, const NodePtr& kernel, const Ints& strides, Padding padding,
               Format data_format, const Ints& dilation_rate) {
  return conv_nd("conv3d", 3, x, kernel, strides, padding, data_format, dilation_rate, false);
}

NodePtr conv2d_transpose(const NodePtr& x, const NodePtr& kernel, const Dims& output_shape,
                         const Ints& strides, Padding padding, Format data_format,
                         const Ints& dilation_rate, const char* who) {
  return conv_transpose(who, 2, x, kernel, output_shape, strides, padding, data_format,
                        dilation_rate);
}

NodePtr conv3d_transpose(const NodePtr& x, const NodePtr& kernel, const Dims& output_shape,
                         const Ints& strides, Padding padding, Format data_format) {
  return conv_transpose("conv3d_transpose", 3, x, kernel, output_shape, strides, padding,
                        data_format, {1, 1, 1});
}

NodePtr grouped_conv(const NodePtr& x, const NodePtr& kernel, int64_t groups, const Ints& strides,
                     Padding padding, Format data_format, const Ints& dilation_rate) {
  return conv_nd("conv", strides.size(), x, kernel, strides, padding, data_format, dilation_rate,
                 false, groups);
}

NodePtr depthwise_conv2d(const NodePtr& x, const NodePtr& depthwise_kernel, const Ints& strides,
                         Padding padding, Format data_format, const Ints& dilation_rate) {
  return conv_nd("depthwise_conv2d", 2, x, depthwise_kernel, strides, padding, data_format,
                 dilation_rate, true);
}

NodePtr separable_conv1d(const NodePtr& x, const NodePtr& depthwise_kernel,
                         const NodePtr& pointwise_kernel, int64_t strides, Padding padding,
                         Format data_format, int64_t dilation_rate) {
  return separable("separable_conv1d", 1, x, depthwise_kernel, pointwise_kernel, {strides}, padding,
                   data_format, {dilation_rate});
}

NodePtr separable_conv2d(const NodePtr& x, const NodePtr& depthwise_kernel,
                         const NodePtr& pointwise_kernel, const Ints& strides, Padding padding,
                         Format data_format, const Ints& dilation_rate) {
  return separable("separable_conv2d", 2, x, depthwise_kernel, pointwise_kernel, strides, padding,
                   data_format, dilation_rate);
}

NodePtr pool2d(const NodePtr& x, const Ints& pool_size, const Ints& strides, Padding padding,
               Format data_format, PoolKind pool_mode) {
  return pool_nd("pool2d", 2, x, pool_size, strides, padding, data_format, pool_mode);
}

NodePtr pool3d(const NodePtr& x, const Ints& pool_size, const Ints& strides, Padding padding,
               Format data_format, PoolKind pool_mode) {
  return pool_nd("pool3d", 3, x, pool_size, strides, padding, data_format, pool_mode);
}

}  // namespace kb::api
