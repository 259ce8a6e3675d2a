// kbackend for C++: a header-only RAII layer over the C ABI of kbackend.h (C++17).
//
//   #include <kbackend.hpp>
//   namespace K = kbackend;
//   K::Tensor x = K::placeholder({-1, 3}, K::DType::float32, "x");      // (None, 3)
//   K::Tensor w = K::variable({0.5f, -1.0f, 2.0f}, {3, 1}, K::DType::float32, "w");
//   K::Tensor y = K::sigmoid(K::dot(x, w) * 2.0 + 1.0);
//   K::Function f({x}, {y});
//   std::vector<float> out = f({K::Tensor::from({1.f, 2.f, 3.f}, {1, 3})})[0].to_vector<float>();
//
// Design (the Rust binding's, in C++):
// - Errors: every failing kb_status becomes a kbackend::Error (a std::runtime_error) carrying the
//   status and kb_last_error_message(), which names the Keras function ("reshape: ...").
// - Tensor owns one reference to a graph value. Copying a Tensor retains the reference (both
//   copies name the same graph value, like std::shared_ptr; a graph value is immutable, so
//   sharing is safe), moving it transfers the reference and leaves the source empty, and the
//   destructor releases it. A default-constructed Tensor is empty; passing an empty Tensor to a
//   function throws Error(KB_ERROR_INVALID_ARGUMENT). Tensors may be copied and released on any
//   thread (the library's reference counts are atomic).
// - Function (a compiled function) is move-only (the C ABI has no retain for it); NameScope and
//   LearningPhaseScope are neither copyable nor movable (they pop in their destructor).
// - Functions have Keras' names and Keras' defaults as C++ default arguments. Keras' None is
//   std::nullopt (optional numbers, IntList), an empty std::string (names), DType::none /
//   DataFormat::none (enums); Keras' axis lists are IntList, which takes std::nullopt, one int, a
//   braced list ({0, 1}) or a std::optional<std::vector<int64_t>>. Shapes are
//   std::vector<int64_t> with -1 for an unknown dimension.
// - Operators + - * / and unary - take Tensors and numbers (a number becomes a constant of the
//   other operand's dtype). Comparisons are named like Keras (greater, less_equal, ...): == on
//   Tensors is not defined (use same_as to compare graph identity).
// - rnn, map_fn, foldl and foldr take std::functions: a C trampoline calls them, catches any
//   exception they throw, reports it to the library with kb_set_error and, once the building call
//   has failed cleanly, rethrows the original exception (same type, same object) from it.
// - Only the C ABI is used; get(), release() and Tensor::adopt/borrow convert to and from raw
//   handles for code that mixes both layers.
// - This header holds what a table cannot say (Tensor, operators, data, callbacks, result
//   structs, richer argument types); every other function is generated from api/kbackend.toml
//   into kbackend_functions.hpp, included at the end.
#ifndef KBACKEND_HPP
#define KBACKEND_HPP

#include "kbackend.h"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kbackend {

// ---- errors --------------------------------------------------------------------------------

/// A failed call: the kb_status and the library's message (which names the function).
class Error : public std::runtime_error {
 public:
  /// An error of the given status and message.
  Error(kb_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  /// Which kind of failure (KB_ERROR_SHAPE, ...).
  kb_status status() const noexcept { return status_; }

 private:
  kb_status status_;
};

/// Throws Error(status, kb_last_error_message()) unless status is KB_OK.
inline void check(kb_status status) {
  if (status == KB_OK) return;
  const char* message = kb_last_error_message();
  if (message && *message) throw Error(status, message);
  throw Error(status, "kbackend: failed with status " + std::to_string(int(status)));
}

// ---- enums (the values of the C enums) ------------------------------------------------------

enum class DType : int32_t {
  none = KB_DTYPE_DEFAULT,  ///< Keras' None: floatx, or the input's dtype where Keras says so
  float16 = KB_FLOAT16,
  float32 = KB_FLOAT32,
  float64 = KB_FLOAT64,
  int8 = KB_INT8,
  int16 = KB_INT16,
  int32 = KB_INT32,
  int64 = KB_INT64,
  uint8 = KB_UINT8,
  bool_ = KB_BOOL,
  bfloat16 = KB_BFLOAT16,
};
enum class DataFormat : int32_t {
  none = KB_DATA_FORMAT_DEFAULT,  ///< image_data_format()
  channels_last = KB_CHANNELS_LAST,
  channels_first = KB_CHANNELS_FIRST,
};
enum class DimOrdering : int32_t { tf = KB_DIM_ORDERING_TF, th = KB_DIM_ORDERING_TH };
enum class Padding : int32_t {
  valid = KB_PADDING_VALID,
  same = KB_PADDING_SAME,
  causal = KB_PADDING_CAUSAL,
};
enum class PoolMode : int32_t { max = KB_POOL_MAX, avg = KB_POOL_AVG };
enum class Interpolation : int32_t {
  nearest = KB_INTERPOLATION_NEAREST,
  bilinear = KB_INTERPOLATION_BILINEAR,
};
enum class Device : int32_t { cpu = KB_DEVICE_CPU, cuda = KB_DEVICE_CUDA };
enum class Reduce : int32_t { sum = KB_REDUCE_SUM, average = KB_REDUCE_AVERAGE };
/// How in_train_phase and in_test_phase choose: by the training tensor (or the learning phase)
/// when the function runs, or fixed now.
enum class Training : int32_t {
  tensor = KB_TRAINING_TENSOR,
  false_ = KB_TRAINING_FALSE,
  true_ = KB_TRAINING_TRUE,
};
/// Whether a DLPack exchange copies the data (kb_dlpack_copy).
enum class DLPackCopy : int32_t {
  never = KB_DLPACK_COPY_NEVER,
  if_needed = KB_DLPACK_COPY_IF_NEEDED,
  always = KB_DLPACK_COPY_ALWAYS,
};

inline kb_data_type to_c(DType d) noexcept { return static_cast<kb_data_type>(d); }
inline kb_data_format to_c(DataFormat f) noexcept { return static_cast<kb_data_format>(f); }
inline kb_dim_ordering to_c(DimOrdering o) noexcept { return static_cast<kb_dim_ordering>(o); }
inline kb_padding to_c(Padding p) noexcept { return static_cast<kb_padding>(p); }
inline kb_pool_mode to_c(PoolMode m) noexcept { return static_cast<kb_pool_mode>(m); }
inline kb_interpolation to_c(Interpolation i) noexcept { return static_cast<kb_interpolation>(i); }
inline kb_device_kind to_c(Device d) noexcept { return static_cast<kb_device_kind>(d); }
inline kb_dlpack_copy to_c(DLPackCopy c) noexcept { return static_cast<kb_dlpack_copy>(c); }
inline kb_reduce_op to_c(Reduce r) noexcept { return static_cast<kb_reduce_op>(r); }
inline kb_training to_c(Training t) noexcept { return static_cast<kb_training>(t); }

/// Keras' name of a dtype ("float32"); throws for DType::none.
inline std::string to_string(DType d) {
  const char* n = kb_dtype_name(to_c(d));
  if (!n) throw Error(KB_ERROR_DTYPE, "dtype_name: invalid dtype " + std::to_string(int(d)));
  return n;
}

/// The C++ element type of each dtype (float16 has none: cast such tensors to float32).
template <class T>
struct Element {
  static constexpr bool supported = false;  ///< whether T is the element type of a dtype
};
#define KBACKEND_HPP_ELEMENT(T, D)           \
  template <>                                \
  struct Element<T> {                        \
    static constexpr bool supported = true;  \
    static constexpr DType dtype = DType::D; \
  }
KBACKEND_HPP_ELEMENT(float, float32);
KBACKEND_HPP_ELEMENT(double, float64);
KBACKEND_HPP_ELEMENT(int8_t, int8);
KBACKEND_HPP_ELEMENT(int16_t, int16);
KBACKEND_HPP_ELEMENT(int32_t, int32);
KBACKEND_HPP_ELEMENT(int64_t, int64);
KBACKEND_HPP_ELEMENT(uint8_t, uint8);
KBACKEND_HPP_ELEMENT(bool, bool_);
#undef KBACKEND_HPP_ELEMENT

namespace detail {
/// A list C reads as given: a valid pointer even when empty.
inline const int64_t* ints(const std::vector<int64_t>& v) noexcept {
  static const int64_t empty = 0;
  return v.empty() ? &empty : v.data();
}
}  // namespace detail

/// An optional list of integers: Keras' None or a tuple of ints (axis=None / 1 / (0, 1)).
/// IntList() and std::nullopt are None; 1 is (1,); {0, 1} is (0, 1); {} is None (write
/// std::vector<int64_t>{} for an empty tuple).
class IntList {
 public:
  IntList() noexcept = default;
  /// None, one axis, a braced list, a vector, an optional vector.
  ///@{
  IntList(std::nullopt_t) noexcept {}
  IntList(int64_t value) : values_(std::vector<int64_t>{value}) {}
  IntList(std::initializer_list<int64_t> values) : values_(std::vector<int64_t>(values)) {}
  IntList(std::vector<int64_t> values) : values_(std::move(values)) {}
  IntList(std::optional<std::vector<int64_t>> values) : values_(std::move(values)) {}
  ///@}

