// Shape arithmetic on caller-supplied int64 values (starts, sizes, steps, paddings, dilations,
// strides, dims): a sum or product that overflows int64 is a clear error naming the Keras
// function, never a wrapped-around shape, and slicing with huge steps follows NumPy. One test per
// place in the library that did such arithmetic; each failed before that place was fixed.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "capi/helpers.h"

using namespace kbt;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t k2to62 = int64_t(1) << 62;

// Expects status `want`, a message "prefix: ..." containing `contains`, and no handle written.
void expect_error(kb_status got, kb_tensor* out, kb_status want, const std::string& prefix,
                  const std::string& contains, const char* what) {
  std::string msg = kb_last_error_message();
  EXPECT_EQ(got, want) << what << "\n  message: " << msg;
  EXPECT_TRUE(starts_with(msg, prefix + ": ")) << what << "\n  message: " << msg;
  EXPECT_NE(msg.find(contains), std::string::npos)
      << what << "\n  message: " << msg << "\n  expected it to contain: " << contains;
  EXPECT_EQ(out, nullptr) << what;
  if (out) kb_tensor_release(out);
  kb_clear_error();
}

#define EXPECT_ERROR(want, prefix, contains, expr)         \
  do {                                                     \
    kb_tensor* out = nullptr;                              \
    kb_status st_ = (expr);                                \
    expect_error(st_, out, want, prefix, contains, #expr); \
  } while (0)

constexpr kb_status INVALID = KB_ERROR_INVALID_ARGUMENT;

std::vector<float> iota_f32(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(i);
  return v;
}

// x[begin:end:stride] per axis, with masks, as kb_strided_slice takes them.
Tensor strided(kb_tensor* x, const Shape& begin, const Shape& end, const Shape& strides,
               int64_t begin_mask = 0, int64_t end_mask = 0) {
  return make(
      [&](kb_tensor** o) {
        return kb_strided_slice(x, begin.data(), end.data(), strides.data(), begin.size(),
                                begin_mask, end_mask, 0, 0, o);
      },
      "strided_slice");
}

// d sum(y) / d x for a variable x (one gradient).
Tensor gradient_of_sum(kb_tensor* y, kb_tensor* x) {
  Tensor loss = make([&](kb_tensor** o) { return kb_sum(y, nullptr, 0, 0, o); }, "sum");
  kb_tensor_list* grads = nullptr;
  ok(kb_gradients(loss.get(), &x, 1, &grads), "gradients");
  List g(grads);
  return at(g, 0);
}

// A float32 placeholder of dims `d` (-1: unknown).
Tensor f32_placeholder(const Shape& d) { return placeholder(d, KB_FLOAT32); }

}  // namespace

// core/api/shape.cpp slice: start + size overflowed to a negative end that passed the range
// check (kb_slice(x, 1, INT64_MAX) gave a (0, ...) slice). tf.slice rejects it.
TEST(ShapeOverflow, SliceStartPlusSize) {
  Tensor x = constant_f32(iota_f32(6), {2, 3});
  int64_t start[2] = {1, 0}, size[2] = {kMax, 3};
  EXPECT_ERROR(INVALID, "slice", "exceeds dimension 2", kb_slice(x.get(), start, size, 2, &out));
  int64_t start2[2] = {0, 1}, size2[2] = {1, kMax};
  EXPECT_ERROR(INVALID, "slice", "exceeds dimension 3", kb_slice(x.get(), start2, size2, 2, &out));
  // An unknown dimension bounds nothing now, but the end must still be a number.
  Tensor p = f32_placeholder({-1, 3});
  EXPECT_ERROR(INVALID, "slice", "overflows", kb_slice(p.get(), start, size, 2, &out));
  // The largest slices that fit still work.
  int64_t start3[2] = {1, 0}, size3[2] = {1, 3};
  Tensor s = make([&](kb_tensor** o) { return kb_slice(x.get(), start3, size3, 2, o); });
  EXPECT_EQ(int_shape(s.get()), (Shape{1, 3}));
  expect_near(values_f32(eval(s.get())), {3, 4, 5});
}

