// Owning handles and small conveniences for the C ABI tests. Every helper that can fail throws
// std::runtime_error with kb_last_error_message(); GoogleTest reports the exception as a failure
// of the test that called it.
#pragma once
#include <gtest/gtest.h>
#include <kbackend.h>
#include <kbackend.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace kbt {

// What the C ABI returns is held in the C++ header's owning handles (kbackend.hpp), as every
// C++ program holds them; the calls themselves go through the C ABI, which these tests test.
using Tensor = kbackend::Tensor;
using Function = kbackend::Function;
using List = kbackend::detail::ListPtr;

// Throws unless status is KB_OK.
inline void ok(kb_status status, const std::string& what = "") {
  if (status != KB_OK)
    throw std::runtime_error(what + " failed with status " + std::to_string(int(status)) + ": " +
                             kb_last_error_message());
}

// A call with a kb_tensor** out-parameter, wrapped: T(kb_add(a, b, &out)) style via a lambda.
template <class F>
Tensor make(F&& f, const std::string& what = "") {
  kb_tensor* out = nullptr;
  ok(f(&out), what);
  return Tensor::adopt(out);
}

template <class T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr kb_data_type value = KB_FLOAT32;
};
template <>
struct DTypeOf<double> {
  static constexpr kb_data_type value = KB_FLOAT64;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr kb_data_type value = KB_INT32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr kb_data_type value = KB_INT64;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr kb_data_type value = KB_UINT8;
};
template <>
struct DTypeOf<bool> {
  static constexpr kb_data_type value = KB_BOOL;
};

using Shape = std::vector<int64_t>;

// A constant holding a copy of data (kb_tensor_from_data). An empty shape is a scalar.
template <class T>
Tensor constant(const std::vector<T>& data, const Shape& shape) {
  kb_tensor* out = nullptr;
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(data.begin(), data.end());
    ok(kb_tensor_from_data(bytes.data(), KB_BOOL, shape.data(), shape.size(), &out),
       "tensor_from_data");
  } else {
    ok(kb_tensor_from_data(data.data(), DTypeOf<T>::value, shape.data(), shape.size(), &out),
       "tensor_from_data");
  }
  return Tensor::adopt(out);
}
inline Tensor constant_f32(const std::vector<float>& data, const Shape& shape) {
  return constant<float>(data, shape);
}
inline Tensor scalar_f32(float v) { return constant<float>({v}, {}); }

// A variable of the data's dtype (kb_variable).
template <class T>
Tensor variable(const std::vector<T>& data, const Shape& shape, const char* name = nullptr) {
  kb_tensor* out = nullptr;
  ok(kb_variable(data.data(), DTypeOf<T>::value, shape.data(), shape.size(), DTypeOf<T>::value,
                 name, &out),
     "variable");
  return Tensor::adopt(out);
}
inline Tensor variable_f32(const std::vector<float>& data, const Shape& shape,
                           const char* name = nullptr) {
  return variable<float>(data, shape, name);
}

inline Tensor placeholder(const Shape& shape, kb_data_type dtype = KB_FLOAT32,
                          const char* name = nullptr) {
  kb_tensor* out = nullptr;
  ok(kb_placeholder(shape.data(), shape.size(), int64_t(shape.size()), dtype, 0, name, &out),
     "placeholder");
  return Tensor::adopt(out);
}

inline kb_data_type dtype_of(kb_tensor* t) {
  kb_data_type d = KB_DTYPE_DEFAULT;
  ok(kb_dtype(t, &d), "dtype");
  return d;
}

inline Shape int_shape(kb_tensor* t) {
  int64_t nd = 0;
  ok(kb_int_shape(t, nullptr, 0, &nd), "int_shape");
  if (nd < 0) throw std::runtime_error("int_shape: unknown rank");
  Shape s(static_cast<size_t>(nd));
  ok(kb_int_shape(t, s.data(), s.size(), &nd), "int_shape");
  return s;
}

