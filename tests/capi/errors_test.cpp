// Bad input for every entry point of include/kbackend.h. Each case must return the expected
// status, set a message that starts with the Keras function's name and a colon, leave its
// out-parameter untouched, and kb_clear_error must clear the error afterwards.
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "capi/helpers.h"

using namespace kbt;

namespace {

struct Case {
  std::string label;
  kb_status want;
  std::string prefix;  // the Keras function's name
  std::function<kb_status(bool& untouched)> run;
};

// Out-parameter sentinels: never valid values, never dereferenced by a correct library.
kb_tensor* const kT = reinterpret_cast<kb_tensor*>(uintptr_t(0x5a5a5a50));
kb_tensor_list* const kL = reinterpret_cast<kb_tensor_list*>(uintptr_t(0x5a5a5a60));
kb_compiled_function* const kF = reinterpret_cast<kb_compiled_function*>(uintptr_t(0x5a5a5a70));
const char* const kS = reinterpret_cast<const char*>(uintptr_t(0x5a5a5a80));
constexpr int64_t kI64 = -987654321;
constexpr int32_t kI32 = -98765;
constexpr uint64_t kU64 = 0xdeadbeefcafeULL;
constexpr size_t kSz = 987654321u;
// No case needs it yet (kb_epsilon, the one double out-parameter, fails only on a null out), and
// clang warns about an unused constant.
[[maybe_unused]] constexpr double kDbl = -12345.5;
constexpr int32_t kEnumSentinel = 77;

// Releases a handle that a buggy library wrote into an out-parameter despite failing.
inline void discard(kb_tensor* t) {
  if (t != kT) kb_tensor_release(t);
}
inline void discard(kb_tensor_list* l) {
  if (l != kL) kb_tensor_list_release(l);
}
inline void discard(kb_compiled_function* f) {
  if (f != kF) kb_function_release(f);
}
template <class T>
void discard(T) {}

}  // namespace

// A case whose out-parameter `out` (of type T, initialized to `sentinel`) must stay untouched.
#define CASE_OUT(T, sentinel, want, prefix, expr)                 \
  Case {                                                          \
#expr, want, prefix, [&](bool& untouched) {                     \
      T out = sentinel;                                             \
      kb_status s = (expr);                                         \
      untouched = out == sentinel;                                  \
      if (!untouched) discard(out);                                 \
      return s;                                                     \
    } \
  }
#define CASE_T(want, prefix, expr) CASE_OUT(kb_tensor*, kT, want, prefix, expr)
#define CASE_L(want, prefix, expr) CASE_OUT(kb_tensor_list*, kL, want, prefix, expr)
#define CASE_F(want, prefix, expr) CASE_OUT(kb_compiled_function*, kF, want, prefix, expr)
#define CASE_S(want, prefix, expr) CASE_OUT(const char*, kS, want, prefix, expr)
#define CASE_I64(want, prefix, expr) CASE_OUT(int64_t, kI64, want, prefix, expr)
#define CASE_I32(want, prefix, expr) CASE_OUT(int32_t, kI32, want, prefix, expr)
#define CASE_U64(want, prefix, expr) CASE_OUT(uint64_t, kU64, want, prefix, expr)
#define CASE_SZ(want, prefix, expr) CASE_OUT(size_t, kSz, want, prefix, expr)
#define CASE_DBL(want, prefix, expr) CASE_OUT(double, kDbl, want, prefix, expr)
// An enum out-parameter: its sentinel bytes are an out-of-range value, compared as bytes (loading
// such a value as the enum type would itself be undefined behaviour in C++).
#define CASE_ENUM(E, want, prefix, expr)                             \
  Case {                                                             \
#expr, want, prefix, [&](bool& untouched) {                        \
      static_assert(sizeof(E) == sizeof(int32_t));                     \
      E out;                                                           \
      std::memcpy(&out, &kEnumSentinel, sizeof out);                   \
      kb_status s = (expr);                                            \
      untouched = std::memcmp(&out, &kEnumSentinel, sizeof out) == 0;  \
      return s;                                                        \
    } \
  }
#define CASE_DT(want, prefix, expr) CASE_ENUM(kb_data_type, want, prefix, expr)
#define CASE_DF(want, prefix, expr) CASE_ENUM(kb_data_format, want, prefix, expr)
#define CASE_DO(want, prefix, expr) CASE_ENUM(kb_dim_ordering, want, prefix, expr)
// No out-parameter.
#define CASE_0(want, prefix, expr)                         \
  Case {                                                   \
#expr, want, prefix, [&](bool& untouched) {              \
      untouched = true;                                      \
      return (expr);                                         \
    } \
  }

namespace {

constexpr kb_status INVALID = KB_ERROR_INVALID_ARGUMENT;
constexpr kb_status SHAPE = KB_ERROR_SHAPE;
constexpr kb_status DTYPE = KB_ERROR_DTYPE;
constexpr kb_status NOTIMPL = KB_ERROR_NOT_IMPLEMENTED;
constexpr kb_data_type BAD_DT = kb_data_type(42);
constexpr kb_data_format BAD_DF = kb_data_format(7);

void run_cases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    kb_clear_error();
    bool untouched = false;
    kb_status s = c.run(untouched);
    std::string msg = kb_last_error_message();
    EXPECT_EQ(s, c.want) << c.label << "\n  message: " << msg;
    EXPECT_TRUE(starts_with(msg, c.prefix + ": "))
        << c.label << "\n  message: '" << msg << "' does not start with '" << c.prefix << ": '";
    EXPECT_GT(msg.size(), c.prefix.size() + 2) << c.label;
    EXPECT_TRUE(untouched) << c.label << ": the out-parameter was written";
    EXPECT_EQ(kb_last_error_code(), s) << c.label;
    kb_clear_error();
    EXPECT_EQ(kb_last_error_code(), KB_OK) << c.label;
    EXPECT_STREQ(kb_last_error_message(), "") << c.label;
  }
}

// Tensors shared by the cases.
struct Fx {
  Tensor v3 = constant_f32({1, 2, 3}, {3});
  Tensor v4 = constant_f32({1, 2, 3, 4}, {4});
  Tensor m23 = constant_f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor m34 = constant_f32(std::vector<float>(12, 0.5f), {3, 4});
  Tensor m22 = constant_f32({1, 2, 3, 4}, {2, 2});
  Tensor t234 = constant_f32(std::vector<float>(24, 1.0f), {2, 3, 4});
  Tensor s = scalar_f32(2);
  Tensor d3 = constant<double>({1, 2, 3}, {3});
  Tensor i3 = constant<int32_t>({0, 1, 2}, {3});
  Tensor i23 = constant<int32_t>({0, 1, 2, 0, 1, 2}, {2, 3});
  Tensor b3 = constant<bool>({true, false, true}, {3});
  Tensor var = variable_f32({1, 2, 3, 4, 5, 6}, {2, 3}, "var");
  Tensor ivar = variable<int32_t>({1, 2, 3}, {3}, "ivar");
  Tensor ph = placeholder({-1, 3}, KB_FLOAT32, "ph");
  Tensor unk =
      make([](kb_tensor** o) { return kb_placeholder(nullptr, 0, -1, KB_FLOAT32, 0, "unk", o); });
  std::vector<float> data = {1, 2, 3, 4, 5, 6};
  int64_t shape23[2] = {2, 3};
  int64_t shape_neg[2] = {2, -3};
  int64_t axes_bad[1] = {5};
  int64_t axes_dup[2] = {1, -1};
  int64_t axis0[1] = {0};
};

}  // namespace