  /// Whether it is None.
  bool is_none() const noexcept { return !values_.has_value(); }
  /// The list, or std::nullopt for None.
  const std::optional<std::vector<int64_t>>& value() const noexcept { return values_; }
  /// For the C ABI: NULL for None, a valid pointer (even for an empty list) otherwise.
  const int64_t* data() const noexcept { return values_ ? detail::ints(*values_) : nullptr; }
  /// How many integers (0 for None).
  size_t size() const noexcept { return values_ ? values_->size() : 0; }

 private:
  std::optional<std::vector<int64_t>> values_;
};
using Axes = IntList;

// ---- Tensor ---------------------------------------------------------------------------------

class Tensor;
namespace detail {
template <class F>
Tensor out_tensor(F&& f);
struct DLPackRelease {
  void operator()(DLManagedTensorVersioned* m) const noexcept { kb_dlpack_release(m); }
  void operator()(DLManagedTensor* m) const noexcept { kb_dlpack_release_unversioned(m); }
};
}  // namespace detail

/// A DLPack managed tensor this program owns (include/kbackend.h, DLPack): its deleter runs when
/// it goes, unless release() handed it to a consumer first.
using DLPackTensor = std::unique_ptr<DLManagedTensorVersioned, detail::DLPackRelease>;
/// The same for DLPack's unversioned struct.
using DLPackTensorUnversioned = std::unique_ptr<DLManagedTensor, detail::DLPackRelease>;

/// One reference to a kbackend graph value (placeholder, variable, constant or op result).
class Tensor {
 public:
  Tensor() noexcept = default;  ///< empty
  /// Copying retains the graph value (both name it); moving transfers it, leaving the source
  /// empty.
  ///@{
  Tensor(const Tensor& other) noexcept : t_(other.t_) {
    if (t_) kb_tensor_retain(t_);
  }
  Tensor(Tensor&& other) noexcept : t_(std::exchange(other.t_, nullptr)) {}
  Tensor& operator=(const Tensor& other) noexcept {
    if (other.t_) kb_tensor_retain(other.t_);
    kb_tensor_release(std::exchange(t_, other.t_));
    return *this;
  }
  Tensor& operator=(Tensor&& other) noexcept {
    if (this != &other) kb_tensor_release(std::exchange(t_, std::exchange(other.t_, nullptr)));
    return *this;
  }
  ///@}
  ~Tensor() { kb_tensor_release(t_); }

  /// Takes over a reference the caller owns (a new reference from the C ABI).
  static Tensor adopt(kb_tensor* t) noexcept {
    Tensor r;
    r.t_ = t;
    return r;
  }
  /// Retains a borrowed handle.
  static Tensor borrow(kb_tensor* t) noexcept {
    if (t) kb_tensor_retain(t);
    return adopt(t);
  }
  /// The C handle, still owned by this Tensor.
  kb_tensor* get() const noexcept { return t_; }
  /// Gives up the reference (the caller must release it).
  kb_tensor* release() noexcept { return std::exchange(t_, nullptr); }
  /// Whether it holds a graph value.
  explicit operator bool() const noexcept { return t_ != nullptr; }

  /// A constant holding a copy of data (row-major) with the given shape (1-D when omitted).
  ///@{
  template <class T>
  static Tensor from(const std::vector<T>& data, const std::vector<int64_t>& shape);
  template <class T>
  static Tensor from(const std::vector<T>& data) {
    return from(data, {int64_t(data.size())});
  }
  template <class T>
  static Tensor from(std::initializer_list<T> data, const std::vector<int64_t>& shape) {
    return from(std::vector<T>(data), shape);
  }
  template <class T>
  static Tensor from(std::initializer_list<T> data) {
    return from(std::vector<T>(data));
  }
  ///@}
  /// A scalar constant.
  template <class T>
  static Tensor scalar(T value) {
    return from(std::vector<T>{value}, {});
  }
  /// A scalar constant of this tensor's dtype (how the operators take numbers).
  Tensor scalar_like(double value) const {
    kb_data_type d = to_c(dtype());
    return detail::out_tensor([&](kb_tensor** o) {
      return kb_constant(&value, KB_FLOAT64, nullptr, 0, d, nullptr, 0, nullptr, o);
    });
  }

  /// The value as a flat row-major vector; T must match dtype() (else Error KB_ERROR_DTYPE).
  /// Works for constants, variables and tensors that need no placeholder.
  template <class T>
  std::vector<T> to_vector() const;
  /// The single value of a one-element tensor.
  template <class T>
  T item() const {
    std::vector<T> v = to_vector<T>();
    if (v.size() != 1)
      throw Error(KB_ERROR_SHAPE, "item: the tensor has " + std::to_string(v.size()) + " values");
    return v[0];
  }
  /// DLPack: the value lent to another library without a copy (a constant's read-only), valid
  /// until the managed tensor's deleter runs (include/kbackend.h, DLPack).
  DLPackTensor to_dlpack(DLPackCopy copy = DLPackCopy::never) const {
    DLManagedTensorVersioned* m = nullptr;
    check(kb_tensor_to_dlpack(t_, to_c(copy), &m));
    return DLPackTensor(m);
  }
  /// The same as DLPack's unversioned struct, for consumers that need it.
  DLPackTensorUnversioned to_dlpack_unversioned(DLPackCopy copy = DLPackCopy::never) const {
    DLManagedTensor* m = nullptr;
    check(kb_tensor_to_dlpack_unversioned(t_, to_c(copy), &m));
    return DLPackTensorUnversioned(m);
  }
  /// A constant over another library's memory. The library takes `managed` on success (the
  /// pointer is released); on failure it stays the caller's and Error is thrown.
  ///@{
  static Tensor from_dlpack(DLPackTensor& managed, DLPackCopy copy = DLPackCopy::if_needed) {
    Tensor t = detail::out_tensor(
        [&](kb_tensor** o) { return kb_tensor_from_dlpack(managed.get(), to_c(copy), o); });
    managed.release();
    return t;
  }
  static Tensor from_dlpack(DLPackTensorUnversioned& managed,
                            DLPackCopy copy = DLPackCopy::if_needed) {
    Tensor t = detail::out_tensor([&](kb_tensor** o) {
      return kb_tensor_from_dlpack_unversioned(managed.get(), to_c(copy), o);
    });
    managed.release();
    return t;
  }
  ///@}
  /// A constant with this tensor's value (Keras' eval).
  Tensor eval() const {
    return detail::out_tensor([&](kb_tensor** o) { return kb_eval(t_, o); });
  }