// core/ops/slice_spec.cpp resolve_slices: the length ceil((stop - start) / step) was computed as
// (stop - start + step - 1) / step, which overflows for steps near INT64_MAX (x[0:6:INT64_MAX] gave
// 0 elements where NumPy gives 1), and -step for INT64_MIN. Expected values are NumPy's.
TEST(ShapeOverflow, StridedSliceHugeSteps) {
  Tensor x = constant_f32(iota_f32(6), {6});
  struct Case {
    Shape begin, end, strides;
    int64_t begin_mask, end_mask;
    std::vector<float> want;  // NumPy's x[begin:end:step]
  };
  std::vector<Case> cases = {
      {{0}, {6}, {kMax}, 0, 0, {0}},           // x[0:6:2**63-1]
      {{1}, {6}, {kMax - 1}, 0, 0, {1}},       // x[1:6:2**63-2]
      {{5}, {0}, {kMin}, 0, 0, {5}},           // x[5:0:-2**63]
      {{0}, {0}, {-kMax}, 1, 1, {5}},          // x[::-(2**63-1)]
      {{-1}, {-7}, {kMin}, 0, 0, {5}},         // x[-1:-7:-2**63]
      {{kMin}, {kMax}, {2}, 0, 0, {0, 2, 4}},  // x[-2**63:2**63-1:2]
      {{kMax}, {kMin}, {-3}, 0, 0, {5, 2}},    // x[2**63-1:-2**63:-3]
      {{kMax}, {kMin}, {kMax}, 0, 0, {}},      // x[2**63-1:-2**63:2**63-1]
      {{kMin}, {kMax}, {kMin}, 0, 0, {}},      // x[-2**63:2**63-1:-2**63]
      {{4}, {0}, {-3}, 0, 0, {4, 1}},          // x[4:0:-3]
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("begin " + std::to_string(c.begin[0]) + " end " + std::to_string(c.end[0]) +
                 " step " + std::to_string(c.strides[0]));
    Tensor y = strided(x.get(), c.begin, c.end, c.strides, c.begin_mask, c.end_mask);
    EXPECT_EQ(int_shape(y.get()), (Shape{int64_t(c.want.size())}));
    expect_near(values_f32(eval(y.get())), c.want);
  }
}

// core/ops/slice_spec.cpp slice_map: the kernels' source stride step * (row stride) overflowed
// for a huge step on an outer axis (it is never applied when the axis keeps one element).
TEST(ShapeOverflow, StridedSliceHugeStepsOnOuterAxes) {
  Tensor m = constant_f32(iota_f32(6), {2, 3});  // NumPy: np.arange(6.).reshape(2, 3)
  Tensor a = strided(m.get(), {0, 0}, {2, 0}, {kMax, 2}, 0b10, 0b10);  // m[0:2:2**63-1, ::2]
  EXPECT_EQ(int_shape(a.get()), (Shape{1, 2}));
  expect_near(values_f32(eval(a.get())), {0, 2});
  Tensor b = strided(m.get(), {1, 0}, {-3, 3}, {kMin, kMax});  // m[1:-3:-2**63, 0:3:2**63-1]
  EXPECT_EQ(int_shape(b.get()), (Shape{1, 1}));
  expect_near(values_f32(eval(b.get())), {3});
  // The gradient scatters through the same map.
  Tensor v = variable_f32(iota_f32(6), {2, 3});
  Tensor c = strided(v.get(), {1, 0}, {-3, 3}, {kMin, kMax});
  expect_near(values_f32(eval(gradient_of_sum(c.get(), v.get()).get())), {0, 0, 0, 1, 0, 0});
  Tensor w = variable_f32(iota_f32(6), {6});
  Tensor d = strided(w.get(), {0}, {6}, {kMax});
  expect_near(values_f32(eval(gradient_of_sum(d.get(), w.get()).get())), {1, 0, 0, 0, 0, 0});
}

// core/api/shape.cpp strided_slice, core/api/loops.cpp step_of and fold, core/ops/slice_spec.cpp:
// the masks have one bit per axis; 1 << 64 and mask >> 64 (the axes of a rank-65 tensor, from
// expand_dims of a rank-64 one) are undefined and picked the wrong axes. (kb_slice cannot be
// called on one: its start and size take at most 64 entries.)
TEST(ShapeOverflow, SlicingMoreThan64Axes) {
  Tensor p = f32_placeholder(Shape(64, 1));
  Tensor x = make([&](kb_tensor** o) { return kb_expand_dims(p.get(), 0, o); });
  ASSERT_EQ(int_shape(x.get()).size(), 65u);
  int64_t b = 0, e = 1, s = 1;
  EXPECT_ERROR(INVALID, "strided_slice", "at most 64 axes",
               kb_strided_slice(x.get(), &b, &e, &s, 1, 0, 0, 0, 0, &out));
  kb_fold_function add = [](void*, kb_tensor* acc, kb_tensor* v, kb_tensor** o) {
    return kb_add(acc, v, o);
  };
  EXPECT_ERROR(INVALID, "foldl", "at most 64 axes",
               kb_foldl(add, nullptr, x.get(), nullptr, nullptr, &out));
  EXPECT_ERROR(INVALID, "foldr", "at most 64 axes",
               kb_foldr(add, nullptr, x.get(), nullptr, nullptr, &out));
}

