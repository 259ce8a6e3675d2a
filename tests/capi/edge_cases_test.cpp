// Edge cases that tend to crash a library rather than fail cleanly: overflowing sizes, scalars
// where a rank is needed, unknown ranks mixed with known ones, out-of-range indices found only at
// run time, and Keras quirks that look like errors but are not.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "capi/helpers.h"

using namespace kbt;

namespace {

// Expects a failure with `want` and a message starting with "prefix: ", and no handle written.
void expect_fail(kb_status got, kb_tensor* out, kb_status want, const std::string& prefix,
                 const char* what) {
  std::string msg = kb_last_error_message();
  EXPECT_EQ(got, want) << what << "\n  message: " << msg;
  EXPECT_TRUE(starts_with(msg, prefix + ": ")) << what << "\n  message: " << msg;
  EXPECT_EQ(out, nullptr) << what;
  if (out) kb_tensor_release(out);
  kb_clear_error();
}

#define EXPECT_FAIL(want, prefix, expr)         \
  do {                                          \
    kb_tensor* out = nullptr;                   \
    kb_status st_ = (expr);                     \
    expect_fail(st_, out, want, prefix, #expr); \
  } while (0)

// Either building fails with an invalid-argument error from `prefix`, or building succeeds and
// computing the value fails cleanly (invalid argument or out of memory) in eval.
void expect_build_or_eval_fails(kb_status got, kb_tensor* out, const std::string& prefix,
                                const char* what) {
  if (got != KB_OK) {
    expect_fail(got, out, KB_ERROR_INVALID_ARGUMENT, prefix, what);
    return;
  }
  Tensor built = Tensor::adopt(out);
  kb_tensor* value = nullptr;
  kb_status st = kb_eval(built.get(), &value);
  std::string msg = kb_last_error_message();
  EXPECT_TRUE(st == KB_ERROR_INVALID_ARGUMENT || st == KB_ERROR_OUT_OF_MEMORY)
      << what << ": eval returned " << int(st) << "\n  message: " << msg;
  EXPECT_TRUE(starts_with(msg, "eval: ")) << what << "\n  message: " << msg;
  EXPECT_EQ(value, nullptr);
  if (value) kb_tensor_release(value);
  kb_clear_error();
}

#define EXPECT_BUILD_OR_EVAL_FAILS(prefix, expr)         \
  do {                                                   \
    kb_tensor* out = nullptr;                            \
    kb_status st_ = (expr);                              \
    expect_build_or_eval_fails(st_, out, prefix, #expr); \
  } while (0)

constexpr int64_t kHuge = int64_t(1) << 40;
constexpr kb_status INVALID = KB_ERROR_INVALID_ARGUMENT;
constexpr kb_status SHAPE = KB_ERROR_SHAPE;

}  // namespace

TEST(EdgeCases, OverflowingSizes) {
  int64_t huge2[2] = {kHuge, kHuge};
  int64_t huge3[3] = {kHuge, kHuge, kHuge};
  float one = 1;
  int64_t scalar_shape[1] = {1};
  // Sizes whose element count overflows int64 must be rejected, not wrap around.
  EXPECT_FAIL(INVALID, "zeros", kb_zeros(huge3, 3, KB_FLOAT32, nullptr, &out));
  EXPECT_FAIL(INVALID, "ones", kb_ones(huge3, 3, KB_FLOAT32, nullptr, &out));
  EXPECT_FAIL(INVALID, "placeholder", kb_placeholder(nullptr, 0, kHuge, KB_FLOAT32, 0, "p", &out));
  EXPECT_FAIL(INVALID, "constant",
              kb_constant(&one, KB_FLOAT32, scalar_shape, 1, KB_FLOAT32, huge3, 3, nullptr, &out));
  EXPECT_FAIL(INVALID, "random_uniform_variable",
              kb_random_uniform_variable(huge3, 3, 0, 1, KB_FLOAT32, nullptr, nullptr, &out));
  EXPECT_FAIL(INVALID, "eye", kb_eye(int64_t(1) << 33, KB_FLOAT32, nullptr, &out));
  Tensor m = constant_f32({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_FAIL(INVALID, "reshape", kb_reshape(m.get(), huge3, 3, &out));
  EXPECT_BUILD_OR_EVAL_FAILS("tile", kb_tile(m.get(), huge2, 2, &out));
  int64_t max_then_one[2] = {std::numeric_limits<int64_t>::max(), 1};
  EXPECT_BUILD_OR_EVAL_FAILS("tile", kb_tile(m.get(), max_then_one, 2, &out));
  EXPECT_BUILD_OR_EVAL_FAILS("repeat",
                             kb_repeat(m.get(), std::numeric_limits<int64_t>::max(), &out));
  EXPECT_BUILD_OR_EVAL_FAILS(
      "repeat_elements", kb_repeat_elements(m.get(), std::numeric_limits<int64_t>::max(), 1, &out));
  Tensor idx = constant<int32_t>({0, 1}, {2});
  EXPECT_BUILD_OR_EVAL_FAILS("one_hot",
                             kb_one_hot(idx.get(), std::numeric_limits<int64_t>::max(), &out));
}

TEST(EdgeCases, NonFiniteArange) {
  double nan = std::nan("");
  double inf = INFINITY;
  double one = 1;
  EXPECT_FAIL(INVALID, "arange", kb_arange(0, &nan, 1, KB_FLOAT32, &out));
  EXPECT_FAIL(INVALID, "arange", kb_arange(0, &inf, 1, KB_FLOAT32, &out));
  EXPECT_FAIL(INVALID, "arange", kb_arange(nan, &one, 1, KB_FLOAT32, &out));
  EXPECT_FAIL(INVALID, "arange", kb_arange(0, &one, nan, KB_FLOAT32, &out));
  EXPECT_FAIL(INVALID, "arange", kb_arange(0, &one, 1e-300, KB_FLOAT32, &out));
  // The ordinary forms work.
  double stop = 5;
  Tensor a = make([&](kb_tensor** o) { return kb_arange(1, &stop, 2, KB_DTYPE_DEFAULT, o); });
  EXPECT_EQ(dtype_of(a.get()), KB_INT32);
  EXPECT_EQ(values<int32_t>(a.get()), (std::vector<int32_t>{1, 3}));
  Tensor b = make([&](kb_tensor** o) { return kb_arange(3, nullptr, 1, KB_INT64, o); });
  EXPECT_EQ(values<int64_t>(b.get()), (std::vector<int64_t>{0, 1, 2}));
}

TEST(EdgeCases, ScalarsWhereARankIsNeeded) {
  Tensor s = scalar_f32(1);
  Tensor b3 = constant_f32({1, 2, 3}, {3});
  EXPECT_FAIL(SHAPE, "bias_add", kb_bias_add(s.get(), b3.get(), KB_CHANNELS_LAST, &out));
  EXPECT_FAIL(SHAPE, "bias_add", kb_bias_add(s.get(), b3.get(), KB_CHANNELS_FIRST, &out));
  EXPECT_FAIL(SHAPE, "bias_add", kb_bias_add(b3.get(), b3.get(), KB_CHANNELS_LAST, &out));
  // Normalizing over axis -1 of a scalar is a bad axis, as in TensorFlow's reduce_sum.
  EXPECT_FAIL(INVALID, "categorical_crossentropy",
              kb_categorical_crossentropy(s.get(), s.get(), 0, -1, &out));
  EXPECT_FAIL(SHAPE, "categorical_crossentropy",
              kb_categorical_crossentropy(s.get(), s.get(), 1, -1, &out));
  EXPECT_FAIL(SHAPE, "sparse_categorical_crossentropy",
              kb_sparse_categorical_crossentropy(s.get(), s.get(), 0, -1, &out));
}

TEST(EdgeCases, UnknownRanksMixedWithKnown) {
  Tensor m = constant_f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor unk =
      make([](kb_tensor** o) { return kb_placeholder(nullptr, 0, -1, KB_FLOAT32, 0, "unk", o); });
  kb_tensor* known_then_unknown[2] = {m.get(), unk.get()};
  EXPECT_FAIL(SHAPE, "concatenate", kb_concatenate(known_then_unknown, 2, 0, &out));
  EXPECT_FAIL(SHAPE, "stack", kb_stack(known_then_unknown, 2, 0, &out));
  EXPECT_FAIL(SHAPE, "dot", kb_dot(m.get(), unk.get(), &out));
  EXPECT_FAIL(SHAPE, "batch_dot", kb_batch_dot(m.get(), unk.get(), nullptr, &out));
  int64_t perm[2] = {1, 0};
  EXPECT_FAIL(SHAPE, "permute_dimensions", kb_permute_dimensions(unk.get(), perm, 2, &out));
  int64_t n[2] = {1, 2};
  EXPECT_FAIL(SHAPE, "tile", kb_tile(unk.get(), n, 2, &out));
  EXPECT_FAIL(SHAPE, "bias_add", kb_bias_add(unk.get(), m.get(), KB_CHANNELS_LAST, &out));
  EXPECT_FAIL(SHAPE, "softmax", kb_softmax(unk.get(), -1, &out));
}

TEST(EdgeCases, BatchDotShapes) {
  // Keras 2.2.4 does not validate batch_dot's axes (it only picks matmul adjoints from them), so
  // only the resulting shape mismatch is an error.
  Tensor x = constant_f32(std::vector<float>(24, 1), {2, 3, 4});
  Tensor y = constant_f32(std::vector<float>(24, 1), {2, 4, 3});
  // Mismatched contracted dimensions are a shape error.
  int64_t axes_11[2] = {1, 1};
  EXPECT_FAIL(SHAPE, "batch_dot", kb_batch_dot(x.get(), y.get(), axes_11, &out));
  // The default axes work: (2,3,4) . (2,4,3) -> (2,3,3) of 4s.
  Tensor r = make([&](kb_tensor** o) { return kb_batch_dot(x.get(), y.get(), nullptr, o); });
  EXPECT_EQ(int_shape(r.get()), (Shape{2, 3, 3}));
  expect_near(values_f32(eval(r.get())), std::vector<float>(18, 4));
}

TEST(EdgeCases, OutOfRangeIndicesAtRunTime) {
  Tensor m = constant_f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor idx = constant<int32_t>({0, 5}, {2});
  Tensor neg = constant<int64_t>({-1}, {1});
  Tensor g = make([&](kb_tensor** o) { return kb_gather(m.get(), idx.get(), o); });
  EXPECT_FAIL(INVALID, "eval", kb_eval(g.get(), &out));
  Tensor gn = make([&](kb_tensor** o) { return kb_gather(m.get(), neg.get(), o); });
  EXPECT_FAIL(INVALID, "eval", kb_eval(gn.get(), &out));
  Tensor t = constant<int32_t>({1, 3}, {2});
  Tensor k = make([&](kb_tensor** o) { return kb_in_top_k(m.get(), t.get(), 1, o); });
  EXPECT_FAIL(INVALID, "eval", kb_eval(k.get(), &out));

  // The same through a compiled function, where the indices are fed.
  Tensor p = placeholder({-1}, KB_INT32, "indices");
  Tensor gp = make([&](kb_tensor** o) { return kb_gather(m.get(), p.get(), o); });
  Function f = function({p.get()}, {gp.get()});
  kb_tensor_list* l = nullptr;
  kb_tensor* bad[1] = {idx.get()};
  EXPECT_EQ(kb_function_call(f.get(), bad, 1, &l), INVALID);
  EXPECT_TRUE(starts_with(kb_last_error_message(), "function: ")) << kb_last_error_message();
  EXPECT_EQ(l, nullptr);
  kb_clear_error();
  Tensor good = constant<int32_t>({1, 0, 1}, {3});
  expect_near(out_f32(call(f, {good.get()}), 0), {4, 5, 6, 1, 2, 3, 4, 5, 6});
}

TEST(EdgeCases, TooManyDimensions) {
  std::vector<int64_t> dims(100, 1);
  float one = 1;
  EXPECT_FAIL(INVALID, "tensor_from_data",
              kb_tensor_from_data(&one, KB_FLOAT32, dims.data(), dims.size(), &out));
  EXPECT_FAIL(INVALID, "placeholder",
              kb_placeholder(dims.data(), dims.size(), 100, KB_FLOAT32, 0, "p", &out));
  EXPECT_FAIL(INVALID, "placeholder", kb_placeholder(nullptr, 0, 100, KB_FLOAT32, 0, "p", &out));
}

TEST(EdgeCases, KerasQuirksThatAreNotErrors) {
  // flatten of a scalar is a vector of one element (tf.reshape(x, [-1])).
  Tensor one = scalar_f32(7);
  Tensor flat = un(kb_flatten, one.get());
  EXPECT_EQ(int_shape(flat.get()), (Shape{1}));
  // concatenate takes a negative axis modulo the rank (Keras: axis %= rank).
  Tensor a = constant_f32({1, 2, 3, 4}, {2, 2});
  Tensor b = constant_f32({5, 6}, {2, 1});
  kb_tensor* ab[2] = {a.get(), b.get()};
  Tensor c = make([&](kb_tensor** o) { return kb_concatenate(ab, 2, -3, o); });
  EXPECT_EQ(int_shape(c.get()), (Shape{2, 3}));
  expect_near(values_f32(eval(c.get())), {1, 2, 5, 3, 4, 6});
  // sqrt of a negative number is 0 (Keras clips first).
  Tensor n = constant_f32({-4, 9}, {2});
  expect_near(values_f32(eval(un(kb_sqrt, n.get()).get())), {0, 3});
  // clip with max < min clips to min.
  Tensor cl = make([&](kb_tensor** o) { return kb_clip(n.get(), 1, 0, o); });
  expect_near(values_f32(eval(cl.get())), {1, 1});
  // An empty axis list reduces nothing.
  int64_t dummy = 0;
  Tensor s = make([&](kb_tensor** o) { return kb_sum(a.get(), &dummy, 0, 0, o); });
  EXPECT_EQ(int_shape(s.get()), (Shape{2, 2}));
}

TEST(EdgeCases, ZeroSizedTensors) {
  int64_t shape03[2] = {0, 3};
  Tensor z = make([&](kb_tensor** o) { return kb_zeros(shape03, 2, KB_FLOAT32, nullptr, o); });
  EXPECT_EQ(int_shape(z.get()), (Shape{0, 3}));
  Tensor m = constant_f32({1, 2, 3, 4, 5, 6}, {2, 3});
  kb_tensor* zm[2] = {z.get(), m.get()};
  Tensor c = make([&](kb_tensor** o) { return kb_concatenate(zm, 2, 0, o); });
  expect_near(values_f32(eval(c.get())), {1, 2, 3, 4, 5, 6});
  int64_t axis0 = 0;
  Tensor s = make([&](kb_tensor** o) { return kb_sum(z.get(), &axis0, 1, 0, o); });
  expect_near(values_f32(eval(s.get())), {0, 0, 0});
  Tensor sm = make([&](kb_tensor** o) { return kb_softmax(z.get(), -1, o); });
  EXPECT_EQ(values_f32(eval(sm.get())).size(), 0u);
  int64_t shape30[2] = {3, 0};
  Tensor r = make([&](kb_tensor** o) { return kb_reshape(z.get(), shape30, 2, o); });
  EXPECT_EQ(values_f32(eval(r.get())).size(), 0u);
  Tensor t = un(kb_transpose, z.get());
  EXPECT_EQ(int_shape(t.get()), (Shape{3, 0}));
  EXPECT_EQ(values_f32(eval(t.get())).size(), 0u);
  Tensor w = constant_f32(std::vector<float>(12, 1), {3, 4});
  Tensor d = bin(kb_dot, z.get(), w.get());
  EXPECT_EQ(int_shape(d.get()), (Shape{0, 4}));
  EXPECT_EQ(values_f32(eval(d.get())).size(), 0u);
  Tensor idx = constant<int32_t>({}, {0});
  Tensor g = make([&](kb_tensor** o) { return kb_gather(m.get(), idx.get(), o); });
  EXPECT_EQ(int_shape(g.get()), (Shape{0, 3}));
  EXPECT_EQ(values_f32(eval(g.get())).size(), 0u);
  // A placeholder fed zero rows.
  Tensor p = placeholder({-1, 3}, KB_FLOAT32, "rows");
  Tensor ps = make([&](kb_tensor** o) { return kb_sum(p.get(), &axis0, 1, 0, o); });
  Function f = function({p.get()}, {ps.get()});
  std::vector<float> empty;
  Tensor in = constant_f32(empty, {0, 3});
  expect_near(out_f32(call(f, {in.get()}), 0), {0, 0, 0});
}