TEST(Errors, LibraryAndHandles) {
  EXPECT_EQ(kb_abi_version(), KB_ABI_VERSION);
  ASSERT_NE(kb_version(), nullptr);
  EXPECT_GT(std::string(kb_version()).size(), 0u);
  kb_tensor_release(nullptr);
  kb_tensor_list_release(nullptr);
  kb_function_release(nullptr);
  kb_tensor_retain(nullptr);
  EXPECT_EQ(kb_tensor_list_size(nullptr), 0u);

  // kb_set_error for callbacks.
  kb_set_error(KB_ERROR_SHAPE, "my_callback: boom");
  EXPECT_EQ(kb_last_error_code(), KB_ERROR_SHAPE);
  EXPECT_STREQ(kb_last_error_message(), "my_callback: boom");
  kb_clear_error();
  EXPECT_EQ(kb_last_error_code(), KB_OK);
  EXPECT_STREQ(kb_last_error_message(), "");
  kb_set_error(KB_ERROR_INTERNAL, nullptr);
  EXPECT_EQ(kb_last_error_code(), KB_ERROR_INTERNAL);
  EXPECT_STREQ(kb_last_error_message(), "");
  kb_clear_error();

  // A successful call clears an earlier error.
  kb_tensor* out = nullptr;
  EXPECT_EQ(kb_square(nullptr, &out), KB_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(kb_last_error_code(), KB_OK);
  Tensor x = scalar_f32(3);
  KB_ASSERT_OK(kb_square(x.get(), &out));
  Tensor sq = Tensor::adopt(out);
  EXPECT_EQ(kb_last_error_code(), KB_OK);
  EXPECT_STREQ(kb_last_error_message(), "");

  // retain/release: a retained handle survives one release.
  kb_tensor_retain(x.get());
  kb_tensor_release(x.get());
  expect_near(values_f32(x.get()), {3});
}

TEST(Errors, ErrorStateIsThreadLocal) {
  kb_tensor* out = nullptr;
  EXPECT_EQ(kb_square(nullptr, &out), KB_ERROR_INVALID_ARGUMENT);
  kb_status other = KB_ERROR_INTERNAL;
  std::string other_msg = "unset";
  std::thread t([&] {
    other = kb_last_error_code();
    other_msg = kb_last_error_message();
  });
  t.join();
  EXPECT_EQ(other, KB_OK);
  EXPECT_EQ(other_msg, "");
  EXPECT_EQ(kb_last_error_code(), KB_ERROR_INVALID_ARGUMENT);
  kb_clear_error();
}

TEST(Errors, LibraryErrorsAndData) {
  Fx fx;
  ConfigGuard restore;
  std::vector<float> dst(6);
  std::vector<Case> cases = {
      // parse helpers
      CASE_DT(INVALID, "parse_dtype", kb_parse_dtype(nullptr, &out)),
      CASE_DT(INVALID, "parse_dtype", kb_parse_dtype("float128", &out)),
      CASE_DT(INVALID, "parse_dtype", kb_parse_dtype("", &out)),
      CASE_0(INVALID, "parse_dtype", kb_parse_dtype("float32", nullptr)),
      CASE_DF(INVALID, "parse_data_format", kb_parse_data_format(nullptr, &out)),
      CASE_DF(INVALID, "parse_data_format", kb_parse_data_format("channels_middle", &out)),
      CASE_0(INVALID, "parse_data_format", kb_parse_data_format("channels_last", nullptr)),
      // tensor_from_data
      CASE_T(INVALID, "tensor_from_data",
             kb_tensor_from_data(nullptr, KB_FLOAT32, fx.shape23, 2, &out)),
      CASE_T(INVALID, "tensor_from_data",
             kb_tensor_from_data(fx.data.data(), KB_FLOAT32, nullptr, 2, &out)),
      CASE_T(INVALID, "tensor_from_data",
             kb_tensor_from_data(fx.data.data(), BAD_DT, fx.shape23, 2, &out)),
      CASE_T(INVALID, "tensor_from_data",
             kb_tensor_from_data(fx.data.data(), KB_DTYPE_DEFAULT, fx.shape23, 2, &out)),
      CASE_T(INVALID, "tensor_from_data",
             kb_tensor_from_data(fx.data.data(), KB_FLOAT32, fx.shape_neg, 2, &out)),
      CASE_0(INVALID, "tensor_from_data",
             kb_tensor_from_data(fx.data.data(), KB_FLOAT32, fx.shape23, 2, nullptr)),
      // tensor_copy_to
      CASE_0(INVALID, "tensor_copy_to", kb_tensor_copy_to(nullptr, dst.data(), 24)),
      CASE_0(INVALID, "tensor_copy_to", kb_tensor_copy_to(fx.m23.get(), nullptr, 24)),
      CASE_0(INVALID, "tensor_copy_to", kb_tensor_copy_to(fx.m23.get(), dst.data(), 20)),
      CASE_0(INVALID, "tensor_copy_to", kb_tensor_copy_to(fx.m23.get(), dst.data(), 28)),
      CASE_0(INVALID, "tensor_copy_to", kb_tensor_copy_to(fx.ph.get(), dst.data(), 24)),
      // tensor_nbytes / name / id / flags
      CASE_SZ(INVALID, "tensor_nbytes", kb_tensor_nbytes(nullptr, &out)),
      CASE_0(INVALID, "tensor_nbytes", kb_tensor_nbytes(fx.m23.get(), nullptr)),
      CASE_SZ(SHAPE, "tensor_nbytes", kb_tensor_nbytes(fx.ph.get(), &out)),
      CASE_SZ(SHAPE, "tensor_nbytes", kb_tensor_nbytes(fx.unk.get(), &out)),
      CASE_S(INVALID, "tensor_name", kb_tensor_name(nullptr, &out)),
      CASE_0(INVALID, "tensor_name", kb_tensor_name(fx.m23.get(), nullptr)),
      CASE_U64(INVALID, "tensor_id", kb_tensor_id(nullptr, &out)),
      CASE_0(INVALID, "tensor_id", kb_tensor_id(fx.m23.get(), nullptr)),
      CASE_0(INVALID, "tensor_set_keras_tensor", kb_tensor_set_keras_tensor(nullptr, 1)),
      CASE_I32(INVALID, "tensor_uses_learning_phase", kb_tensor_uses_learning_phase(nullptr, &out)),
      CASE_0(INVALID, "tensor_uses_learning_phase",
             kb_tensor_uses_learning_phase(fx.m23.get(), nullptr)),
      // lists
      CASE_T(INVALID, "tensor_list_get", kb_tensor_list_get(nullptr, 0, &out)),
  };
  run_cases(cases);
  EXPECT_EQ(dst, std::vector<float>(6, 0.0f));  // copy_to wrote nothing

  // tensor_list_get on a real list.
  kb_tensor* vs[] = {fx.m23.get()};
  kb_tensor_list* raw = nullptr;
  KB_ASSERT_OK(kb_batch_get_value(vs, 1, &raw));
  List l(raw);
  run_cases({
      CASE_T(INVALID, "tensor_list_get", kb_tensor_list_get(l.get(), 1, &out)),
      CASE_T(INVALID, "tensor_list_get", kb_tensor_list_get(l.get(), size_t(-1), &out)),
      CASE_0(INVALID, "tensor_list_get", kb_tensor_list_get(l.get(), 0, nullptr)),
  });
}

TEST(Errors, Config) {
  ConfigGuard restore;
  std::vector<float> dst(3);
  std::vector<int32_t> src = {1, 2, 3};
  run_cases({
      CASE_0(INVALID, "epsilon", kb_epsilon(nullptr)),
      CASE_0(INVALID, "floatx", kb_floatx(nullptr)),
      CASE_0(INVALID, "set_floatx", kb_set_floatx(KB_INT32)),
      CASE_0(INVALID, "set_floatx", kb_set_floatx(BAD_DT)),
      CASE_0(INVALID, "set_floatx", kb_set_floatx(KB_DTYPE_DEFAULT)),
      CASE_0(INVALID, "cast_to_floatx", kb_cast_to_floatx(nullptr, KB_INT32, 3, dst.data())),
      CASE_0(INVALID, "cast_to_floatx", kb_cast_to_floatx(src.data(), KB_INT32, 3, nullptr)),
      CASE_0(INVALID, "cast_to_floatx", kb_cast_to_floatx(src.data(), BAD_DT, 3, dst.data())),
      CASE_0(INVALID, "image_data_format", kb_image_data_format(nullptr)),
      CASE_0(INVALID, "set_image_data_format", kb_set_image_data_format(BAD_DF)),
      CASE_0(INVALID, "image_dim_ordering", kb_image_dim_ordering(nullptr)),
      CASE_0(INVALID, "set_image_dim_ordering", kb_set_image_dim_ordering(kb_dim_ordering(7))),
      CASE_0(INVALID, "get_uid", kb_get_uid("x", nullptr)),
      CASE_0(INVALID, "learning_phase", kb_learning_phase(nullptr)),
      CASE_0(INVALID, "set_learning_phase", kb_set_learning_phase(2)),
      CASE_0(INVALID, "learning_phase_scope", kb_learning_phase_scope_push(7)),
      CASE_0(INVALID, "learning_phase_scope", kb_learning_phase_scope_pop()),
      CASE_0(INVALID, "name_scope", kb_name_scope_push(nullptr)),
      CASE_0(INVALID, "name_scope", kb_name_scope_pop()),
  });
  EXPECT_EQ(dst, std::vector<float>(3, 0.0f));
}

TEST(Errors, Create) {
  Fx fx;
  double stop = 5;
  int64_t seed = 1;
  int64_t shape_unknown[2] = {-1, 3};
  int64_t shape_bad_ph[2] = {-2, 3};
  int64_t small[1] = {2};
  run_cases({
      // variable
      CASE_T(INVALID, "variable",
             kb_variable(nullptr, KB_FLOAT32, fx.shape23, 2, KB_FLOAT32, "v", &out)),
      CASE_T(INVALID, "variable",
             kb_variable(fx.data.data(), BAD_DT, fx.shape23, 2, KB_FLOAT32, "v", &out)),
      CASE_T(INVALID, "variable",
             kb_variable(fx.data.data(), KB_FLOAT32, fx.shape23, 2, BAD_DT, "v", &out)),
      CASE_T(INVALID, "variable",
             kb_variable(fx.data.data(), KB_FLOAT32, nullptr, 2, KB_FLOAT32, "v", &out)),
      CASE_T(INVALID, "variable",
             kb_variable(fx.data.data(), KB_FLOAT32, fx.shape_neg, 2, KB_FLOAT32, "v", &out)),
      CASE_0(INVALID, "variable",
             kb_variable(fx.data.data(), KB_FLOAT32, fx.shape23, 2, KB_FLOAT32, "v", nullptr)),
      CASE_T(INVALID, "variable", kb_variable_from_tensor(nullptr, KB_FLOAT32, "v", &out)),
      CASE_T(INVALID, "variable", kb_variable_from_tensor(fx.m23.get(), BAD_DT, "v", &out)),
      CASE_T(INVALID, "variable", kb_variable_from_tensor(fx.ph.get(), KB_FLOAT32, "v", &out)),
      CASE_0(INVALID, "variable", kb_variable_from_tensor(fx.m23.get(), KB_FLOAT32, "v", nullptr)),
      // constant
      CASE_T(INVALID, "constant",
             kb_constant(nullptr, KB_FLOAT32, fx.shape23, 2, KB_FLOAT32, nullptr, 0, "c", &out)),
      CASE_T(INVALID, "constant",
             kb_constant(fx.data.data(), BAD_DT, fx.shape23, 2, KB_FLOAT32, nullptr, 0, "c", &out)),
      CASE_T(INVALID, "constant",
             kb_constant(fx.data.data(), KB_FLOAT32, fx.shape23, 2, BAD_DT, nullptr, 0, "c", &out)),
      CASE_T(
          SHAPE, "constant",
          kb_constant(fx.data.data(), KB_FLOAT32, fx.shape23, 2, KB_FLOAT32, small, 1, "c", &out)),
      CASE_T(INVALID, "constant",
             kb_constant(fx.data.data(), KB_FLOAT32, fx.shape23, 2, KB_FLOAT32, fx.shape_neg, 2,
                         "c", &out)),
      CASE_0(INVALID, "constant",
             kb_constant(fx.data.data(), KB_FLOAT32, fx.shape23, 2, KB_FLOAT32, nullptr, 0, "c",
                         nullptr)),
      // placeholder
      CASE_T(NOTIMPL, "placeholder", kb_placeholder(nullptr, 0, -1, KB_FLOAT32, 1, "p", &out)),
      CASE_T(INVALID, "placeholder", kb_placeholder(shape_unknown, 2, 2, BAD_DT, 0, "p", &out)),
      CASE_T(INVALID, "placeholder", kb_placeholder(shape_bad_ph, 2, 2, KB_FLOAT32, 0, "p", &out)),
      CASE_T(INVALID, "placeholder", kb_placeholder(nullptr, 2, 0, KB_FLOAT32, 0, "p", &out)),
      CASE_0(INVALID, "placeholder",
             kb_placeholder(shape_unknown, 2, 2, KB_FLOAT32, 0, "p", nullptr)),
      // zeros / ones / eye
      CASE_T(INVALID, "zeros", kb_zeros(fx.shape_neg, 2, KB_FLOAT32, nullptr, &out)),
      CASE_T(INVALID, "zeros", kb_zeros(nullptr, 2, KB_FLOAT32, nullptr, &out)),
      CASE_T(INVALID, "zeros", kb_zeros(fx.shape23, 2, BAD_DT, nullptr, &out)),
      CASE_0(INVALID, "zeros", kb_zeros(fx.shape23, 2, KB_FLOAT32, nullptr, nullptr)),
      CASE_T(INVALID, "ones", kb_ones(fx.shape_neg, 2, KB_FLOAT32, nullptr, &out)),
      CASE_T(INVALID, "ones", kb_ones(nullptr, 1, KB_FLOAT32, nullptr, &out)),
      CASE_T(INVALID, "ones", kb_ones(fx.shape23, 2, BAD_DT, nullptr, &out)),
      CASE_0(INVALID, "ones", kb_ones(fx.shape23, 2, KB_FLOAT32, nullptr, nullptr)),
      CASE_T(INVALID, "eye", kb_eye(-1, KB_FLOAT32, nullptr, &out)),
      CASE_T(INVALID, "eye", kb_eye(3, BAD_DT, nullptr, &out)),
      CASE_0(INVALID, "eye", kb_eye(3, KB_FLOAT32, nullptr, nullptr)),
      // *_like, identity
      CASE_T(INVALID, "zeros_like", kb_zeros_like(nullptr, KB_DTYPE_DEFAULT, nullptr, &out)),
      CASE_T(INVALID, "zeros_like", kb_zeros_like(fx.m23.get(), BAD_DT, nullptr, &out)),
      CASE_0(INVALID, "zeros_like", kb_zeros_like(fx.m23.get(), KB_FLOAT32, nullptr, nullptr)),
      CASE_T(INVALID, "ones_like", kb_ones_like(nullptr, KB_DTYPE_DEFAULT, nullptr, &out)),
      CASE_T(INVALID, "ones_like", kb_ones_like(fx.m23.get(), BAD_DT, nullptr, &out)),
      CASE_0(INVALID, "ones_like", kb_ones_like(fx.m23.get(), KB_FLOAT32, nullptr, nullptr)),
      CASE_T(INVALID, "identity", kb_identity(nullptr, nullptr, &out)),
      CASE_0(INVALID, "identity", kb_identity(fx.m23.get(), nullptr, nullptr)),
      // random variables
      CASE_T(INVALID, "random_uniform_variable",
             kb_random_uniform_variable(fx.shape_neg, 2, 0, 1, KB_FLOAT32, nullptr, &seed, &out)),
      CASE_T(INVALID, "random_uniform_variable",
             kb_random_uniform_variable(nullptr, 2, 0, 1, KB_FLOAT32, nullptr, &seed, &out)),
      CASE_T(DTYPE, "random_uniform_variable",
             kb_random_uniform_variable(fx.shape23, 2, 0, 1, KB_INT32, nullptr, &seed, &out)),
      CASE_T(INVALID, "random_uniform_variable",
             kb_random_uniform_variable(fx.shape23, 2, 0, 1, BAD_DT, nullptr, &seed, &out)),
      CASE_0(INVALID, "random_uniform_variable",
             kb_random_uniform_variable(fx.shape23, 2, 0, 1, KB_FLOAT32, nullptr, &seed, nullptr)),
      CASE_T(INVALID, "random_normal_variable",
             kb_random_normal_variable(fx.shape_neg, 2, 0, 1, KB_FLOAT32, nullptr, &seed, &out)),
      CASE_T(DTYPE, "random_normal_variable",
             kb_random_normal_variable(fx.shape23, 2, 0, 1, KB_BOOL, nullptr, &seed, &out)),
      CASE_T(INVALID, "random_normal_variable",
             kb_random_normal_variable(fx.shape23, 2, 0, 1, BAD_DT, nullptr, &seed, &out)),
      CASE_0(INVALID, "random_normal_variable",
             kb_random_normal_variable(fx.shape23, 2, 0, 1, KB_FLOAT32, nullptr, &seed, nullptr)),
      // arange
      CASE_T(INVALID, "arange", kb_arange(0, &stop, 0, KB_INT32, &out)),
      CASE_T(INVALID, "arange", kb_arange(0, &stop, 1, BAD_DT, &out)),
      CASE_0(INVALID, "arange", kb_arange(0, &stop, 1, KB_INT32, nullptr)),
  });
}

TEST(Errors, Inspect) {
  Fx fx;
  int64_t dims[4] = {kI64, kI64, kI64, kI64};
  run_cases({
      CASE_I32(INVALID, "is_sparse", kb_is_sparse(nullptr, &out)),
      CASE_0(INVALID, "is_sparse", kb_is_sparse(fx.m23.get(), nullptr)),
      CASE_I32(INVALID, "is_keras_tensor", kb_is_keras_tensor(nullptr, &out)),
      CASE_0(INVALID, "is_keras_tensor", kb_is_keras_tensor(fx.m23.get(), nullptr)),
      CASE_0(INVALID, "is_tensor", kb_is_tensor(fx.m23.get(), nullptr)),
      CASE_I32(INVALID, "is_placeholder", kb_is_placeholder(nullptr, &out)),
      CASE_0(INVALID, "is_placeholder", kb_is_placeholder(fx.ph.get(), nullptr)),
      CASE_T(INVALID, "shape", kb_shape(nullptr, &out)),
      CASE_T(SHAPE, "shape", kb_shape(fx.unk.get(), &out)),
      CASE_0(INVALID, "shape", kb_shape(fx.m23.get(), nullptr)),
      CASE_I64(INVALID, "int_shape", kb_int_shape(nullptr, dims, 4, &out)),
      CASE_I64(INVALID, "int_shape", kb_int_shape(fx.m23.get(), nullptr, 4, &out)),
      CASE_0(INVALID, "int_shape", kb_int_shape(fx.m23.get(), dims, 4, nullptr)),
      CASE_I64(INVALID, "get_variable_shape", kb_get_variable_shape(nullptr, dims, 4, &out)),
      CASE_I64(INVALID, "get_variable_shape",
               kb_get_variable_shape(fx.var.get(), nullptr, 4, &out)),
      CASE_0(INVALID, "get_variable_shape", kb_get_variable_shape(fx.var.get(), dims, 4, nullptr)),
      CASE_I64(INVALID, "ndim", kb_ndim(nullptr, &out)),
      CASE_0(INVALID, "ndim", kb_ndim(fx.m23.get(), nullptr)),
      CASE_DT(INVALID, "dtype", kb_dtype(nullptr, &out)),
      CASE_0(INVALID, "dtype", kb_dtype(fx.m23.get(), nullptr)),
      CASE_I64(INVALID, "count_params", kb_count_params(nullptr, &out)),
      CASE_I64(SHAPE, "count_params", kb_count_params(fx.ph.get(), &out)),
      CASE_I64(SHAPE, "count_params", kb_count_params(fx.unk.get(), &out)),
      CASE_0(INVALID, "count_params", kb_count_params(fx.var.get(), nullptr)),
  });
  for (int64_t d : dims) EXPECT_EQ(d, kI64);  // no dims written by the failing calls

  // The successful forms, for contrast.
  int32_t flag = -1;
  KB_EXPECT_OK(kb_is_tensor(nullptr, &flag));
  EXPECT_EQ(flag, 0);
  KB_EXPECT_OK(kb_is_tensor(fx.m23.get(), &flag));
  EXPECT_EQ(flag, 1);
  KB_EXPECT_OK(kb_is_placeholder(fx.ph.get(), &flag));
  EXPECT_EQ(flag, 1);
  KB_EXPECT_OK(kb_is_placeholder(fx.var.get(), &flag));
  EXPECT_EQ(flag, 0);
  int64_t nd = 0;
  KB_EXPECT_OK(kb_int_shape(fx.unk.get(), dims, 4, &nd));
  EXPECT_EQ(nd, -1);
  KB_EXPECT_OK(kb_int_shape(fx.ph.get(), dims, 1, &nd));  // capacity smaller than the rank
  EXPECT_EQ(nd, 2);
  EXPECT_EQ(dims[0], -1);
  EXPECT_EQ(dims[1], kI64);
  KB_EXPECT_OK(kb_get_variable_shape(fx.var.get(), dims, 4, &nd));
  EXPECT_EQ(nd, 2);
  EXPECT_EQ(dims[0], 2);
  EXPECT_EQ(dims[1], 3);
  KB_EXPECT_OK(kb_ndim(fx.unk.get(), &nd));
  EXPECT_EQ(nd, -1);
  KB_EXPECT_OK(kb_count_params(fx.var.get(), &nd));
  EXPECT_EQ(nd, 6);
}

TEST(Errors, ValuesFunctionsUpdatesGradients) {
  Fx fx;
  kb_tensor* two_nulls[2] = {nullptr, nullptr};
  kb_tensor* one_ok[1] = {fx.var.get()};
  kb_tensor* ph_in[1] = {fx.ph.get()};
  Tensor y = bin(kb_add, fx.ph.get(), fx.v3.get());
  kb_tensor* y_out[1] = {y.get()};
  Function f = function({fx.ph.get()}, {y.get()});
  kb_tensor* bad_value[1] = {fx.v3.get()};  // rank 1 for a (None, 3) placeholder
  int64_t shape3[1] = {3};
  run_cases({
      // eval / get_value
      CASE_T(INVALID, "eval", kb_eval(nullptr, &out)),
      CASE_T(INVALID, "eval", kb_eval(y.get(), &out)),
      CASE_0(INVALID, "eval", kb_eval(fx.m23.get(), nullptr)),
      CASE_T(INVALID, "get_value", kb_get_value(nullptr, &out)),
      CASE_T(INVALID, "get_value", kb_get_value(fx.ph.get(), &out)),
      CASE_0(INVALID, "get_value", kb_get_value(fx.var.get(), nullptr)),
      // set_value
      CASE_0(INVALID, "set_value", kb_set_value(nullptr, fx.m23.get())),
      CASE_0(INVALID, "set_value", kb_set_value(fx.var.get(), nullptr)),
      CASE_0(INVALID, "set_value", kb_set_value(fx.m23.get(), fx.m23.get())),
      CASE_0(INVALID, "set_value", kb_set_value(fx.ph.get(), fx.m23.get())),
      CASE_0(SHAPE, "set_value", kb_set_value(fx.var.get(), fx.v3.get())),
      CASE_0(INVALID, "set_value", kb_set_value(fx.var.get(), y.get())),
      CASE_0(INVALID, "set_value",
             kb_set_value_data(nullptr, fx.data.data(), KB_FLOAT32, fx.shape23, 2)),
      CASE_0(INVALID, "set_value",
             kb_set_value_data(fx.var.get(), nullptr, KB_FLOAT32, fx.shape23, 2)),
      CASE_0(INVALID, "set_value",
             kb_set_value_data(fx.var.get(), fx.data.data(), BAD_DT, fx.shape23, 2)),
      CASE_0(INVALID, "set_value",
             kb_set_value_data(fx.var.get(), fx.data.data(), KB_FLOAT32, nullptr, 2)),
      CASE_0(SHAPE, "set_value",
             kb_set_value_data(fx.var.get(), fx.data.data(), KB_FLOAT32, shape3, 1)),
      CASE_0(INVALID, "set_value",
             kb_set_value_data(fx.m23.get(), fx.data.data(), KB_FLOAT32, fx.shape23, 2)),
      // batch_get_value / batch_set_value
      CASE_L(INVALID, "batch_get_value", kb_batch_get_value(nullptr, 2, &out)),
      CASE_L(INVALID, "batch_get_value", kb_batch_get_value(two_nulls, 2, &out)),
      CASE_L(INVALID, "batch_get_value", kb_batch_get_value(ph_in, 1, &out)),
      CASE_0(INVALID, "batch_get_value", kb_batch_get_value(one_ok, 1, nullptr)),
      CASE_0(INVALID, "batch_set_value", kb_batch_set_value(nullptr, one_ok, 1)),
      CASE_0(INVALID, "batch_set_value", kb_batch_set_value(one_ok, nullptr, 1)),
      CASE_0(INVALID, "batch_set_value", kb_batch_set_value(two_nulls, two_nulls, 2)),
      CASE_0(SHAPE, "batch_set_value", kb_batch_set_value(one_ok, bad_value, 1)),
      // print_tensor
      CASE_T(INVALID, "print_tensor", kb_print_tensor(nullptr, "m", &out)),
      CASE_0(INVALID, "print_tensor", kb_print_tensor(fx.m23.get(), "m", nullptr)),
      CASE_T(INVALID, "static_value", kb_static_value(nullptr, &out)),
      CASE_T(INVALID, "static_value", kb_static_value(fx.ph.get(), &out)),
      CASE_0(INVALID, "static_value", kb_static_value(fx.m23.get(), nullptr)),
      // function
      CASE_F(INVALID, "function", kb_function(nullptr, 1, y_out, 1, nullptr, 0, &out)),
      CASE_F(INVALID, "function", kb_function(ph_in, 1, nullptr, 1, nullptr, 0, &out)),
      CASE_F(INVALID, "function", kb_function(ph_in, 1, y_out, 1, nullptr, 1, &out)),
      CASE_F(INVALID, "function", kb_function(two_nulls, 2, y_out, 1, nullptr, 0, &out)),
      CASE_F(INVALID, "function", kb_function(ph_in, 1, two_nulls, 1, nullptr, 0, &out)),
      CASE_F(INVALID, "function", kb_function(ph_in, 1, y_out, 1, two_nulls, 1, &out)),
      CASE_F(INVALID, "function", kb_function(nullptr, 0, y_out, 1, nullptr, 0, &out)),
      CASE_F(INVALID, "function", kb_function(ph_in, 1, y_out, 1, y_out, 1, &out)),
      CASE_0(INVALID, "function", kb_function(ph_in, 1, y_out, 1, nullptr, 0, nullptr)),
      CASE_L(INVALID, "function", kb_function_call(nullptr, bad_value, 1, &out)),
      CASE_L(INVALID, "function", kb_function_call(f.get(), nullptr, 1, &out)),
      CASE_L(INVALID, "function", kb_function_call(f.get(), two_nulls, 1, &out)),
      CASE_L(INVALID, "function", kb_function_call(f.get(), ph_in, 1, &out)),
      CASE_L(INVALID, "function", kb_function_call(f.get(), nullptr, 0, &out)),
      CASE_L(SHAPE, "function", kb_function_call(f.get(), bad_value, 1, &out)),
      CASE_0(INVALID, "function", kb_function_call(f.get(), bad_value, 1, nullptr)),
      // updates
      CASE_T(INVALID, "update", kb_update(nullptr, fx.m23.get(), &out)),
      CASE_T(INVALID, "update", kb_update(fx.var.get(), nullptr, &out)),
      CASE_T(INVALID, "update", kb_update(fx.m23.get(), fx.m23.get(), &out)),
      CASE_T(INVALID, "update", kb_update(fx.ph.get(), fx.m23.get(), &out)),
      CASE_T(SHAPE, "update", kb_update(fx.var.get(), fx.v3.get(), &out)),
      CASE_T(SHAPE, "update", kb_update(fx.var.get(), fx.m22.get(), &out)),
      CASE_T(SHAPE, "update", kb_update(fx.var.get(), fx.t234.get(), &out)),
      CASE_0(INVALID, "update", kb_update(fx.var.get(), fx.m23.get(), nullptr)),
      CASE_T(INVALID, "update_add", kb_update_add(nullptr, fx.m23.get(), &out)),
      CASE_T(INVALID, "update_add", kb_update_add(fx.var.get(), nullptr, &out)),
      CASE_T(INVALID, "update_add", kb_update_add(fx.m23.get(), fx.m23.get(), &out)),
      CASE_T(SHAPE, "update_add", kb_update_add(fx.var.get(), fx.m22.get(), &out)),
      CASE_T(SHAPE, "update_add", kb_update_add(fx.var.get(), fx.t234.get(), &out)),
      CASE_0(INVALID, "update_add", kb_update_add(fx.var.get(), fx.m23.get(), nullptr)),
      CASE_T(INVALID, "update_sub", kb_update_sub(nullptr, fx.m23.get(), &out)),
      CASE_T(INVALID, "update_sub", kb_update_sub(fx.var.get(), nullptr, &out)),
      CASE_T(INVALID, "update_sub", kb_update_sub(fx.m23.get(), fx.m23.get(), &out)),
      CASE_T(SHAPE, "update_sub", kb_update_sub(fx.var.get(), fx.v4.get(), &out)),
      CASE_0(INVALID, "update_sub", kb_update_sub(fx.var.get(), fx.m23.get(), nullptr)),
      CASE_T(INVALID, "moving_average_update",
             kb_moving_average_update(nullptr, fx.m23.get(), 0.9, &out)),
      CASE_T(INVALID, "moving_average_update",
             kb_moving_average_update(fx.var.get(), nullptr, 0.9, &out)),
      CASE_T(INVALID, "moving_average_update",
             kb_moving_average_update(fx.m23.get(), fx.m23.get(), 0.9, &out)),
      CASE_T(DTYPE, "moving_average_update",
             kb_moving_average_update(fx.ivar.get(), fx.i3.get(), 0.9, &out)),
      CASE_T(SHAPE, "moving_average_update",
             kb_moving_average_update(fx.var.get(), fx.m22.get(), 0.9, &out)),
      CASE_0(INVALID, "moving_average_update",
             kb_moving_average_update(fx.var.get(), fx.m23.get(), 0.9, nullptr)),
      // gradients / stop_gradient
      CASE_L(INVALID, "gradients", kb_gradients(nullptr, one_ok, 1, &out)),
      CASE_L(INVALID, "gradients", kb_gradients(fx.s.get(), nullptr, 1, &out)),
      CASE_L(INVALID, "gradients", kb_gradients(fx.s.get(), two_nulls, 2, &out)),
      CASE_L(DTYPE, "gradients", kb_gradients(fx.i3.get(), one_ok, 1, &out)),
      CASE_0(INVALID, "gradients", kb_gradients(fx.s.get(), one_ok, 1, nullptr)),
      CASE_T(INVALID, "stop_gradient", kb_stop_gradient(nullptr, &out)),
      CASE_0(INVALID, "stop_gradient", kb_stop_gradient(fx.m23.get(), nullptr)),
  });
  // A value of the wrong dtype for the placeholder is converted (bool -> float), so it works.
  kb_tensor_list* l = nullptr;
  Tensor b23 = constant<bool>({true, false, true, true, false, true}, {2, 3});
  kb_tensor* b_in[1] = {b23.get()};
  KB_EXPECT_OK(kb_function_call(f.get(), b_in, 1, &l));
  List keep(l);
}

TEST(Errors, Elementwise) {
  Fx fx;
  struct Unary {
    const char* name;
    UnaryFn fn;
  };
  std::vector<Unary> unaries = {
      {"square", kb_square},
      {"abs", kb_abs},
      {"sqrt", kb_sqrt},
      {"exp", kb_exp},
      {"log", kb_log},
      {"round", kb_round},
      {"sign", kb_sign},
      {"sin", kb_sin},
      {"cos", kb_cos},
      {"negative", kb_negative},
      {"flatten", kb_flatten},
      {"batch_flatten", kb_batch_flatten},
      {"transpose", kb_transpose},
      {"sigmoid", kb_sigmoid},
      {"hard_sigmoid", kb_hard_sigmoid},
      {"tanh", kb_tanh},
      {"softplus", kb_softplus},
      {"erf", kb_erf},
      {"softsign", kb_softsign},
      {"stop_gradient", kb_stop_gradient},
  };
  for (const Unary& u : unaries) {
    SCOPED_TRACE(u.name);
    UnaryFn fn = u.fn;
    run_cases({
        CASE_T(INVALID, u.name, fn(nullptr, &out)),
        CASE_0(INVALID, u.name, fn(fx.m23.get(), nullptr)),
    });
  }
  struct Binary {
    const char* name;
    BinaryFn fn;
  };
  std::vector<Binary> binaries = {
      {"equal", kb_equal},       {"not_equal", kb_not_equal},
      {"greater", kb_greater},   {"greater_equal", kb_greater_equal},
      {"less", kb_less},         {"less_equal", kb_less_equal},
      {"lesser", kb_lesser},     {"lesser_equal", kb_lesser_equal},
      {"maximum", kb_maximum},   {"minimum", kb_minimum},
      {"add", kb_add},           {"subtract", kb_subtract},
      {"multiply", kb_multiply}, {"divide", kb_divide},
  };
  for (const Binary& b : binaries) {
    SCOPED_TRACE(b.name);
    BinaryFn fn = b.fn;
    std::string n = b.name;
    run_cases({
        CASE_T(INVALID, n, fn(nullptr, fx.m23.get(), &out)),
        CASE_T(INVALID, n, fn(fx.m23.get(), nullptr, &out)),
        CASE_0(INVALID, n, fn(fx.m23.get(), fx.m23.get(), nullptr)),
        CASE_T(SHAPE, n, fn(fx.m23.get(), fx.v4.get(), &out)),   // (2,3) and (4,)
        CASE_T(SHAPE, n, fn(fx.m23.get(), fx.m22.get(), &out)),  // (2,3) and (2,2)
        CASE_T(DTYPE, n, fn(fx.v3.get(), fx.i3.get(), &out)),    // float32 and int32
        CASE_T(DTYPE, n, fn(fx.v3.get(), fx.d3.get(), &out)),    // float32 and float64
    });
  }

  run_cases({
      // floating-only functions on integers and bools
      CASE_T(DTYPE, "sqrt", kb_sqrt(fx.i3.get(), &out)),
      CASE_T(DTYPE, "exp", kb_exp(fx.i3.get(), &out)),
      CASE_T(DTYPE, "log", kb_log(fx.i3.get(), &out)),
      CASE_T(DTYPE, "sin", kb_sin(fx.b3.get(), &out)),
      CASE_T(DTYPE, "cos", kb_cos(fx.b3.get(), &out)),
      CASE_T(DTYPE, "sigmoid", kb_sigmoid(fx.i3.get(), &out)),
      CASE_T(DTYPE, "tanh", kb_tanh(fx.i3.get(), &out)),
      CASE_T(DTYPE, "softplus", kb_softplus(fx.i3.get(), &out)),
      CASE_T(DTYPE, "erf", kb_erf(fx.i3.get(), &out)),
      CASE_T(DTYPE, "softsign", kb_softsign(fx.i3.get(), &out)),
      CASE_T(DTYPE, "hard_sigmoid", kb_hard_sigmoid(fx.i3.get(), &out)),
      CASE_T(DTYPE, "square", kb_square(fx.b3.get(), &out)),
      CASE_T(DTYPE, "negative", kb_negative(fx.b3.get(), &out)),
      CASE_T(DTYPE, "add", kb_add(fx.b3.get(), fx.b3.get(), &out)),
      // pow, clip, cast
      CASE_T(INVALID, "pow", kb_pow(nullptr, 2, &out)),
      CASE_T(DTYPE, "pow", kb_pow(fx.i3.get(), 2, &out)),
      CASE_0(INVALID, "pow", kb_pow(fx.v3.get(), 2, nullptr)),
      CASE_T(INVALID, "clip", kb_clip(nullptr, 0, 1, &out)),
      CASE_T(INVALID, "clip", kb_clip(fx.v3.get(), std::nan(""), 1, &out)),
      CASE_T(DTYPE, "clip", kb_clip(fx.b3.get(), 0, 1, &out)),
      CASE_0(INVALID, "clip", kb_clip(fx.v3.get(), 0, 1, nullptr)),
      CASE_T(INVALID, "cast", kb_cast(nullptr, KB_FLOAT32, &out)),
      CASE_T(INVALID, "cast", kb_cast(fx.v3.get(), BAD_DT, &out)),
      CASE_T(INVALID, "cast", kb_cast(fx.v3.get(), KB_DTYPE_DEFAULT, &out)),
      CASE_0(INVALID, "cast", kb_cast(fx.v3.get(), KB_INT32, nullptr)),
      // transpose / flatten on an unknown rank
      CASE_T(SHAPE, "transpose", kb_transpose(fx.unk.get(), &out)),
      CASE_T(SHAPE, "batch_flatten", kb_batch_flatten(fx.s.get(), &out)),
      CASE_T(SHAPE, "batch_flatten", kb_batch_flatten(fx.unk.get(), &out)),
  });
}

TEST(Errors, Reduce) {
  Fx fx;
  using ReduceFn = kb_status (*)(kb_tensor*, const int64_t*, size_t, int32_t, kb_tensor**);
  struct R {
    const char* name;
    ReduceFn fn;
  };
  std::vector<R> reds = {{"max", kb_max},   {"min", kb_min},
                         {"sum", kb_sum},   {"prod", kb_prod},
                         {"mean", kb_mean}, {"var", kb_var},
                         {"std", kb_std},   {"any", kb_any},
                         {"all", kb_all},   {"logsumexp", kb_logsumexp}};
  for (const R& r : reds) {
    SCOPED_TRACE(r.name);
    ReduceFn fn = r.fn;
    std::string n = r.name;
    run_cases({
        CASE_T(INVALID, n, fn(nullptr, nullptr, 0, 0, &out)),
        CASE_T(INVALID, n, fn(fx.m23.get(), nullptr, 2, 0, &out)),
        CASE_T(INVALID, n, fn(fx.m23.get(), fx.axes_bad, 1, 0, &out)),
        CASE_T(INVALID, n, fn(fx.m23.get(), fx.axes_dup, 2, 0, &out)),
        CASE_T(SHAPE, n, fn(fx.unk.get(), fx.axis0, 1, 0, &out)),
        CASE_0(INVALID, n, fn(fx.m23.get(), nullptr, 0, 0, nullptr)),
    });
  }

  using AxisFn = kb_status (*)(kb_tensor*, int64_t, kb_tensor**);
  struct A {
    const char* name;
    AxisFn fn;
  };
  std::vector<A> axis_fns = {{"cumsum", kb_cumsum},
                             {"cumprod", kb_cumprod},
                             {"argmax", kb_argmax},
                             {"argmin", kb_argmin},
                             {"softmax", kb_softmax}};
  for (const A& a : axis_fns) {
    SCOPED_TRACE(a.name);
    AxisFn fn = a.fn;
    std::string n = a.name;
    run_cases({
        CASE_T(INVALID, n, fn(nullptr, 0, &out)),
        CASE_T(INVALID, n, fn(fx.m23.get(), 2, &out)),
        CASE_T(INVALID, n, fn(fx.m23.get(), -3, &out)),
        CASE_T(SHAPE, n, fn(fx.s.get(), 0, &out)),
        CASE_T(SHAPE, n, fn(fx.unk.get(), 0, &out)),
        CASE_0(INVALID, n, fn(fx.m23.get(), 0, nullptr)),
    });
  }
  run_cases({
      CASE_T(DTYPE, "sum", kb_sum(fx.b3.get(), nullptr, 0, 0, &out)),
      CASE_T(DTYPE, "prod", kb_prod(fx.b3.get(), nullptr, 0, 0, &out)),
      CASE_T(DTYPE, "logsumexp", kb_logsumexp(fx.i3.get(), nullptr, 0, 0, &out)),
      CASE_T(DTYPE, "softmax", kb_softmax(fx.i23.get(), -1, &out)),
  });
}

TEST(Errors, Shape) {
  Fx fx;
  kb_tensor* none[1] = {nullptr};
  kb_tensor* mixed_rank[2] = {fx.m23.get(), fx.v3.get()};
  kb_tensor* mixed_dims[2] = {fx.m23.get(), fx.m34.get()};
  kb_tensor* mixed_dtype[2] = {fx.m23.get(), fx.i23.get()};
  kb_tensor* pair[2] = {fx.m23.get(), fx.m23.get()};
  kb_tensor* with_null[2] = {fx.m23.get(), nullptr};
  kb_tensor* scalars[2] = {fx.s.get(), fx.s.get()};
  int64_t shape_7[1] = {7};
  int64_t shape_two_unknown[2] = {-1, -1};
  int64_t shape_bad[2] = {-3, 2};
  int64_t perm_short[1] = {0};
  int64_t perm_dup[2] = {0, 0};
  int64_t perm_range[2] = {0, 2};
  int64_t tile_short[1] = {2};
  int64_t tile_neg[2] = {1, -1};
  int64_t rev_bad[1] = {2};
  int64_t start_ok[2] = {0, 0};
  int64_t size_ok[2] = {1, 2};
  int64_t start_far[2] = {0, 5};
  int64_t size_big[2] = {3, 1};
  int64_t start_neg[2] = {-1, 0};
  int64_t ss_b[3] = {0, 0, 0}, ss_e[3] = {1, 1, 1}, ss_s[3] = {1, 1, 1};
  int64_t ss_zero[1] = {0};
  Tensor fidx = constant_f32({0, 1}, {2});
  Tensor iidx = constant<int32_t>({0, 1}, {2});
  run_cases({
      // concatenate
      CASE_T(INVALID, "concatenate", kb_concatenate(nullptr, 2, 0, &out)),
      CASE_T(INVALID, "concatenate", kb_concatenate(pair, 0, 0, &out)),
      CASE_T(INVALID, "concatenate", kb_concatenate(none, 1, 0, &out)),
      CASE_T(INVALID, "concatenate", kb_concatenate(with_null, 2, 0, &out)),
      CASE_T(SHAPE, "concatenate", kb_concatenate(mixed_rank, 2, 0, &out)),
      CASE_T(SHAPE, "concatenate", kb_concatenate(mixed_dims, 2, 0, &out)),
      CASE_T(SHAPE, "concatenate", kb_concatenate(scalars, 2, 0, &out)),
      CASE_T(DTYPE, "concatenate", kb_concatenate(mixed_dtype, 2, 0, &out)),
      CASE_T(INVALID, "concatenate", kb_concatenate(pair, 2, 2, &out)),
      CASE_0(INVALID, "concatenate", kb_concatenate(pair, 2, 0, nullptr)),
      // stack
      CASE_T(INVALID, "stack", kb_stack(nullptr, 2, 0, &out)),
      CASE_T(INVALID, "stack", kb_stack(pair, 0, 0, &out)),
      CASE_T(INVALID, "stack", kb_stack(with_null, 2, 0, &out)),
      CASE_T(SHAPE, "stack", kb_stack(mixed_rank, 2, 0, &out)),
      CASE_T(SHAPE, "stack", kb_stack(mixed_dims, 2, 0, &out)),
      CASE_T(DTYPE, "stack", kb_stack(mixed_dtype, 2, 0, &out)),
      CASE_T(INVALID, "stack", kb_stack(pair, 2, 3, &out)),
      CASE_T(INVALID, "stack", kb_stack(pair, 2, -4, &out)),
      CASE_0(INVALID, "stack", kb_stack(pair, 2, 0, nullptr)),
      // reshape
      CASE_T(INVALID, "reshape", kb_reshape(nullptr, shape_7, 1, &out)),
      CASE_T(INVALID, "reshape", kb_reshape(fx.m23.get(), nullptr, 2, &out)),
      CASE_T(SHAPE, "reshape", kb_reshape(fx.m23.get(), shape_7, 1, &out)),
      CASE_T(INVALID, "reshape", kb_reshape(fx.m23.get(), shape_two_unknown, 2, &out)),
      CASE_T(INVALID, "reshape", kb_reshape(fx.m23.get(), shape_bad, 2, &out)),
      CASE_0(INVALID, "reshape", kb_reshape(fx.m23.get(), fx.shape23, 2, nullptr)),
      // permute_dimensions
      CASE_T(INVALID, "permute_dimensions", kb_permute_dimensions(nullptr, perm_dup, 2, &out)),
      CASE_T(INVALID, "permute_dimensions", kb_permute_dimensions(fx.m23.get(), nullptr, 2, &out)),
      CASE_T(INVALID, "permute_dimensions",
             kb_permute_dimensions(fx.m23.get(), perm_short, 1, &out)),
      CASE_T(INVALID, "permute_dimensions", kb_permute_dimensions(fx.m23.get(), perm_dup, 2, &out)),
      CASE_T(INVALID, "permute_dimensions",
             kb_permute_dimensions(fx.m23.get(), perm_range, 2, &out)),
      CASE_0(INVALID, "permute_dimensions",
             kb_permute_dimensions(fx.m23.get(), perm_dup, 2, nullptr)),
      // repeat_elements / repeat / tile
      CASE_T(INVALID, "repeat_elements", kb_repeat_elements(nullptr, 2, 0, &out)),
      CASE_T(INVALID, "repeat_elements", kb_repeat_elements(fx.m23.get(), -1, 0, &out)),
      CASE_T(INVALID, "repeat_elements", kb_repeat_elements(fx.m23.get(), 2, 2, &out)),
      CASE_T(SHAPE, "repeat_elements", kb_repeat_elements(fx.s.get(), 2, 0, &out)),
      CASE_0(INVALID, "repeat_elements", kb_repeat_elements(fx.m23.get(), 2, 0, nullptr)),
      CASE_T(INVALID, "repeat", kb_repeat(nullptr, 2, &out)),
      CASE_T(SHAPE, "repeat", kb_repeat(fx.v3.get(), 2, &out)),
      CASE_T(SHAPE, "repeat", kb_repeat(fx.t234.get(), 2, &out)),
      CASE_T(INVALID, "repeat", kb_repeat(fx.m23.get(), -2, &out)),
      CASE_0(INVALID, "repeat", kb_repeat(fx.m23.get(), 2, nullptr)),
      CASE_T(INVALID, "tile", kb_tile(nullptr, tile_short, 1, &out)),
      CASE_T(INVALID, "tile", kb_tile(fx.m23.get(), nullptr, 2, &out)),
      CASE_T(INVALID, "tile", kb_tile(fx.m23.get(), tile_short, 1, &out)),
      CASE_T(INVALID, "tile", kb_tile(fx.m23.get(), tile_neg, 2, &out)),
      CASE_0(INVALID, "tile", kb_tile(fx.m23.get(), start_ok, 2, nullptr)),
      // expand_dims / squeeze
      CASE_T(INVALID, "expand_dims", kb_expand_dims(nullptr, 0, &out)),
      CASE_T(INVALID, "expand_dims", kb_expand_dims(fx.m23.get(), 3, &out)),
      CASE_T(INVALID, "expand_dims", kb_expand_dims(fx.m23.get(), -4, &out)),
      CASE_T(SHAPE, "expand_dims", kb_expand_dims(fx.unk.get(), 0, &out)),
      CASE_0(INVALID, "expand_dims", kb_expand_dims(fx.m23.get(), 0, nullptr)),
      CASE_T(INVALID, "squeeze", kb_squeeze(nullptr, 0, &out)),
      CASE_T(INVALID, "squeeze", kb_squeeze(fx.m23.get(), 2, &out)),
      CASE_T(SHAPE, "squeeze", kb_squeeze(fx.m23.get(), 0, &out)),
      CASE_0(INVALID, "squeeze", kb_squeeze(fx.m23.get(), 0, nullptr)),
      // one_hot
      CASE_T(INVALID, "one_hot", kb_one_hot(nullptr, 3, &out)),
      CASE_T(DTYPE, "one_hot", kb_one_hot(fx.v3.get(), 3, &out)),
      CASE_T(INVALID, "one_hot", kb_one_hot(fx.i3.get(), 0, &out)),
      CASE_0(INVALID, "one_hot", kb_one_hot(fx.i3.get(), 3, nullptr)),
      // reverse
      CASE_T(INVALID, "reverse", kb_reverse(nullptr, fx.axis0, 1, &out)),
      CASE_T(INVALID, "reverse", kb_reverse(fx.m23.get(), nullptr, 1, &out)),
      CASE_T(INVALID, "reverse", kb_reverse(fx.m23.get(), rev_bad, 1, &out)),
      CASE_T(INVALID, "reverse", kb_reverse(fx.m23.get(), fx.axes_dup, 2, &out)),
      CASE_0(INVALID, "reverse", kb_reverse(fx.m23.get(), fx.axis0, 1, nullptr)),
      // slice
      CASE_T(INVALID, "slice", kb_slice(nullptr, start_ok, size_ok, 2, &out)),
      CASE_T(INVALID, "slice", kb_slice(fx.m23.get(), nullptr, size_ok, 2, &out)),
      CASE_T(INVALID, "slice", kb_slice(fx.m23.get(), start_ok, nullptr, 2, &out)),
      CASE_T(INVALID, "slice", kb_slice(fx.m23.get(), start_ok, size_ok, 1, &out)),
      CASE_T(INVALID, "slice", kb_slice(fx.m23.get(), start_far, size_ok, 2, &out)),
      CASE_T(INVALID, "slice", kb_slice(fx.m23.get(), start_ok, size_big, 2, &out)),
      CASE_T(INVALID, "slice", kb_slice(fx.m23.get(), start_neg, size_ok, 2, &out)),
      CASE_0(INVALID, "slice", kb_slice(fx.m23.get(), start_ok, size_ok, 2, nullptr)),
      // gather
      CASE_T(INVALID, "gather", kb_gather(nullptr, fx.i3.get(), &out)),
      CASE_T(INVALID, "gather", kb_gather(fx.m23.get(), nullptr, &out)),
      CASE_T(DTYPE, "gather", kb_gather(fx.m23.get(), fidx.get(), &out)),
      CASE_T(SHAPE, "gather", kb_gather(fx.s.get(), iidx.get(), &out)),
      CASE_0(INVALID, "gather", kb_gather(fx.m23.get(), iidx.get(), nullptr)),
      // strided_slice
      CASE_T(INVALID, "strided_slice",
             kb_strided_slice(nullptr, ss_b, ss_e, ss_s, 2, 0, 0, 0, 0, &out)),
      CASE_T(INVALID, "strided_slice",
             kb_strided_slice(fx.m23.get(), nullptr, ss_e, ss_s, 2, 0, 0, 0, 0, &out)),
      CASE_T(INVALID, "strided_slice",
             kb_strided_slice(fx.m23.get(), ss_b, nullptr, ss_s, 2, 0, 0, 0, 0, &out)),
      CASE_T(INVALID, "strided_slice",
             kb_strided_slice(fx.m23.get(), ss_b, ss_e, nullptr, 2, 0, 0, 0, 0, &out)),
      CASE_T(INVALID, "strided_slice",
             kb_strided_slice(fx.m23.get(), ss_b, ss_e, ss_s, 3, 0, 0, 0, 0, &out)),
      CASE_T(INVALID, "strided_slice",
             kb_strided_slice(fx.m23.get(), ss_b, ss_e, ss_zero, 1, 0, 0, 0, 0, &out)),
      CASE_T(SHAPE, "strided_slice",
             kb_strided_slice(fx.unk.get(), ss_b, ss_e, ss_s, 1, 0, 0, 0, 0, &out)),
      CASE_0(INVALID, "strided_slice",
             kb_strided_slice(fx.m23.get(), ss_b, ss_e, ss_s, 2, 0, 0, 0, 0, nullptr)),
  });
}

TEST(Errors, LinalgAndNn) {
  Fx fx;
  int64_t axes_ok[2] = {1, 1};
  double maxv = 6;
  double nan_value = std::nan("");
  Tensor v2 = constant_f32({1, 2}, {2});
  Tensor b4 = constant_f32({1, 2, 3, 4}, {4});
  Tensor b3 = constant_f32({1, 2, 3}, {3});
  Tensor bi3 = constant<int32_t>({1, 2, 3}, {3});
  Tensor b22 = constant_f32({1, 2, 3, 4}, {2, 2});
  Tensor labels = constant<int32_t>({0, 1}, {2});
  Tensor targets23 = constant_f32({0, 1, 0, 1, 0, 0}, {2, 3});
  Tensor ti23 = constant<int32_t>({0, 1, 0, 1, 0, 0}, {2, 3});
  run_cases({
      // dot / batch_dot
      CASE_T(INVALID, "dot", kb_dot(nullptr, fx.m34.get(), &out)),
      CASE_T(INVALID, "dot", kb_dot(fx.m23.get(), nullptr, &out)),
      CASE_T(SHAPE, "dot", kb_dot(fx.m23.get(), fx.m22.get(), &out)),
      CASE_T(SHAPE, "dot", kb_dot(fx.v3.get(), fx.v3.get(), &out)),
      CASE_T(SHAPE, "dot", kb_dot(fx.t234.get(), fx.m23.get(), &out)),
      CASE_T(SHAPE, "dot", kb_dot(fx.unk.get(), fx.m23.get(), &out)),
      CASE_T(DTYPE, "dot", kb_dot(fx.m23.get(), fx.i23.get(), &out)),
      CASE_0(INVALID, "dot", kb_dot(fx.m23.get(), fx.m34.get(), nullptr)),
      CASE_T(INVALID, "batch_dot", kb_batch_dot(nullptr, fx.m23.get(), nullptr, &out)),
      CASE_T(INVALID, "batch_dot", kb_batch_dot(fx.m23.get(), nullptr, nullptr, &out)),
      CASE_T(SHAPE, "batch_dot", kb_batch_dot(fx.v3.get(), fx.m23.get(), nullptr, &out)),
      CASE_T(SHAPE, "batch_dot", kb_batch_dot(fx.m23.get(), fx.m22.get(), axes_ok, &out)),
      CASE_0(INVALID, "batch_dot", kb_batch_dot(fx.m23.get(), fx.m23.get(), axes_ok, nullptr)),
      // activations
      CASE_T(INVALID, "relu", kb_relu(nullptr, 0, nullptr, 0, &out)),
      CASE_T(DTYPE, "relu", kb_relu(fx.i3.get(), 0, nullptr, 0, &out)),
      CASE_T(INVALID, "relu", kb_relu(fx.v3.get(), 0, &nan_value, 0, &out)),
      CASE_0(INVALID, "relu", kb_relu(fx.v3.get(), 0, &maxv, 0, nullptr)),
      CASE_T(INVALID, "elu", kb_elu(nullptr, 1, &out)),
      CASE_T(DTYPE, "elu", kb_elu(fx.i3.get(), 1, &out)),
      CASE_0(INVALID, "elu", kb_elu(fx.v3.get(), 1, nullptr)),
      // losses
      CASE_T(INVALID, "categorical_crossentropy",
             kb_categorical_crossentropy(nullptr, fx.m23.get(), 0, -1, &out)),
      CASE_T(INVALID, "categorical_crossentropy",
             kb_categorical_crossentropy(targets23.get(), nullptr, 0, -1, &out)),
      CASE_T(INVALID, "categorical_crossentropy",
             kb_categorical_crossentropy(targets23.get(), fx.m23.get(), 0, 2, &out)),
      CASE_T(INVALID, "categorical_crossentropy",
             kb_categorical_crossentropy(targets23.get(), fx.m23.get(), 0, -2, &out)),
      CASE_T(DTYPE, "categorical_crossentropy",
             kb_categorical_crossentropy(ti23.get(), fx.m23.get(), 0, -1, &out)),
      CASE_T(DTYPE, "categorical_crossentropy",
             kb_categorical_crossentropy(ti23.get(), fx.i23.get(), 0, -1, &out)),
      CASE_T(SHAPE, "categorical_crossentropy",
             kb_categorical_crossentropy(fx.m22.get(), fx.m23.get(), 0, -1, &out)),
      CASE_0(INVALID, "categorical_crossentropy",
             kb_categorical_crossentropy(targets23.get(), fx.m23.get(), 0, -1, nullptr)),
      CASE_T(INVALID, "sparse_categorical_crossentropy",
             kb_sparse_categorical_crossentropy(nullptr, fx.m23.get(), 0, -1, &out)),
      CASE_T(INVALID, "sparse_categorical_crossentropy",
             kb_sparse_categorical_crossentropy(labels.get(), nullptr, 0, -1, &out)),
      CASE_T(INVALID, "sparse_categorical_crossentropy",
             kb_sparse_categorical_crossentropy(labels.get(), fx.m23.get(), 0, 2, &out)),
      CASE_T(DTYPE, "sparse_categorical_crossentropy",
             kb_sparse_categorical_crossentropy(labels.get(), fx.i23.get(), 0, -1, &out)),
      CASE_T(DTYPE, "sparse_categorical_crossentropy",
             kb_sparse_categorical_crossentropy(fx.b3.get(), fx.m23.get(), 0, -1, &out)),
      CASE_0(INVALID, "sparse_categorical_crossentropy",
             kb_sparse_categorical_crossentropy(labels.get(), fx.m23.get(), 0, -1, nullptr)),
      CASE_T(INVALID, "binary_crossentropy",
             kb_binary_crossentropy(nullptr, fx.m23.get(), 0, &out)),
      CASE_T(INVALID, "binary_crossentropy",
             kb_binary_crossentropy(targets23.get(), nullptr, 0, &out)),
      CASE_T(DTYPE, "binary_crossentropy",
             kb_binary_crossentropy(ti23.get(), fx.m23.get(), 0, &out)),
      CASE_T(SHAPE, "binary_crossentropy",
             kb_binary_crossentropy(fx.m22.get(), fx.m23.get(), 0, &out)),
      CASE_0(INVALID, "binary_crossentropy",
             kb_binary_crossentropy(targets23.get(), fx.m23.get(), 0, nullptr)),
      // l2_normalize
      CASE_T(INVALID, "l2_normalize", kb_l2_normalize(nullptr, nullptr, 0, &out)),
      CASE_T(INVALID, "l2_normalize", kb_l2_normalize(fx.m23.get(), nullptr, 1, &out)),
      CASE_T(INVALID, "l2_normalize", kb_l2_normalize(fx.m23.get(), fx.axes_bad, 1, &out)),
      CASE_T(DTYPE, "l2_normalize", kb_l2_normalize(fx.i3.get(), nullptr, 0, &out)),
      CASE_0(INVALID, "l2_normalize", kb_l2_normalize(fx.m23.get(), nullptr, 0, nullptr)),
      // bias_add
      CASE_T(INVALID, "bias_add", kb_bias_add(nullptr, b3.get(), KB_CHANNELS_LAST, &out)),
      CASE_T(INVALID, "bias_add", kb_bias_add(fx.m23.get(), nullptr, KB_CHANNELS_LAST, &out)),
      CASE_T(INVALID, "bias_add", kb_bias_add(fx.m23.get(), b3.get(), BAD_DF, &out)),
      CASE_T(INVALID, "bias_add", kb_bias_add(fx.m23.get(), b3.get(), kb_data_format(-2), &out)),
      CASE_T(SHAPE, "bias_add", kb_bias_add(fx.m23.get(), b4.get(), KB_CHANNELS_LAST, &out)),
      CASE_T(SHAPE, "bias_add", kb_bias_add(fx.t234.get(), b22.get(), KB_CHANNELS_LAST, &out)),
      CASE_T(SHAPE, "bias_add", kb_bias_add(fx.t234.get(), b4.get(), KB_CHANNELS_FIRST, &out)),
      CASE_T(SHAPE, "bias_add", kb_bias_add(fx.m23.get(), fx.s.get(), KB_CHANNELS_LAST, &out)),
      CASE_T(DTYPE, "bias_add", kb_bias_add(fx.m23.get(), bi3.get(), KB_CHANNELS_LAST, &out)),
      CASE_0(INVALID, "bias_add", kb_bias_add(fx.m23.get(), b3.get(), KB_CHANNELS_LAST, nullptr)),
      // in_top_k
      CASE_T(INVALID, "in_top_k", kb_in_top_k(nullptr, labels.get(), 1, &out)),
      CASE_T(INVALID, "in_top_k", kb_in_top_k(fx.m23.get(), nullptr, 1, &out)),
      CASE_T(SHAPE, "in_top_k", kb_in_top_k(fx.v3.get(), labels.get(), 1, &out)),
      CASE_T(SHAPE, "in_top_k", kb_in_top_k(fx.m23.get(), fx.i3.get(), 1, &out)),
      CASE_T(DTYPE, "in_top_k", kb_in_top_k(fx.m23.get(), v2.get(), 1, &out)),
      CASE_T(DTYPE, "in_top_k", kb_in_top_k(fx.i23.get(), labels.get(), 1, &out)),
      CASE_0(INVALID, "in_top_k", kb_in_top_k(fx.m23.get(), labels.get(), 1, nullptr)),
  });
}

TEST(Errors, Sparse) {
  Fx fx;
  int64_t idx_ok[2] = {0, 1}, idx_far[2] = {0, 9}, idx_neg[2] = {-1, 0};
  int64_t dense23[2] = {2, 3}, dense_neg[2] = {2, -3};
  float one = 1;
  int64_t indptr_bad[3] = {0, 2, 1}, indptr_start[3] = {1, 1, 1}, cols[2] = {0, 5};
  float vals[2] = {1, 2};
  Tensor sp = make([&](kb_tensor** o) {
    return kb_sparse_from_coo(idx_ok, &one, KB_FLOAT32, 1, dense23, 2, KB_FLOAT32, "s", o);
  });
  Tensor labels = constant<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor lengths2 = constant<int32_t>({1, 2}, {2});
  Tensor lengths3 = constant<int32_t>({1, 2, 3}, {3});
  kb_tensor *i = kT, *v = kT, *d = kT;
  run_cases({
      CASE_T(INVALID, "sparse",
             kb_sparse_from_coo(idx_far, &one, KB_FLOAT32, 1, dense23, 2, KB_FLOAT32, "s", &out)),
      CASE_T(INVALID, "sparse",
             kb_sparse_from_coo(idx_neg, &one, KB_FLOAT32, 1, dense23, 2, KB_FLOAT32, "s", &out)),
      CASE_T(INVALID, "sparse",
             kb_sparse_from_coo(idx_ok, &one, KB_FLOAT32, 1, dense_neg, 2, KB_FLOAT32, "s", &out)),
      CASE_T(INVALID, "sparse",
             kb_sparse_from_coo(nullptr, &one, KB_FLOAT32, 1, dense23, 2, KB_FLOAT32, "s", &out)),
      CASE_T(INVALID, "sparse",
             kb_sparse_from_coo(idx_ok, nullptr, KB_FLOAT32, 1, dense23, 2, KB_FLOAT32, "s", &out)),
      CASE_T(INVALID, "sparse",
             kb_sparse_from_coo(idx_ok, &one, BAD_DT, 1, dense23, 2, KB_FLOAT32, "s", &out)),
      CASE_T(INVALID, "sparse",
             kb_sparse_from_coo(idx_ok, &one, KB_FLOAT32, 1, nullptr, 0, KB_FLOAT32, "s", &out)),
      CASE_0(INVALID, "sparse",
             kb_sparse_from_coo(idx_ok, &one, KB_FLOAT32, 1, dense23, 2, KB_FLOAT32, "s", nullptr)),
      CASE_T(INVALID, "sparse",
             kb_sparse_from_csr(indptr_bad, cols, vals, KB_FLOAT32, 2, 6, KB_FLOAT32, "s", &out)),
      CASE_T(INVALID, "sparse",
             kb_sparse_from_csr(indptr_start, cols, vals, KB_FLOAT32, 2, 6, KB_FLOAT32, "s", &out)),
      CASE_T(INVALID, "sparse",
             kb_sparse_from_csr(nullptr, cols, vals, KB_FLOAT32, 2, 6, KB_FLOAT32, "s", &out)),
      CASE_T(INVALID, "sparse",
             kb_sparse_from_csr(indptr_bad, cols, vals, KB_FLOAT32, -1, 6, KB_FLOAT32, "s", &out)),
      CASE_T(INVALID, "to_dense", kb_to_dense(nullptr, &out)),
      CASE_0(INVALID, "to_dense", kb_to_dense(sp.get(), nullptr)),
      CASE_T(INVALID, "sparse_parts", kb_sparse_parts(fx.m23.get(), &out, &v, &d)),
      CASE_T(INVALID, "sparse_parts", kb_sparse_parts(nullptr, &out, &v, &d)),
      CASE_0(INVALID, "sparse_parts", kb_sparse_parts(sp.get(), nullptr, &v, &d)),
      CASE_T(INVALID, "sparse_parts", kb_sparse_parts(sp.get(), &out, &v, nullptr)),
      CASE_T(SHAPE, "dot", kb_dot(sp.get(), fx.m23.get(), &out)),
      CASE_T(SHAPE, "ctc_label_dense_to_sparse",
             kb_ctc_label_dense_to_sparse(fx.v3.get(), lengths3.get(), &out)),
      CASE_T(SHAPE, "ctc_label_dense_to_sparse",
             kb_ctc_label_dense_to_sparse(labels.get(), lengths3.get(), &out)),
      CASE_T(SHAPE, "ctc_label_dense_to_sparse",
             kb_ctc_label_dense_to_sparse(labels.get(), labels.get(), &out)),
      CASE_T(INVALID, "ctc_label_dense_to_sparse",
             kb_ctc_label_dense_to_sparse(nullptr, lengths2.get(), &out)),
      CASE_0(INVALID, "ctc_label_dense_to_sparse",
             kb_ctc_label_dense_to_sparse(labels.get(), lengths2.get(), nullptr)),
  });
  EXPECT_EQ(v, kT);
  EXPECT_EQ(d, kT);
  EXPECT_EQ(i, kT);
}

TEST(Errors, Devices) {
  Tensor p = placeholder({2}, KB_FLOAT32, "x");
  Tensor y = bin(kb_add, p.get(), p.get());
  Function f = function({p.get()}, {y.get()});
  run_cases({
      CASE_I64(INVALID, "device_count", kb_device_count(kb_device_kind(7), &out)),
      CASE_0(INVALID, "device_count", kb_device_count(KB_DEVICE_CPU, nullptr)),
      CASE_0(INVALID, "function_set_device", kb_function_set_device(nullptr, KB_DEVICE_CPU)),
      CASE_0(INVALID, "function_set_device", kb_function_set_device(f.get(), kb_device_kind(7))),
      CASE_ENUM(kb_device_kind, INVALID, "function_device", kb_function_device(nullptr, &out)),
      CASE_0(INVALID, "function_device", kb_function_device(f.get(), nullptr)),
      CASE_I64(INVALID, "device_index", kb_device_index(KB_DEVICE_CPU, 1, &out)),
      CASE_I64(INVALID, "device_index", kb_device_index(KB_DEVICE_CPU, -1, &out)),
      CASE_I64(INVALID, "device_index", kb_device_index(kb_device_kind(7), 0, &out)),
      CASE_S(INVALID, "device_name", kb_device_name(KB_DEVICE_CPU, 0, nullptr)),
      CASE_I64(INVALID, "device_memory", kb_device_memory(KB_DEVICE_CPU, 2, &out)),
      CASE_0(INVALID, "function_set_device_name", kb_function_set_device_name(f.get(), nullptr)),
      CASE_0(INVALID, "function_set_device_name", kb_function_set_device_name(nullptr, "cpu")),
      CASE_0(INVALID, "function_set_device_name", kb_function_set_device_name(f.get(), "tpu")),
      CASE_0(INVALID, "function_set_device_name", kb_function_set_device_name(f.get(), "cuda:")),
      CASE_0(INVALID, "function_set_device_name",
             kb_function_set_device_name(f.get(), "cuda:12345")),
      CASE_0(KB_ERROR_DEVICE, "function_set_device_name",
             kb_function_set_device_name(f.get(), "cuda:4096")),
      CASE_S(INVALID, "function_device_name", kb_function_device_name(nullptr, &out)),
      CASE_0(INVALID, "function_device_name", kb_function_device_name(f.get(), nullptr)),
  });
  // The CPU: index 0, the kernel's model name, the machine's memory.
  int64_t index = -1, memory = 0;
  const char* name = nullptr;
  KB_ASSERT_OK(kb_device_index(KB_DEVICE_CPU, 0, &index));
  KB_ASSERT_OK(kb_device_name(KB_DEVICE_CPU, 0, &name));
  KB_ASSERT_OK(kb_device_memory(KB_DEVICE_CPU, 0, &memory));
  EXPECT_EQ(index, 0);
  ASSERT_NE(name, nullptr);
  EXPECT_STRNE(name, "");
  EXPECT_GT(memory, int64_t(1) << 26);
  KB_ASSERT_OK(kb_function_set_device_name(f.get(), "cpu"));
  KB_ASSERT_OK(kb_function_device_name(f.get(), &name));
  EXPECT_STREQ(name, "cpu");
  int64_t n = -1;
  KB_ASSERT_OK(kb_device_count(KB_DEVICE_CPU, &n));
  EXPECT_EQ(n, 1);
  KB_ASSERT_OK(kb_device_count(KB_DEVICE_CUDA, &n));
  ASSERT_NE(kb_cuda_unavailable_reason(), nullptr);
  if (n == 0) {
    EXPECT_STRNE(kb_cuda_unavailable_reason(), "");
    run_cases({CASE_0(KB_ERROR_DEVICE, "function_set_device",
                      kb_function_set_device(f.get(), KB_DEVICE_CUDA)),
               CASE_0(KB_ERROR_DEVICE, "function_set_device_name",
                      kb_function_set_device_name(f.get(), "cuda")),
               CASE_I64(INVALID, "device_index", kb_device_index(KB_DEVICE_CUDA, 0, &out))});
  } else {
    // The process' GPU (the emulated one in CI): its index, name and memory, and a function
    // moved to it by name.
    KB_ASSERT_OK(kb_device_index(KB_DEVICE_CUDA, 0, &index));
    KB_ASSERT_OK(kb_device_name(KB_DEVICE_CUDA, 0, &name));
    KB_ASSERT_OK(kb_device_memory(KB_DEVICE_CUDA, 0, &memory));
    EXPECT_GE(index, 0);
    EXPECT_STRNE(name, "");
    EXPECT_GT(memory, 0);
    std::string label = "cuda:" + std::to_string(index);
    KB_ASSERT_OK(kb_function_set_device_name(f.get(), label.c_str()));
    KB_ASSERT_OK(kb_function_device_name(f.get(), &name));
    EXPECT_EQ(std::string(name), label);
    Tensor in = constant_f32({1, 2}, {2});
    expect_near(out_f32(call(f, {in.get()}), 0), {2, 4});
    std::string other = "cuda:" + std::to_string(index + 1);
    run_cases({CASE_0(KB_ERROR_DEVICE, "function_set_device_name",
                      kb_function_set_device_name(f.get(), other.c_str()))});
  }
  // CPU is always accepted, and the function still computes.
  KB_ASSERT_OK(kb_function_set_device(f.get(), KB_DEVICE_CPU));
  kb_device_kind kind = KB_DEVICE_CUDA;
  KB_ASSERT_OK(kb_function_device(f.get(), &kind));
  EXPECT_EQ(kind, KB_DEVICE_CPU);
  Tensor in = constant_f32({1, 2}, {2});
  expect_near(out_f32(call(f, {in.get()}), 0), {2, 4});
}