// core/ops/image_ops.cpp infer_pad: dim + pad_before + pad_after overflowed (a dimension of
// -9223372036854775803), for every padding function over the Pad primitive.
TEST(ShapeOverflow, Padding) {
  Tensor x3 = f32_placeholder({1, 2, 1});
  int64_t t[2] = {kMax, 1};
  EXPECT_ERROR(INVALID, "temporal_padding", "overflows", kb_temporal_padding(x3.get(), t, 2, &out));
  Tensor x4 = f32_placeholder({1, 2, 2, 1});
  int64_t s2[4] = {0, 0, kMax, kMax};
  EXPECT_ERROR(INVALID, "spatial_2d_padding", "overflows",
               kb_spatial_2d_padding(x4.get(), s2, 4, KB_CHANNELS_LAST, &out));
  int64_t s2b[4] = {kMax - 1, 0, 0, 0};  // 2 + (2**63 - 2) is one too many
  EXPECT_ERROR(INVALID, "spatial_2d_padding", "overflows",
               kb_spatial_2d_padding(x4.get(), s2b, 4, KB_CHANNELS_FIRST, &out));
  Tensor x5 = f32_placeholder({1, 2, 2, 2, 1});
  int64_t s3[6] = {0, 0, 0, 0, kMax - 1, 2};
  EXPECT_ERROR(INVALID, "spatial_3d_padding", "overflows",
               kb_spatial_3d_padding(x5.get(), s3, 6, KB_CHANNELS_LAST, &out));
  // Huge dims that fit are shapes; only allocating one fails (when a function runs).
  int64_t big[4] = {k2to62, 0, 0, 0};
  Tensor y = make(
      [&](kb_tensor** o) { return kb_spatial_2d_padding(x4.get(), big, 4, KB_CHANNELS_LAST, o); });
  EXPECT_EQ(int_shape(y.get()), (Shape{1, 2 + k2to62, 2, 1}));
  // An unknown dimension stays unknown whatever the padding.
  Tensor u = f32_placeholder({1, -1, 1});
  Tensor z = make([&](kb_tensor** o) { return kb_temporal_padding(u.get(), t, 2, o); });
  EXPECT_EQ(int_shape(z.get()), (Shape{1, -1, 1}));
}

// core/ops/conv_geom.cpp and conv_ops.cpp: (k - 1) * dilation + 1 overflowed, so conv2d with
// dilation INT64_MAX built (with an unknown output dim) and failed only when run.
TEST(ShapeOverflow, ConvDilation) {
  Tensor x = constant<double>(std::vector<double>(25, 1.0), {1, 5, 5, 1});
  Tensor k = constant<double>(std::vector<double>(9, 1.0), {3, 3, 1, 1});
  int64_t strides[2] = {1, 1}, dilation[2] = {kMax, 1};
  for (kb_padding pad : {KB_PADDING_VALID, KB_PADDING_SAME}) {
    EXPECT_ERROR(INVALID, "conv2d", "dilated by 9223372036854775807",
                 kb_conv2d(x.get(), k.get(), strides, 2, pad, KB_CHANNELS_LAST, dilation, 2, &out));
    EXPECT_ERROR(INVALID, "depthwise_conv2d", "dilated by 9223372036854775807",
                 kb_depthwise_conv2d(x.get(), k.get(), strides, 2, pad, KB_CHANNELS_LAST, dilation,
                                     2, &out));
  }
  // (3 - 1) * 2**62 + 1 overflows too, though the dilation alone fits.
  int64_t dilation62[2] = {1, k2to62};
  EXPECT_ERROR(INVALID, "conv2d", "spans more than INT64_MAX",
               kb_conv2d(x.get(), k.get(), strides, 2, KB_PADDING_VALID, KB_CHANNELS_LAST,
                         dilation62, 2, &out));
  // A window that fits but is larger than the input is the usual shape error.
  int64_t dilation_fits[2] = {k2to62 / 2, 1};
  {
    kb_tensor* out = nullptr;
    kb_status st = kb_conv2d(x.get(), k.get(), strides, 2, KB_PADDING_VALID, KB_CHANNELS_LAST,
                             dilation_fits, 2, &out);
    expect_error(st, out, KB_ERROR_SHAPE, "conv2d", "larger than the padded input", "valid");
  }
}