  /// Keras' int_shape: std::nullopt for an unknown rank, -1 for an unknown dimension.
  std::optional<std::vector<int64_t>> int_shape() const {
    std::vector<int64_t> dims(8);
    int64_t rank = 0;
    check(kb_int_shape(t_, dims.data(), dims.size(), &rank));
    if (rank < 0) return std::nullopt;
    if (size_t(rank) > dims.size()) {
      dims.resize(size_t(rank));
      check(kb_int_shape(t_, dims.data(), dims.size(), &rank));
    }
    dims.resize(size_t(rank));
    return dims;
  }
  /// The static shape (-1 for an unknown dimension); throws Error(KB_ERROR_SHAPE) when even the
  /// rank is unknown. (kbackend::shape(x) is Keras' symbolic shape tensor.)
  std::vector<int64_t> shape() const {
    std::optional<std::vector<int64_t>> s = int_shape();
    if (!s) throw Error(KB_ERROR_SHAPE, "shape: the rank of '" + name() + "' is unknown");
    return *s;
  }
  /// The rank; -1 when it is unknown.
  int64_t ndim() const {
    int64_t out = 0;
    check(kb_ndim(t_, &out));
    return out;
  }
  /// Keras' dtype(x).
  DType dtype() const {
    kb_data_type out{};
    check(kb_dtype(t_, &out));
    return static_cast<DType>(out);
  }
  /// The tensor's name ("dense_1/kernel:0" style for variables).
  std::string name() const {
    const char* out = nullptr;
    check(kb_tensor_name(t_, &out));
    return out ? out : "";
  }
  /// Equal ids mean the same graph value.
  uint64_t id() const {
    uint64_t out = 0;
    check(kb_tensor_id(t_, &out));
    return out;
  }
  /// Whether both name the same graph value.
  bool same_as(const Tensor& other) const { return id() == other.id(); }
  /// Marks it as a Keras tensor (is_keras_tensor).
  void set_keras_tensor(bool flag) const { check(kb_tensor_set_keras_tensor(t_, flag ? 1 : 0)); }
  /// Whether its value depends on the learning phase.
  bool uses_learning_phase() const {
    int32_t out = 0;
    check(kb_tensor_uses_learning_phase(t_, &out));
    return out != 0;
  }

 private:
  kb_tensor* t_ = nullptr;
};

namespace detail {

/// Owns the new reference t the library returned.
inline Tensor adopt(kb_tensor* t) {
  if (!t) throw Error(KB_ERROR_INTERNAL, "kbackend: the library returned no tensor");
  return Tensor::adopt(t);
}

/// Calls f(&out) and wraps the new reference it returns.
template <class F>
Tensor out_tensor(F&& f) {
  kb_tensor* out = nullptr;
  check(f(&out));
  return adopt(out);
}

inline std::vector<kb_tensor*> handles(const std::vector<Tensor>& ts) {
  std::vector<kb_tensor*> h;
  h.reserve(ts.size());
  for (const Tensor& t : ts) h.push_back(t.get());
  return h;
}

inline const char* name_or_null(const std::string& s) noexcept {
  return s.empty() ? nullptr : s.c_str();
}

struct ListDeleter {
  void operator()(kb_tensor_list* l) const noexcept { kb_tensor_list_release(l); }
};
using ListPtr = std::unique_ptr<kb_tensor_list, ListDeleter>;

/// The items of a list (which is released).
inline std::vector<Tensor> take_list(kb_tensor_list* raw) {
  ListPtr list(raw);
  size_t n = kb_tensor_list_size(list.get());
  std::vector<Tensor> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i)
    out.push_back(out_tensor([&](kb_tensor** o) { return kb_tensor_list_get(list.get(), i, o); }));
  return out;
}

template <class F>
std::vector<Tensor> out_list(F&& f) {
  kb_tensor_list* out = nullptr;
  check(f(&out));
  return take_list(out);
}

inline size_t element_count(const std::vector<int64_t>& shape, const char* who) {
  size_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error(KB_ERROR_INVALID_ARGUMENT, std::string(who) + ": negative dimension");
    n *= size_t(d);
  }
  return n;
}

/// data as bytes the C ABI can read (std::vector<bool> is packed: copy it to one byte each).
template <class T>
struct RawData {
  explicit RawData(const std::vector<T>& v) : data(v.data()) {}
  const void* data;
};
template <>
struct RawData<bool> {
  explicit RawData(const std::vector<bool>& v) : bytes(v.begin(), v.end()), data(bytes.data()) {}
  std::vector<uint8_t> bytes;
  const void* data;
};

template <class T>
void check_data(const std::vector<T>& data, const std::vector<int64_t>& shape, const char* who) {
  static_assert(Element<T>::supported,
                "kbackend: the element type must be float, double, int8_t, int16_t, int32_t, "
                "int64_t, uint8_t or bool");
  size_t n = element_count(shape, who);
  if (n != data.size())
    throw Error(KB_ERROR_SHAPE, std::string(who) + ": " + std::to_string(data.size()) +
                                    " values for a shape of " + std::to_string(n) + " elements");
}

}  // namespace detail

template <class T>
Tensor Tensor::from(const std::vector<T>& data, const std::vector<int64_t>& shape) {
  detail::check_data(data, shape, "tensor_from_data");
  detail::RawData<T> raw(data);
  return detail::out_tensor([&](kb_tensor** o) {
    return kb_tensor_from_data(raw.data, to_c(Element<T>::dtype), shape.data(), shape.size(), o);
  });
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  static_assert(Element<T>::supported,
                "kbackend: to_vector needs float, double, int8_t, int16_t, int32_t, int64_t, "
                "uint8_t or bool");
  DType d = dtype();
  if (d != Element<T>::dtype)
    throw Error(KB_ERROR_DTYPE, "to_vector: the tensor is " + to_string(d) + ", not " +
                                    to_string(Element<T>::dtype));
  std::optional<std::vector<int64_t>> s = int_shape();
  bool known = s.has_value();
  if (s)
    for (int64_t v : *s) known = known && v >= 0;
  Tensor value = known ? *this : eval();
  size_t nbytes = 0;
  check(kb_tensor_nbytes(value.get(), &nbytes));
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(nbytes);
    check(kb_tensor_copy_to(value.get(), bytes.data(), nbytes));
    return std::vector<bool>(bytes.begin(), bytes.end());
  } else {
    std::vector<T> out(nbytes / sizeof(T));
    check(kb_tensor_copy_to(value.get(), out.data(), nbytes));
    return out;
  }
}

// ---- library, config ------------------------------------------------------------------------

inline DType floatx() {
  kb_data_type out{};
  check(kb_floatx(&out));
  return static_cast<DType>(out);
}
inline void manual_variable_initialization(bool value) {
  check(kb_manual_variable_initialization(value ? 1 : 0));
}

/// Keras' `with K.learning_phase_scope(value):` as an object: the phase is `value` until the
/// scope is destroyed. Scopes nest (destroy them in reverse order, as blocks do).
class LearningPhaseScope {
 public:
  /// Sets the learning phase to value (0 test, 1 train) until the scope ends.
  explicit LearningPhaseScope(int value) { check(kb_learning_phase_scope_push(value)); }
  ~LearningPhaseScope() { kb_learning_phase_scope_pop(); }
  LearningPhaseScope(const LearningPhaseScope&) = delete;
  LearningPhaseScope& operator=(const LearningPhaseScope&) = delete;
};

/// Keras' `with K.name_scope(name):`: tensors made while it lives are named "name/...".
class NameScope {
 public:
  /// Prefixes the names of tensors made until the scope ends with name/.
  explicit NameScope(const std::string& name) { check(kb_name_scope_push(name.c_str())); }
  ~NameScope() { kb_name_scope_pop(); }
  NameScope(const NameScope&) = delete;
  NameScope& operator=(const NameScope&) = delete;
};

/// auto scope = kbackend::name_scope("block1");  (guaranteed copy elision)
[[nodiscard]] inline NameScope name_scope(const std::string& name) { return NameScope(name); }
[[nodiscard]] inline LearningPhaseScope learning_phase_scope(int value) {
  return LearningPhaseScope(value);
}