// The value of t (kb_tensor_copy_to), which must have dtype T.
template <class T>
std::vector<T> values(kb_tensor* t) {
  kb_data_type d = dtype_of(t);
  if (d != DTypeOf<T>::value)
    throw std::runtime_error("values: tensor has dtype " + std::string(kb_dtype_name(d)) +
                             ", expected " + kb_dtype_name(DTypeOf<T>::value));
  size_t nbytes = 0;
  ok(kb_tensor_nbytes(t, &nbytes), "tensor_nbytes");
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> raw(nbytes);
    ok(kb_tensor_copy_to(t, raw.data(), raw.size()), "tensor_copy_to");
    return std::vector<bool>(raw.begin(), raw.end());
  } else {
    std::vector<T> out(nbytes / sizeof(T));
    ok(kb_tensor_copy_to(t, out.data(), nbytes), "tensor_copy_to");
    return out;
  }
}
inline std::vector<float> values_f32(kb_tensor* t) { return values<float>(t); }
inline std::vector<float> values_f32(const Tensor& t) { return values<float>(t.get()); }

// kb_function over borrowed handles.
inline Function function(const std::vector<kb_tensor*>& inputs,
                         const std::vector<kb_tensor*>& outputs,
                         const std::vector<kb_tensor*>& updates = {}) {
  kb_compiled_function* f = nullptr;
  ok(kb_function(inputs.data(), inputs.size(), outputs.data(), outputs.size(), updates.data(),
                 updates.size(), &f),
     "function");
  return Function::adopt(f);
}

inline List call(kb_compiled_function* f, const std::vector<kb_tensor*>& inputs = {}) {
  kb_tensor_list* out = nullptr;
  ok(kb_function_call(f, inputs.data(), inputs.size(), &out), "function call");
  return List(out);
}
inline List call(const Function& f, const std::vector<kb_tensor*>& inputs = {}) {
  return call(f.get(), inputs);
}

inline Tensor at(const List& l, size_t i) {
  kb_tensor* out = nullptr;
  ok(kb_tensor_list_get(l.get(), i, &out), "tensor_list_get");
  return Tensor::adopt(out);
}

// Values of output i of a call.
inline std::vector<float> out_f32(const List& l, size_t i) { return values_f32(at(l, i)); }

inline Tensor eval(kb_tensor* x) {
  return make([&](kb_tensor** o) { return kb_eval(x, o); });
}

// One-tensor and two-tensor entry points: un(kb_square, x), bin(kb_add, x, y).
using UnaryFn = kb_status (*)(kb_tensor*, kb_tensor**);
using BinaryFn = kb_status (*)(kb_tensor*, kb_tensor*, kb_tensor**);
inline Tensor un(UnaryFn f, kb_tensor* x) {
  kb_tensor* out = nullptr;
  ok(f(x, &out), "unary op");
  return Tensor::adopt(out);
}
inline Tensor bin(BinaryFn f, kb_tensor* x, kb_tensor* y) {
  kb_tensor* out = nullptr;
  ok(f(x, y, &out), "binary op");
  return Tensor::adopt(out);
}

inline std::string tensor_name(kb_tensor* t) {
  const char* name = nullptr;
  ok(kb_tensor_name(t, &name), "tensor_name");
  return name;
}

// Expects every value near the expected one (relative + absolute tolerance).
inline void expect_near(const std::vector<float>& got, const std::vector<float>& want,
                        double tol = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::abs(double(want[i])))) << "at index " << i;
}
inline void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                        double tol = 1e-10) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << "at index " << i;
}

inline bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// Whatever the global state a test touches, put it back when the test ends.
class ConfigGuard {
 public:
  ConfigGuard() {
    ok(kb_epsilon(&epsilon_));
    ok(kb_floatx(&floatx_));
    ok(kb_image_data_format(&format_));
  }
  ~ConfigGuard() {
    kb_set_epsilon(epsilon_);
    kb_set_floatx(floatx_);
    kb_set_image_data_format(format_);
    kb_clear_error();
  }
  ConfigGuard(const ConfigGuard&) = delete;
  ConfigGuard& operator=(const ConfigGuard&) = delete;

 private:
  double epsilon_ = 0;
  kb_data_type floatx_ = KB_FLOAT32;
  kb_data_format format_ = KB_CHANNELS_LAST;
};

}  // namespace kbt

// Asserts KB_OK, printing the library's message otherwise.
#define KB_ASSERT_OK(expr)                                                           \
  do {                                                                               \
    kb_status kb_assert_status_ = (expr);                                            \
    ASSERT_EQ(kb_assert_status_, KB_OK) << #expr << ": " << kb_last_error_message(); \
  } while (0)
#define KB_EXPECT_OK(expr)                                                           \
  do {                                                                               \
    kb_status kb_expect_status_ = (expr);                                            \
    EXPECT_EQ(kb_expect_status_, KB_OK) << #expr << ": " << kb_last_error_message(); \
  } while (0)