// core/ops/conv_geom.cpp ConvGeom::resolved: causal padding dilation * (k - 1) overflowed.
TEST(ShapeOverflow, CausalConvDilation) {
  Tensor x = constant<double>(std::vector<double>(5, 1.0), {1, 5, 1});
  Tensor k = constant<double>(std::vector<double>(3, 1.0), {3, 1, 1});
  EXPECT_ERROR(INVALID, "conv1d", "dilated by",
               kb_conv1d(x.get(), k.get(), 1, KB_PADDING_CAUSAL, KB_CHANNELS_LAST, kMax, &out));
  EXPECT_ERROR(INVALID, "conv1d", "dilated by",
               kb_conv1d(x.get(), k.get(), 1, KB_PADDING_CAUSAL, KB_CHANNELS_LAST, k2to62, &out));
}

// core/ops/conv_geom.cpp windowed_size: the padded extent in + pad_before + pad_after is what the
// kernels index up to; a causal window near INT64_MAX made it overflow.
TEST(ShapeOverflow, PaddedExtent) {
  Tensor x = constant<double>(std::vector<double>(5, 1.0), {1, 5, 1});
  Tensor k = constant<double>(std::vector<double>(3, 1.0), {3, 1, 1});
  // (3 - 1) * (2**62 - 1) + 1 = 2**63 - 1 fits; 5 + its causal pad 2**63 - 2 does not.
  EXPECT_ERROR(
      INVALID, "conv1d", "padded by",
      kb_conv1d(x.get(), k.get(), 1, KB_PADDING_CAUSAL, KB_CHANNELS_LAST, k2to62 - 1, &out));
}

// core/api/conv.cpp conv_transpose: its own (k - 1) * dilation + 1 and padded output_shape.
TEST(ShapeOverflow, ConvTransposeDilation) {
  Tensor x = constant<double>(std::vector<double>(25, 1.0), {1, 5, 5, 1});
  Tensor k = constant<double>(std::vector<double>(9, 1.0), {3, 3, 1, 1});
  int64_t output_shape[4] = {1, 5, 5, 1}, strides[2] = {1, 1}, dilation[2] = {kMax, kMax};
  for (kb_padding pad : {KB_PADDING_VALID, KB_PADDING_SAME})
    EXPECT_ERROR(INVALID, "conv2d_transpose", "dilated by 9223372036854775807",
                 kb_conv2d_transpose(x.get(), k.get(), output_shape, 4, strides, 2, pad,
                                     KB_CHANNELS_LAST, dilation, 2, &out));
}

// core/ops/conv_geom.cpp same_padding: ceil(in / s) as (in + s - 1) / s overflowed for strides
// near INT64_MAX and gave wrong pads: TensorFlow's 'same' with a stride past the input is one
// window at 0 padded only after (pad_total = max(k - in, 0)).
TEST(ShapeOverflow, SamePaddingHugeStrides) {
  Tensor x = constant<double>({1, 5}, {1, 2, 1, 1});
  int64_t pool[2] = {2, 1}, strides[2] = {kMax, 1};
  Tensor y = make([&](kb_tensor** o) {
    return kb_pool2d(x.get(), pool, 2, strides, 2, KB_PADDING_SAME, KB_CHANNELS_LAST, KB_POOL_MAX,
                     o);
  });
  EXPECT_EQ(int_shape(y.get()), (Shape{1, 1, 1, 1}));
  EXPECT_EQ(values<double>(eval(y.get()).get()), (std::vector<double>{5}));
  Tensor k = constant<double>({1, 1}, {2, 1, 1, 1});
  int64_t dilation[2] = {1, 1};
  Tensor c = make([&](kb_tensor** o) {
    return kb_conv2d(x.get(), k.get(), strides, 2, KB_PADDING_SAME, KB_CHANNELS_LAST, dilation, 2,
                     o);
  });
  EXPECT_EQ(int_shape(c.get()), (Shape{1, 1, 1, 1}));
  EXPECT_EQ(values<double>(eval(c.get()).get()), (std::vector<double>{6}));
}