/// Keras' cast_to_floatx: the values converted to floatx, as a constant (1-D when no shape).
template <class T>
Tensor cast_to_floatx(const std::vector<T>& values, const std::vector<int64_t>& shape) {
  detail::check_data(values, shape, "cast_to_floatx");
  DType fx = floatx();
  size_t size = fx == DType::float64 ? 8 : fx == DType::float32 ? 4 : 2;
  std::vector<unsigned char> buffer(values.size() * size);
  detail::RawData<T> raw(values);
  check(kb_cast_to_floatx(raw.data, to_c(Element<T>::dtype), values.size(), buffer.data()));
  return detail::out_tensor([&](kb_tensor** o) {
    return kb_tensor_from_data(buffer.data(), to_c(fx), shape.data(), shape.size(), o);
  });
}
template <class T>
Tensor cast_to_floatx(const std::vector<T>& values) {
  return cast_to_floatx(values, {int64_t(values.size())});
}

// ---- create ---------------------------------------------------------------------------------

/// Keras' variable(value, dtype=None, name=None): dtype none is floatx, as in Keras.
template <class T>
Tensor variable(const std::vector<T>& value, const std::vector<int64_t>& shape,
                DType dtype = DType::none, const std::string& name = {}) {
  detail::check_data(value, shape, "variable");
  detail::RawData<T> raw(value);
  return detail::out_tensor([&](kb_tensor** o) {
    return kb_variable(raw.data, to_c(Element<T>::dtype), shape.data(), shape.size(), to_c(dtype),
                       detail::name_or_null(name), o);
  });
}
template <class T>
Tensor variable(std::initializer_list<T> value, const std::vector<int64_t>& shape,
                DType dtype = DType::none, const std::string& name = {}) {
  return variable(std::vector<T>(value), shape, dtype, name);
}
/// A variable initialized with the value of a tensor that needs no placeholder.
inline Tensor variable(const Tensor& value, DType dtype = DType::none,
                       const std::string& name = {}) {
  return detail::out_tensor([&](kb_tensor** o) {
    return kb_variable_from_tensor(value.get(), to_c(dtype), detail::name_or_null(name), o);
  });
}

/// Keras' constant(value, dtype=None, shape=None, name=None); value_shape is the shape of value.
/// With a shape, a scalar value fills it.
template <class T>
Tensor constant(const std::vector<T>& value, const std::vector<int64_t>& value_shape,
                DType dtype = DType::none, const IntList& shape = IntList(),
                const std::string& name = {}) {
  detail::check_data(value, value_shape, "constant");
  detail::RawData<T> raw(value);
  return detail::out_tensor([&](kb_tensor** o) {
    return kb_constant(raw.data, to_c(Element<T>::dtype), value_shape.data(), value_shape.size(),
                       to_c(dtype), shape.data(), shape.size(), detail::name_or_null(name), o);
  });
}
template <class T>
Tensor constant(std::initializer_list<T> value, const std::vector<int64_t>& value_shape,
                DType dtype = DType::none, const IntList& shape = IntList(),
                const std::string& name = {}) {
  return constant(std::vector<T>(value), value_shape, dtype, shape, name);
}
inline Tensor constant(double value, DType dtype = DType::none, const IntList& shape = IntList(),
                       const std::string& name = {}) {
  return constant(std::vector<double>{value}, {}, dtype, shape, name);
}

/// Keras' placeholder(shape, dtype=None, sparse=False, name=None).
inline Tensor placeholder(const std::vector<int64_t>& shape, DType dtype = DType::none,
                          const std::string& name = {}, bool sparse = false) {
  return detail::out_tensor([&](kb_tensor** o) {
    return kb_placeholder(shape.data(), shape.size(), int64_t(shape.size()), to_c(dtype),
                          sparse ? 1 : 0, detail::name_or_null(name), o);
  });
}
/// Keras' placeholder(shape=None, ndim=ndim): ndim unknown dimensions; ndim < 0: unknown rank.
inline Tensor placeholder_ndim(int64_t ndim, DType dtype = DType::none,
                               const std::string& name = {}, bool sparse = false) {
  return detail::out_tensor([&](kb_tensor** o) {
    return kb_placeholder(nullptr, 0, ndim, to_c(dtype), sparse ? 1 : 0, detail::name_or_null(name),
                          o);
  });
}

/// A sparse tensor from COO data: indices holds nnz x rank coordinates, row-major; values are
/// converted to dtype (none: floatx). Functions see its dense value except dot (sparse x dense
/// matrix) and concatenate (all sparse), which keep it sparse.
template <class T>
inline Tensor sparse_from_coo(const std::vector<int64_t>& indices, const std::vector<T>& values,
                              const std::vector<int64_t>& dense_shape, DType dtype = DType::none,
                              const std::string& name = {}) {
  static_assert(Element<T>::supported, "kbackend: unsupported element type");
  if (indices.size() != values.size() * dense_shape.size())
    throw Error(KB_ERROR_INVALID_ARGUMENT, "sparse: indices must hold nnz x rank coordinates");
  detail::RawData<T> raw(values);
  return detail::out_tensor([&](kb_tensor** o) {
    return kb_sparse_from_coo(indices.data(), raw.data, to_c(Element<T>::dtype), values.size(),
                              dense_shape.data(), dense_shape.size(), to_c(dtype),
                              detail::name_or_null(name), o);
  });
}
/// A (rows, cols) sparse matrix in CSR form (scipy.sparse.csr_matrix): indptr has rows + 1
/// entries, row r's entries are col_indices / values [indptr[r], indptr[r + 1]).
template <class T>
inline Tensor sparse_from_csr(const std::vector<int64_t>& indptr,
                              const std::vector<int64_t>& col_indices, const std::vector<T>& values,
                              int64_t rows, int64_t cols, DType dtype = DType::none,
                              const std::string& name = {}) {
  static_assert(Element<T>::supported, "kbackend: unsupported element type");
  if (rows < 0 || indptr.size() != size_t(rows) + 1 || col_indices.size() != values.size() ||
      (!indptr.empty() && indptr.back() != int64_t(values.size())))
    throw Error(KB_ERROR_INVALID_ARGUMENT,
                "sparse_from_csr: indptr must hold rows + 1 offsets ending at the entries' count, "
                "and col_indices one index per value");
  detail::RawData<T> raw(values);
  return detail::out_tensor([&](kb_tensor** o) {
    return kb_sparse_from_csr(indptr.data(), col_indices.data(), raw.data, to_c(Element<T>::dtype),
                              rows, cols, to_c(dtype), detail::name_or_null(name), o);
  });
}

// ---- inspect --------------------------------------------------------------------------------

#define KBACKEND_HPP_PREDICATE(fn)  \
  inline bool fn(const Tensor& x) { \
    int32_t out = 0;                \
    check(kb_##fn(x.get(), &out));  \
    return out != 0;                \
  }
KBACKEND_HPP_PREDICATE(is_sparse)
KBACKEND_HPP_PREDICATE(is_keras_tensor)
KBACKEND_HPP_PREDICATE(is_tensor)
KBACKEND_HPP_PREDICATE(is_placeholder)
#undef KBACKEND_HPP_PREDICATE

/// Keras' shape(x): the dynamic shape as a symbolic int32 vector (Tensor::shape() is static).
inline Tensor shape(const Tensor& x) {
  return detail::out_tensor([&](kb_tensor** o) { return kb_shape(x.get(), o); });
}
inline std::optional<std::vector<int64_t>> int_shape(const Tensor& x) { return x.int_shape(); }
inline std::vector<int64_t> get_variable_shape(const Tensor& x) {
  std::vector<int64_t> dims(64);
  int64_t rank = 0;
  check(kb_get_variable_shape(x.get(), dims.data(), dims.size(), &rank));
  dims.resize(rank < 0 ? 0 : size_t(rank));
  return dims;
}
inline int64_t ndim(const Tensor& x) { return x.ndim(); }
inline DType dtype(const Tensor& x) { return x.dtype(); }

// ---- values ---------------------------------------------------------------------------------

inline Tensor eval(const Tensor& x) { return x.eval(); }
inline void set_value(const Tensor& x, const Tensor& value) {
  check(kb_set_value(x.get(), value.get()));
}
template <class T>
void set_value(const Tensor& x, const std::vector<T>& value, const std::vector<int64_t>& shape) {
  detail::check_data(value, shape, "set_value");
  detail::RawData<T> raw(value);
  check(kb_set_value_data(x.get(), raw.data, to_c(Element<T>::dtype), shape.data(), shape.size()));
}
template <class T>
void set_value(const Tensor& x, std::initializer_list<T> value, const std::vector<int64_t>& shape) {
  set_value(x, std::vector<T>(value), shape);
}
/// Keras' batch_set_value(tuples): (variable, value) pairs.
inline void batch_set_value(const std::vector<std::pair<Tensor, Tensor>>& tuples) {
  std::vector<kb_tensor*> xs, values;
  for (const auto& [x, v] : tuples) {
    xs.push_back(x.get());
    values.push_back(v.get());
  }
  check(kb_batch_set_value(xs.data(), values.data(), xs.size()));
}

namespace detail {
struct PrintSink {
  std::mutex mutex;
  std::function<void(const std::string&)> fn;
};
inline PrintSink& print_sink() {
  static PrintSink sink;
  return sink;
}
inline void print_trampoline(const char* text, void* user_data) noexcept {
  auto* sink = static_cast<PrintSink*>(user_data);
  try {
    std::lock_guard<std::mutex> lock(sink->mutex);
    if (sink->fn) sink->fn(text ? text : "");
  } catch (...) {  // nowhere to report it: print_tensor has no status
  }
}
}  // namespace detail

/// Where print_tensor writes (default: stderr); an empty function restores the default. The
/// sink may be called from the threads that run functions; it must not call set_print_sink.
inline void set_print_sink(std::function<void(const std::string&)> sink) {
  detail::PrintSink& s = detail::print_sink();
  if (!sink) {
    check(kb_set_print_sink(nullptr, nullptr));
    std::lock_guard<std::mutex> lock(s.mutex);
    s.fn = nullptr;
    return;
  }
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.fn = std::move(sink);
  }
  check(kb_set_print_sink(&detail::print_trampoline, &s));
}

// ---- function, updates, gradients ---------------------------------------------------------

/// A compiled function (Keras' K.function): inputs are fed by position with constants
/// (Tensor::from), outputs come back as constants, updates run on every call. Move-only.
class Function {
 public:
  Function() noexcept = default;  ///< empty
  /// Keras' function(inputs, outputs, updates): compiled on its first call for each input
  /// signature.
  Function(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
           const std::vector<Tensor>& updates = {}) {
    std::vector<kb_tensor*> i = detail::handles(inputs), o = detail::handles(outputs),
                            u = detail::handles(updates);
    check(kb_function(i.data(), i.size(), o.data(), o.size(), u.data(), u.size(), &f_));
  }
  /// Moving transfers the function and leaves the source empty.
  ///@{
  Function(Function&& other) noexcept : f_(std::exchange(other.f_, nullptr)) {}
  Function& operator=(Function&& other) noexcept {
    if (this != &other) kb_function_release(std::exchange(f_, std::exchange(other.f_, nullptr)));
    return *this;
  }
  ///@}
  Function(const Function&) = delete;
  Function& operator=(const Function&) = delete;
  ~Function() { kb_function_release(f_); }

  /// Takes over a handle the caller owns.
  static Function adopt(kb_compiled_function* f) noexcept {
    Function r;
    r.f_ = f;
    return r;
  }
  /// The C handle, still owned by this Function.
  kb_compiled_function* get() const noexcept { return f_; }
  /// Gives up the handle (the caller must release it).
  kb_compiled_function* release() noexcept { return std::exchange(f_, nullptr); }
  /// Whether it holds a function.
  explicit operator bool() const noexcept { return f_ != nullptr; }

  /// Runs the function (calls are serialized per function; any thread may call).
  std::vector<Tensor> call(const std::vector<Tensor>& inputs) const {
    std::vector<kb_tensor*> h = detail::handles(inputs);
    return detail::out_list(
        [&](kb_tensor_list** o) { return kb_function_call(f_, h.data(), h.size(), o); });
  }
  /// call(inputs).
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const { return call(inputs); }
  /// Runs the function writing output k into outputs[k] (kb_function_call_into: concrete tensors
  /// of the outputs' dtypes and shapes, e.g. the results of an earlier call).
  void call_into(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) const {
    std::vector<kb_tensor*> i = detail::handles(inputs), o = detail::handles(outputs);
    check(kb_function_call_into(f_, i.data(), i.size(), o.data(), o.size()));
  }

  /// The device its later calls run on (kb_function_set_device).
  void set_device(Device device) { check(kb_function_set_device(f_, to_c(device))); }
  /// The device by name: "cpu", "cuda" or "cuda:N", N being this process' GPU
  /// (kb_function_set_device_name).
  void set_device(const std::string& device) {
    if (device.find('\0') != std::string::npos)
      throw Error(KB_ERROR_INVALID_ARGUMENT, "set_device: the name holds a NUL byte");
    check(kb_function_set_device_name(f_, device.c_str()));
  }
  /// Where it runs, as "cpu" or "cuda:N".
  std::string device_name() const {
    const char* out = nullptr;
    check(kb_function_device_name(f_, &out));
    return out ? out : "";
  }
  /// The device it runs on.
  Device device() const {
    kb_device_kind out{};
    check(kb_function_device(f_, &out));
    return static_cast<Device>(out);
  }

 private:
  kb_compiled_function* f_ = nullptr;
};

/// Keras' function(inputs, outputs, updates=None).
inline Function function(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                         const std::vector<Tensor>& updates = {}) {
  return Function(inputs, outputs, updates);
}

inline Tensor stop_gradient(const Tensor& x) {
  return detail::out_tensor([&](kb_tensor** o) { return kb_stop_gradient(x.get(), o); });
}
inline std::vector<Tensor> stop_gradient(const std::vector<Tensor>& xs) {
  std::vector<Tensor> out;
  out.reserve(xs.size());
  for (const Tensor& x : xs) out.push_back(stop_gradient(x));
  return out;
}

// ---- devices --------------------------------------------------------------------------------

inline int64_t device_count(Device kind) {
  int64_t out = 0;
  check(kb_device_count(to_c(kind), &out));
  return out;
}
/// One device this process can run on.
struct DeviceInfo {
  Device kind;       ///< cpu or cuda
  int64_t index;     ///< the N of cuda:N (0 for the CPU)
  std::string name;  ///< the product name
  int64_t memory;    ///< bytes (the machine's for the CPU)
};
/// The devices this process can run on: the CPU, then its GPU if it has one.
inline std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> out;
  for (Device kind : {Device::cpu, Device::cuda}) {
    for (int64_t i = 0, n = device_count(kind); i < n; ++i) {
      DeviceInfo d{kind, 0, "", 0};
      const char* name = nullptr;
      check(kb_device_index(to_c(kind), i, &d.index));
      check(kb_device_name(to_c(kind), i, &name));
      check(kb_device_memory(to_c(kind), i, &d.memory));
      d.name = name ? name : "";
      out.push_back(d);
    }
  }
  return out;
}

// ---- data-parallel training (include/kbackend.h: kb_dist_*) ----------------------------------

/// Collectives in a graph; their gradients are collectives too.
inline Tensor all_reduce(const Tensor& x, Reduce op = Reduce::average) {
  return detail::out_tensor([&](kb_tensor** o) { return kb_all_reduce(x.get(), to_c(op), o); });
}

namespace detail {
template <class T>
T query(kb_status (*f)(T*), T initial) {
  T out = initial;
  check(f(&out));
  return out;
}
}  // namespace detail