// core/kernel_plans/pool_windows.h readers: the first output reading an input cell, ceil(first /
// s), was (first + s - 1) / s, which overflowed for strides near INT64_MAX: pooling's gradient read
// dy before its start and gave cells outside every window a gradient.
TEST(ShapeOverflow, PoolGradientHugeStrides) {
  Tensor x = variable<double>({1, 2, 3}, {1, 3, 1, 1});
  int64_t pool[2] = {1, 1}, strides[2] = {kMax, 1};
  for (kb_pool_mode mode : {KB_POOL_AVG, KB_POOL_MAX}) {
    Tensor y = make([&](kb_tensor** o) {
      return kb_pool2d(x.get(), pool, 2, strides, 2, KB_PADDING_VALID, KB_CHANNELS_LAST, mode, o);
    });
    EXPECT_EQ(int_shape(y.get()), (Shape{1, 1, 1, 1}));
    Tensor g = gradient_of_sum(y.get(), x.get());
    EXPECT_EQ(values<double>(eval(g.get()).get()), (std::vector<double>{1, 0, 0}))
        << "mode " << int(mode);
  }
}

// core/ops/conv_ops.cpp conv_out_dims: output channels = (kernel's channels per group) * groups
// overflowed (a depthwise kernel of 2**32 channels times a multiplier of 2**32 gave 0 channels).
TEST(ShapeOverflow, ConvOutputChannels) {
  int64_t c = int64_t(1) << 32;
  Tensor x = f32_placeholder({1, 1, 1, c});
  Tensor k = f32_placeholder({1, 1, c, c});
  int64_t strides[2] = {1, 1}, dilation[2] = {1, 1};
  EXPECT_ERROR(INVALID, "depthwise_conv2d", "overflows",
               kb_depthwise_conv2d(x.get(), k.get(), strides, 2, KB_PADDING_VALID, KB_CHANNELS_LAST,
                                   dilation, 2, &out));
}

// core/ops/shape_ops.cpp concat_type: the sizes along the axis were added unchecked.
TEST(ShapeOverflow, Concatenate) {
  Tensor a = f32_placeholder({kMax, 2});
  Tensor b = f32_placeholder({1, 2});
  kb_tensor* xs[2] = {a.get(), b.get()};
  EXPECT_ERROR(INVALID, "concatenate", "INT64_MAX", kb_concatenate(xs, 2, 0, &out));
  Tensor c = f32_placeholder({kMax - 1, 2});
  kb_tensor* fits[2] = {c.get(), b.get()};
  Tensor y = make([&](kb_tensor** o) { return kb_concatenate(fits, 2, 0, o); });
  EXPECT_EQ(int_shape(y.get()), (Shape{kMax, 2}));
}

// core/api/sparse.cpp sparse_concatenate: the same sum for sparse tensors' static dense shapes.
TEST(ShapeOverflow, SparseConcatenate) {
  Shape da{kMax, 2}, db{1, 2};
  kb_tensor *a = nullptr, *b = nullptr;
  KB_ASSERT_OK(kb_placeholder(da.data(), 2, 2, KB_FLOAT32, 1, "a", &a));
  KB_ASSERT_OK(kb_placeholder(db.data(), 2, 2, KB_FLOAT32, 1, "b", &b));
  Tensor ta = Tensor::adopt(a), tb = Tensor::adopt(b);
  kb_tensor* xs[2] = {a, b};
  EXPECT_ERROR(INVALID, "concatenate", "INT64_MAX", kb_concatenate(xs, 2, 0, &out));
}

// core/graph/shape.{h,cpp} numel and contiguous_strides, core/ops/shape_ops.cpp infer_reshape: a
// 0 made the element count 0 while the other axes' strides overflowed; as NumPy ("array is too
// big"), the nonzero dims must fit too.
TEST(ShapeOverflow, EmptyTensorsWithHugeDims) {
  Shape d{0, k2to62, k2to62};
  EXPECT_ERROR(INVALID, "zeros", "too many elements",
               kb_zeros(d.data(), 3, KB_FLOAT32, nullptr, &out));
  EXPECT_ERROR(INVALID, "tensor_from_data", "too many elements",
               kb_tensor_from_data(nullptr, KB_FLOAT32, d.data(), 3, &out));
  Shape e{kMax, 0, kMax};
  EXPECT_ERROR(INVALID, "ones", "too many elements",
               kb_ones(e.data(), 3, KB_FLOAT32, nullptr, &out));
  Tensor empty = constant_f32({}, {0});
  EXPECT_ERROR(INVALID, "reshape", "too many elements", kb_reshape(empty.get(), d.data(), 3, &out));
  // Empty shapes whose other dims fit are fine.
  Shape fine{0, 3, int64_t(1) << 40};
  Tensor z = make([&](kb_tensor** o) { return kb_zeros(fine.data(), 3, KB_FLOAT32, nullptr, o); });
  EXPECT_EQ(int_shape(z.get()), fine);
  Tensor r = make([&](kb_tensor** o) { return kb_reshape(empty.get(), fine.data(), 3, o); });
  EXPECT_EQ(int_shape(r.get()), fine);
  Tensor t = make([&](kb_tensor** o) {
    int64_t perm[3] = {2, 0, 1};
    return kb_permute_dimensions(z.get(), perm, 3, o);
  });
  EXPECT_TRUE(values_f32(eval(t.get())).empty());
}