namespace dist {
/// Joins the job the launcher started. Without MPI it throws Error(KB_ERROR_UNAVAILABLE), or with
/// required = false returns false, and the process is rank 0 of 1.
inline bool init(bool required = true) {
  kb_status s = kb_dist_init();
  if (s == KB_ERROR_UNAVAILABLE && !required) return false;
  check(s);
  return true;
}
/// Whether init has joined a job.
inline bool initialized() { return detail::query(kb_dist_initialized, int32_t(0)) != 0; }
inline int32_t rank() { return detail::query(kb_dist_rank, int32_t(0)); }
inline int32_t size() { return detail::query(kb_dist_size, int32_t(1)); }
inline int32_t local_rank() { return detail::query(kb_dist_local_rank, int32_t(0)); }
inline double timeout() { return detail::query(kb_dist_timeout, 0.0); }
/// Collectives run through the engine (a bucket of all-reduces counts once).
inline int64_t collectives() { return detail::query(kb_dist_collectives, int64_t(0)); }
inline void barrier() { check(kb_dist_barrier()); }
inline void finalize() { check(kb_dist_finalize()); }
inline void set_timeout(double seconds) { check(kb_dist_set_timeout(seconds)); }
inline std::string engine() {
  const char* e = kb_dist_engine();
  return e ? e : "";
}
/// Every variable takes rank root's value.
inline void broadcast_variables(const std::vector<Tensor>& variables, int32_t root = 0) {
  std::vector<kb_tensor*> h = detail::handles(variables);
  check(kb_dist_broadcast_variables(h.data(), h.size(), root));
}
/// The sum or average over the processes of every process' values (metrics).
template <class T>
std::vector<T> all_reduce(const std::vector<T>& values, Reduce op = Reduce::average) {
  static_assert(Element<T>::supported && !std::is_same<T, bool>::value,
                "dist::all_reduce: float, double or an integer type");
  std::vector<T> out(values.size());
  check(kb_dist_all_reduce(values.data(), out.data(), values.size(), to_c(Element<T>::dtype),
                           to_c(op)));
  return out;
}
}  // namespace dist

// ---- elementwise ----------------------------------------------------------------------------

#define KBACKEND_HPP_UNARY(fn)                                                     \
  inline Tensor fn(const Tensor& x) {                                              \
    return detail::out_tensor([&](kb_tensor** o) { return kb_##fn(x.get(), o); }); \
  }
KBACKEND_HPP_UNARY(square)
KBACKEND_HPP_UNARY(abs)
KBACKEND_HPP_UNARY(sqrt)
KBACKEND_HPP_UNARY(exp)
KBACKEND_HPP_UNARY(log)
KBACKEND_HPP_UNARY(round)
KBACKEND_HPP_UNARY(sign)
KBACKEND_HPP_UNARY(sin)
KBACKEND_HPP_UNARY(cos)
KBACKEND_HPP_UNARY(negative)
KBACKEND_HPP_UNARY(sigmoid)
KBACKEND_HPP_UNARY(hard_sigmoid)
KBACKEND_HPP_UNARY(tanh)
KBACKEND_HPP_UNARY(softplus)
KBACKEND_HPP_UNARY(softsign)
KBACKEND_HPP_UNARY(flatten)
KBACKEND_HPP_UNARY(batch_flatten)
KBACKEND_HPP_UNARY(transpose)
#undef KBACKEND_HPP_UNARY

/// max_value may be +infinity (Keras' None).
inline Tensor clip(const Tensor& x, double min_value,
                   double max_value = std::numeric_limits<double>::infinity()) {
  return detail::out_tensor(
      [&](kb_tensor** o) { return kb_clip(x.get(), min_value, max_value, o); });
}

// Binary elementwise functions of two Tensors, or of a Tensor and a number (a constant of the
// Tensor's dtype).
#define KBACKEND_HPP_BINARY(fn)                                                             \
  inline Tensor fn(const Tensor& x, const Tensor& y) {                                      \
    return detail::out_tensor([&](kb_tensor** o) { return kb_##fn(x.get(), y.get(), o); }); \
  }                                                                                         \
  inline Tensor fn(const Tensor& x, double y) { return fn(x, x.scalar_like(y)); }           \
  inline Tensor fn(double x, const Tensor& y) { return fn(y.scalar_like(x), y); }
KBACKEND_HPP_BINARY(add)
KBACKEND_HPP_BINARY(subtract)
KBACKEND_HPP_BINARY(multiply)
KBACKEND_HPP_BINARY(divide)
KBACKEND_HPP_BINARY(maximum)
KBACKEND_HPP_BINARY(minimum)
KBACKEND_HPP_BINARY(equal)
KBACKEND_HPP_BINARY(not_equal)
KBACKEND_HPP_BINARY(greater)
KBACKEND_HPP_BINARY(greater_equal)
KBACKEND_HPP_BINARY(less)
KBACKEND_HPP_BINARY(less_equal)
KBACKEND_HPP_BINARY(lesser)        // legacy name of less
KBACKEND_HPP_BINARY(lesser_equal)  // legacy name of less_equal
#undef KBACKEND_HPP_BINARY

inline Tensor operator+(const Tensor& x, const Tensor& y) { return add(x, y); }
inline Tensor operator+(const Tensor& x, double y) { return add(x, y); }
inline Tensor operator+(double x, const Tensor& y) { return add(x, y); }
inline Tensor operator-(const Tensor& x, const Tensor& y) { return subtract(x, y); }
inline Tensor operator-(const Tensor& x, double y) { return subtract(x, y); }
inline Tensor operator-(double x, const Tensor& y) { return subtract(x, y); }
inline Tensor operator*(const Tensor& x, const Tensor& y) { return multiply(x, y); }
inline Tensor operator*(const Tensor& x, double y) { return multiply(x, y); }
inline Tensor operator*(double x, const Tensor& y) { return multiply(x, y); }
inline Tensor operator/(const Tensor& x, const Tensor& y) { return divide(x, y); }
inline Tensor operator/(const Tensor& x, double y) { return divide(x, y); }
inline Tensor operator/(double x, const Tensor& y) { return divide(x, y); }
inline Tensor operator-(const Tensor& x) { return negative(x); }
inline Tensor operator+(const Tensor& x) { return x; }
/// x += y makes x name the new graph value x + y (graph values themselves never change).
inline Tensor& operator+=(Tensor& x, const Tensor& y) { return x = add(x, y); }
inline Tensor& operator+=(Tensor& x, double y) { return x = add(x, y); }
inline Tensor& operator-=(Tensor& x, const Tensor& y) { return x = subtract(x, y); }
inline Tensor& operator-=(Tensor& x, double y) { return x = subtract(x, y); }
inline Tensor& operator*=(Tensor& x, const Tensor& y) { return x = multiply(x, y); }
inline Tensor& operator*=(Tensor& x, double y) { return x = multiply(x, y); }
inline Tensor& operator/=(Tensor& x, const Tensor& y) { return x = divide(x, y); }
inline Tensor& operator/=(Tensor& x, double y) { return x = divide(x, y); }

// ---- reduce ---------------------------------------------------------------------------------

// Keras' fn(x, axis=None, keepdims=False): axis is None, an int or a list ({0, 1}).
#define KBACKEND_HPP_REDUCE(fn)                                                         \
  inline Tensor fn(const Tensor& x, const Axes& axis = Axes(), bool keepdims = false) { \
    return detail::out_tensor([&](kb_tensor** o) {                                      \
      return kb_##fn(x.get(), axis.data(), axis.size(), keepdims ? 1 : 0, o);           \
    });                                                                                 \
  }
KBACKEND_HPP_REDUCE(max)
KBACKEND_HPP_REDUCE(min)
KBACKEND_HPP_REDUCE(sum)
KBACKEND_HPP_REDUCE(prod)
KBACKEND_HPP_REDUCE(mean)
KBACKEND_HPP_REDUCE(var)
KBACKEND_HPP_REDUCE(std)  // kbackend::std (call it qualified: the name is Keras')
KBACKEND_HPP_REDUCE(any)
KBACKEND_HPP_REDUCE(all)
KBACKEND_HPP_REDUCE(logsumexp)
#undef KBACKEND_HPP_REDUCE

#define KBACKEND_HPP_AXIS(fn, default_axis)                                              \
  inline Tensor fn(const Tensor& x, int64_t axis = default_axis) {                       \
    return detail::out_tensor([&](kb_tensor** o) { return kb_##fn(x.get(), axis, o); }); \
  }
KBACKEND_HPP_AXIS(cumsum, 0)
KBACKEND_HPP_AXIS(cumprod, 0)
KBACKEND_HPP_AXIS(argmax, -1)
KBACKEND_HPP_AXIS(argmin, -1)
KBACKEND_HPP_AXIS(softmax, -1)
KBACKEND_HPP_AXIS(expand_dims, -1)
#undef KBACKEND_HPP_AXIS

// ---- shape ----------------------------------------------------------------------------------

/// n: an int (for 1-D x) or a list with one entry per axis.
inline Tensor tile(const Tensor& x, const IntList& n) {
  return detail::out_tensor([&](kb_tensor** o) { return kb_tile(x.get(), n.data(), n.size(), o); });
}
inline Tensor reverse(const Tensor& x, const Axes& axes) {
  return detail::out_tensor(
      [&](kb_tensor** o) { return kb_reverse(x.get(), axes.data(), axes.size(), o); });
}

// ---- nn -------------------------------------------------------------------------------------

inline Tensor l2_normalize(const Tensor& x, const Axes& axis = Axes()) {
  return detail::out_tensor(
      [&](kb_tensor** o) { return kb_l2_normalize(x.get(), axis.data(), axis.size(), o); });
}

// ---- paddings, resizing ---------------------------------------------------------------------

namespace detail {
inline std::vector<int64_t> flat_pairs(const std::vector<std::pair<int64_t, int64_t>>& pairs) {
  std::vector<int64_t> flat;
  for (const auto& [before, after] : pairs) {
    flat.push_back(before);
    flat.push_back(after);
  }
  return flat;
}
}  // namespace detail

/// Zero paddings: (left, right) of the steps axis of (batch, steps, features).
inline Tensor temporal_padding(const Tensor& x, std::pair<int64_t, int64_t> padding = {1, 1}) {
  int64_t p[2] = {padding.first, padding.second};
  return detail::out_tensor([&](kb_tensor** o) { return kb_temporal_padding(x.get(), p, 2, o); });
}
/// ((top, bottom), (left, right)).
inline Tensor spatial_2d_padding(const Tensor& x,
                                 const std::vector<std::pair<int64_t, int64_t>>& padding = {{1, 1},
                                                                                            {1, 1}},
                                 DataFormat data_format = DataFormat::none) {
  std::vector<int64_t> p = detail::flat_pairs(padding);
  return detail::out_tensor([&](kb_tensor** o) {
    return kb_spatial_2d_padding(x.get(), p.data(), p.size(), to_c(data_format), o);
  });
}
inline Tensor spatial_3d_padding(const Tensor& x,
                                 const std::vector<std::pair<int64_t, int64_t>>& padding = {{1, 1},
                                                                                            {1, 1},
                                                                                            {1, 1}},
                                 DataFormat data_format = DataFormat::none) {
  std::vector<int64_t> p = detail::flat_pairs(padding);
  return detail::out_tensor([&](kb_tensor** o) {
    return kb_spatial_3d_padding(x.get(), p.data(), p.size(), to_c(data_format), o);
  });
}

// ---- normalization --------------------------------------------------------------------------

/// normalize_batch_in_training's results.
struct NormalizeResult {
  Tensor normed;  ///< the normalized x
  Tensor mean;    ///< the batch mean
  Tensor var;     ///< the batch variance
};
/// Keras' normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
/// auto [normed, mean, var] = normalize_batch_in_training(...).
inline NormalizeResult normalize_batch_in_training(const Tensor& x,
                                                   const std::optional<Tensor>& gamma,
                                                   const std::optional<Tensor>& beta,
                                                   const std::vector<int64_t>& reduction_axes,
                                                   double epsilon = 1e-3) {
  kb_tensor *normed = nullptr, *mean = nullptr, *var = nullptr;
  check(kb_normalize_batch_in_training(x.get(), gamma ? gamma->get() : nullptr,
                                       beta ? beta->get() : nullptr, reduction_axes.data(),
                                       reduction_axes.size(), epsilon, &normed, &mean, &var));
  return {Tensor::adopt(normed), Tensor::adopt(mean), Tensor::adopt(var)};
}

// ---- loops: rnn, map_fn, foldl, foldr ---------------------------------------------------------
// The function is called while the graph is built (on this thread), on per-step placeholders;
// with unroll, once per step. An exception it throws stops the building call, which then
// rethrows that exception.

using StepFunction = std::function<std::pair<Tensor, std::vector<Tensor>>(
    const Tensor& input, const std::vector<Tensor>& states)>;
using MapFunction = std::function<Tensor(const Tensor& x)>;
using FoldFunction = std::function<Tensor(const Tensor& acc, const Tensor& x)>;

namespace detail {

/// Runs body; an exception is kept in `error` and reported to the library with kb_set_error.
template <class Body>
kb_status run_callback(const char* who, std::exception_ptr& error, Body&& body) noexcept {
  kb_status status = KB_ERROR_INTERNAL;
  std::string message;
  try {
    body();
    return KB_OK;
  } catch (const Error& e) {
    error = std::current_exception();
    if (e.status() != KB_OK) status = e.status();
    try {
      message = e.what();
    } catch (...) {
    }
  } catch (const std::exception& e) {
    error = std::current_exception();
    try {
      message = std::string(who) + ": the callback threw: " + e.what();
    } catch (...) {
    }
  } catch (...) {
    error = std::current_exception();
  }
  kb_set_error(status, message.empty() ? "the callback threw an exception" : message.c_str());
  return status;
}

struct StepState {
  const StepFunction* fn;
  std::exception_ptr error;
};
struct MapState {
  const MapFunction* fn;
  std::exception_ptr error;
};
struct FoldState {
  const FoldFunction* fn;
  std::exception_ptr error;
};
struct BranchState {
  const std::function<Tensor()>* fn;
  std::exception_ptr error;
};

inline kb_status branch_trampoline(void* user_data, kb_tensor** out) noexcept {
  auto* state = static_cast<BranchState*>(user_data);
  return run_callback("branch", state->error, [&] {
    Tensor r = (*state->fn)();
    if (!r) throw Error(KB_ERROR_INVALID_ARGUMENT, "branch: the function returned an empty Tensor");
    *out = r.release();
  });
}

inline kb_status step_trampoline(void* user_data, kb_tensor* input, kb_tensor* const* states,
                                 size_t n, kb_tensor** output,
                                 kb_tensor_list** new_states) noexcept {
  auto* state = static_cast<StepState*>(user_data);
  return run_callback("rnn", state->error, [&] {
    Tensor x = Tensor::borrow(input);
    std::vector<Tensor> s;
    s.reserve(n);
    for (size_t i = 0; i < n; ++i) s.push_back(Tensor::borrow(states[i]));
    std::pair<Tensor, std::vector<Tensor>> r = (*state->fn)(x, s);
    if (!r.first)
      throw Error(KB_ERROR_INVALID_ARGUMENT, "rnn: the step function returned an empty Tensor");
    std::vector<kb_tensor*> h = handles(r.second);
    kb_tensor_list* list = nullptr;
    check(kb_tensor_list_new(h.data(), h.size(), &list));
    *output = r.first.release();
    *new_states = list;
  });
}

inline kb_status map_trampoline(void* user_data, kb_tensor* x, kb_tensor** out) noexcept {
  auto* state = static_cast<MapState*>(user_data);
  return run_callback("map_fn", state->error, [&] {
    Tensor r = (*state->fn)(Tensor::borrow(x));
    if (!r) throw Error(KB_ERROR_INVALID_ARGUMENT, "map_fn: the function returned an empty Tensor");
    *out = r.release();
  });
}

inline kb_status fold_trampoline(void* user_data, kb_tensor* acc, kb_tensor* x,
                                 kb_tensor** out) noexcept {
  auto* state = static_cast<FoldState*>(user_data);
  return run_callback("fold", state->error, [&] {
    Tensor r = (*state->fn)(Tensor::borrow(acc), Tensor::borrow(x));
    if (!r) throw Error(KB_ERROR_INVALID_ARGUMENT, "fold: the function returned an empty Tensor");
    *out = r.release();
  });
}

/// After a building call: the callback's own exception, else the library's error.
inline void finish(kb_status status, const std::exception_ptr& error) {
  if (status == KB_OK) return;
  if (error) std::rethrow_exception(error);
  check(status);
}

}  // namespace detail

/// rnn's results.
struct RnnResult {
  Tensor last_output;              ///< (batch, ...)
  Tensor outputs;                  ///< (batch, time, ...)
  std::vector<Tensor> new_states;  ///< the states after the last step
};

/// Keras' rnn(step_function, inputs, initial_states, go_backwards=False, mask=None,
/// constants=None, unroll=False, input_length=None). step(input, states) gets the states followed
/// by the constants and returns (output, new_states). auto [last, outputs, states] = rnn(...).
inline RnnResult rnn(const StepFunction& step_function, const Tensor& inputs,
                     const std::vector<Tensor>& initial_states, bool go_backwards = false,
                     const std::optional<Tensor>& mask = std::nullopt,
                     const std::vector<Tensor>& constants = {}, bool unroll = false,
                     std::optional<int64_t> input_length = std::nullopt) {
  if (!step_function) throw Error(KB_ERROR_INVALID_ARGUMENT, "rnn: step_function is empty");
  detail::StepState state{&step_function, nullptr};
  std::vector<kb_tensor*> s = detail::handles(initial_states), c = detail::handles(constants);
  kb_tensor *last = nullptr, *outputs = nullptr;
  kb_tensor_list* states = nullptr;
  kb_status status =
      kb_rnn(&detail::step_trampoline, &state, inputs.get(), s.data(), s.size(),
             go_backwards ? 1 : 0, mask ? mask->get() : nullptr, c.data(), c.size(), unroll ? 1 : 0,
             input_length ? &*input_length : nullptr, &last, &outputs, &states);
  detail::finish(status, state.error);
  RnnResult r{Tensor::adopt(last), Tensor::adopt(outputs), {}};
  r.new_states = detail::take_list(states);
  return r;
}

/// Keras' map_fn(fn, elems, name=None, dtype=None): fn over the first axis of elems.
inline Tensor map_fn(const MapFunction& fn, const Tensor& elems, const std::string& name = {},
                     DType dtype = DType::none) {
  if (!fn) throw Error(KB_ERROR_INVALID_ARGUMENT, "map_fn: fn is empty");
  detail::MapState state{&fn, nullptr};
  kb_tensor* out = nullptr;
  kb_status status = kb_map_fn(&detail::map_trampoline, &state, elems.get(),
                               detail::name_or_null(name), to_c(dtype), &out);
  detail::finish(status, state.error);
  return Tensor::adopt(out);
}

/// Keras' foldl(fn, elems, initializer=None, name=None): fn(acc, x) from the first element.
inline Tensor foldl(const FoldFunction& fn, const Tensor& elems,
                    const std::optional<Tensor>& initializer = std::nullopt,
                    const std::string& name = {}) {
  if (!fn) throw Error(KB_ERROR_INVALID_ARGUMENT, "foldl: fn is empty");
  detail::FoldState state{&fn, nullptr};
  kb_tensor* out = nullptr;
  kb_status status =
      kb_foldl(&detail::fold_trampoline, &state, elems.get(),
               initializer ? initializer->get() : nullptr, detail::name_or_null(name), &out);
  detail::finish(status, state.error);
  return Tensor::adopt(out);
}

/// Keras' foldr: from the last element.
inline Tensor foldr(const FoldFunction& fn, const Tensor& elems,
                    const std::optional<Tensor>& initializer = std::nullopt,
                    const std::string& name = {}) {
  if (!fn) throw Error(KB_ERROR_INVALID_ARGUMENT, "foldr: fn is empty");
  detail::FoldState state{&fn, nullptr};
  kb_tensor* out = nullptr;
  kb_status status =
      kb_foldr(&detail::fold_trampoline, &state, elems.get(),
               initializer ? initializer->get() : nullptr, detail::name_or_null(name), &out);
  detail::finish(status, state.error);
  return Tensor::adopt(out);
}

// ---- control flow: tensors, or callables built only when chosen ------------------------------

/// A branch as Keras' callables: called at most once, while the graph is built.
using BranchFunction = std::function<Tensor()>;

namespace detail {
/// Calls the C function with two branch trampolines; the first exception a branch threw comes
/// out unchanged.
template <class F>
Tensor with_branches(const char* who, const BranchFunction& a, const BranchFunction& b, F&& call) {
  if (!a || !b) throw Error(KB_ERROR_INVALID_ARGUMENT, std::string(who) + ": a branch is empty");
  BranchState sa{&a, nullptr}, sb{&b, nullptr};
  kb_tensor* out = nullptr;
  kb_status status = call(&branch_trampoline, &sa, &sb, &out);
  finish(status, sa.error ? sa.error : sb.error);
  return Tensor::adopt(out);
}
}  // namespace detail

/// Keras' switch(condition, then_expression, else_expression): a scalar condition chooses when
/// the function runs (lazily), a tensor one elementwise.
inline Tensor switch_(const Tensor& condition, const Tensor& then_expression,
                      const Tensor& else_expression) {
  return detail::out_tensor([&](kb_tensor** o) {
    return kb_switch(condition.get(), then_expression.get(), else_expression.get(), o);
  });
}
/// switch_ with callables for the branches (kb_switch_fn).
inline Tensor switch_(const Tensor& condition, const BranchFunction& then_fn,
                      const BranchFunction& else_fn) {
  return detail::with_branches("switch", then_fn, else_fn, [&](auto t, void* a, void* b, auto o) {
    return kb_switch_fn(condition.get(), t, a, t, b, o);
  });
}

/// Keras' in_train_phase(x, alt, training=None): x in the training phase, alt otherwise; mode
/// tensor chooses by training (or the learning phase) when the function runs.
inline Tensor in_train_phase(const Tensor& x, const Tensor& alt,
                             const std::optional<Tensor>& training = std::nullopt,
                             Training mode = Training::tensor) {
  return detail::out_tensor([&](kb_tensor** o) {
    return kb_in_train_phase(x.get(), alt.get(), training ? training->get() : nullptr, to_c(mode),
                             o);
  });
}
/// in_train_phase with callables (kb_in_train_phase_fn).
inline Tensor in_train_phase(const BranchFunction& x, const BranchFunction& alt,
                             const std::optional<Tensor>& training = std::nullopt,
                             Training mode = Training::tensor) {
  return detail::with_branches("in_train_phase", x, alt, [&](auto t, void* a, void* b, auto o) {
    return kb_in_train_phase_fn(t, a, t, b, training ? training->get() : nullptr, to_c(mode), o);
  });
}

/// Keras' in_test_phase(x, alt, training=None): in_train_phase(alt, x, training).
inline Tensor in_test_phase(const Tensor& x, const Tensor& alt,
                            const std::optional<Tensor>& training = std::nullopt,
                            Training mode = Training::tensor) {
  return detail::out_tensor([&](kb_tensor** o) {
    return kb_in_test_phase(x.get(), alt.get(), training ? training->get() : nullptr, to_c(mode),
                            o);
  });
}
/// in_test_phase with callables (kb_in_test_phase_fn).
inline Tensor in_test_phase(const BranchFunction& x, const BranchFunction& alt,
                            const std::optional<Tensor>& training = std::nullopt,
                            Training mode = Training::tensor) {
  return detail::with_branches("in_test_phase", x, alt, [&](auto t, void* a, void* b, auto o) {
    return kb_in_test_phase_fn(t, a, t, b, training ? training->get() : nullptr, to_c(mode), o);
  });
}

}  // namespace kbackend

// The functions generated from the API description (api/generate.py) that this file does not
// write by hand.
#include "kbackend_functions.hpp"

#endif  // KBACKEND_HPP