// core/api/shape.cpp batch_flatten: the product of the non-batch dims wrapped (to 0 for
// (None, 2**62, 4), giving a (None, 0) result).
TEST(ShapeOverflow, BatchFlatten) {
  Tensor x = f32_placeholder({-1, k2to62, 4});
  EXPECT_ERROR(INVALID, "batch_flatten", "INT64_MAX", kb_batch_flatten(x.get(), &out));
}

// core/api/local_conv.cpp: (output positions - 1) * stride + kernel_size, kernel_size * channels,
// rows * cols and kh * kw * channels were unchecked.
TEST(ShapeOverflow, LocalConv) {
  Tensor x1 = constant_f32(iota_f32(5), {1, 5, 1});
  Tensor k1 = constant_f32({1, 1}, {2, 1, 1});  // 2 output positions, 1 feature, 1 filter
  int64_t ks1 = 1, st1 = kMax;
  EXPECT_ERROR(INVALID, "local_conv1d", "INT64_MAX",
               kb_local_conv1d(x1.get(), k1.get(), &ks1, 1, &st1, 1, KB_CHANNELS_LAST, &out));
  Tensor x2 = constant_f32({1, 2}, {1, 1, 2});  // 2 channels
  Tensor k2 = constant_f32({1, 1}, {1, 2, 1});
  int64_t ks2 = kMax / 2 + 1, st2 = 1;  // kernel_size * 2 channels wraps to INT64_MIN
  EXPECT_ERROR(INVALID, "local_conv1d", "overflows",
               kb_local_conv1d(x2.get(), k2.get(), &ks2, 1, &st2, 1, KB_CHANNELS_LAST, &out));
  // rows * cols = 2**64 wrapped to 0, matching a kernel of 0 output positions.
  Tensor x3 = f32_placeholder({1, -1, -1, 1});
  Tensor k3 = constant_f32({}, {0, 1, 1});
  int64_t ks3[2] = {1, 1}, st3[2] = {1, 1}, rows_cols[2] = {int64_t(1) << 32, int64_t(1) << 32};
  EXPECT_ERROR(
      INVALID, "local_conv2d", "INT64_MAX",
      kb_local_conv2d(x3.get(), k3.get(), ks3, 2, st3, 2, rows_cols, 2, KB_CHANNELS_LAST, &out));
  int64_t ks4[2] = {int64_t(1) << 32, int64_t(1) << 32}, one[2] = {1, 1};
  EXPECT_ERROR(INVALID, "local_conv2d", "INT64_MAX",
               kb_local_conv2d(x3.get(), k3.get(), ks4, 2, st3, 2, one, 2, KB_CHANNELS_LAST, &out));
}

// core/api/normalization.cpp normalize_batch_in_training (broadcast path): the number of
// positions outside the reduction axes wrapped (to 0, and a gamma of 4 values was then reported
// as not matching 0 positions).
TEST(ShapeOverflow, NormalizeBatchKeptPositions) {
  Tensor x = f32_placeholder({-1, k2to62, 4});
  Tensor gamma = constant_f32({1, 1, 1, 1}, {4});
  int64_t axes[1] = {0};
  kb_tensor *normed = nullptr, *mean = nullptr, *var = nullptr;
  kb_status st = kb_normalize_batch_in_training(x.get(), gamma.get(), nullptr, axes, 1, 1e-3,
                                                &normed, &mean, &var);
  expect_error(st, normed, INVALID, "normalize_batch_in_training", "INT64_MAX",
               "normalize_batch_in_training");
  EXPECT_EQ(mean, nullptr);
  EXPECT_EQ(var, nullptr);
}
