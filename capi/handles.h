// The C handles and the one error policy of every entry point.
#pragma once
#include <atomic>
#include <initializer_list>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "core/compile/function.h"
#include "core/graph/node.h"
#include "core/graph/session.h"
#include "core/util/error.h"
#include "kbackend.h"

struct kb_tensor {
  std::atomic<int64_t> refs{1};
  kb::NodePtr node;
};

struct kb_tensor_list {
  std::vector<kb::NodePtr> items;
};

struct kb_compiled_function {
  std::shared_ptr<kb::Function> fn;
};

namespace kb::capi {

// Records an error: `message`, prefixed with "who: " unless it starts with `who`. Never throws:
// out of memory for the message itself, the code stays and the message becomes a fixed text.
void set_error(kb_status code, const char* who, const char* message) noexcept;
void set_error(kb_status code, const char* message) noexcept;
void clear_error() noexcept;

// Runs `body`, turning every exception into a status and a message that names `who`.
template <class F>
kb_status guard(const char* who, F&& body) noexcept {
  kb_status code = KB_ERROR_INTERNAL;
  try {
    body();
    clear_error();
    return KB_OK;
  } catch (const kb::Error& e) {
    code = static_cast<kb_status>(e.code());
    set_error(code, who, e.what());
  } catch (const std::bad_alloc&) {
    code = KB_ERROR_OUT_OF_MEMORY;
    set_error(code, who, "out of memory");
  } catch (const std::exception& e) {
    set_error(code, who, e.what());  // an internal error: set_error says so
  } catch (...) {
    set_error(code, who, "an exception of unknown type");
  }
  return code;
}

template <class T>
T* out_arg(T* p, const char* who) {
  check(p != nullptr, Status::invalid_argument, who, ": the output pointer is NULL");
  return p;
}

// A string argument that must not be NULL.
inline std::string string_arg(const char* s, const char* who, const char* what) {
  check(s != nullptr, Status::invalid_argument, who, ": ", what, " is NULL");
  return s;
}

inline const NodePtr& tensor_arg(kb_tensor* t, const char* who, const char* what = "x") {
  check(t != nullptr && t->node != nullptr, Status::invalid_argument, who, ": ", what, " is NULL");
  return t->node;
}

std::vector<NodePtr> tensor_list_arg(kb_tensor* const* ts, size_t n, const char* who,
                                     const char* what);
// The same into `out` (cleared first; a vector kept by the caller allocates nothing).
void tensor_list_into(kb_tensor* const* ts, size_t n, const char* who, const char* what,
                      std::vector<NodePtr>& out);
kb_tensor* wrap(NodePtr n);
kb_tensor_list* wrap_list(std::vector<NodePtr> ns);
DType dtype_arg(kb_data_type d, const char* who);  // rejects KB_DTYPE_DEFAULT
std::optional<DType> optional_dtype_arg(kb_data_type d, const char* who);
Dims dims_arg(const int64_t* dims, size_t ndim, const char* who, const char* what);
// A flat list argument: NULL (count 0) means `fallback`.
std::vector<int64_t> list_arg(const int64_t* v, size_t n, const std::vector<int64_t>& fallback,
                              const char* who, const char* what);
std::vector<int64_t> required_list_arg(const int64_t* v, size_t n, const char* who,
                                       const char* what);
std::optional<int64_t> seed_arg(const int64_t* seed);  // NULL: none
std::optional<std::vector<int64_t>> axes_arg(const int64_t* axes, size_t n, const char* who);
std::string name_arg(const char* name);
std::string lower(const char* s);  // for the kb_parse_* helpers (Keras lower-cases options)

// The value a caller passed for a C enum, read from its bytes (for enums declared before they
// were int32-wide, loading an out-of-range value as the enum type was undefined behaviour).
template <class E>
int32_t raw_enum(const E& e) {
  static_assert(sizeof(E) == sizeof(int32_t), "C enums are int32-backed");
  int32_t v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

// A kb_parse_* entry point: the Keras string option (case-insensitive) -> its enum value.
template <class E>
kb_status parse_option(const char* who, const char* what, const char* name, E* out,
                       std::initializer_list<std::pair<const char*, E>> options) noexcept {
  return guard(who, [&] {
    out_arg(out, who);
    check(name != nullptr, Status::invalid_argument, who, ": name is NULL");
    std::string s = lower(name);
    for (const auto& [text, value] : options)
      if (s == text) {
        *out = value;
        return;
      }
    fail(Status::invalid_argument, who, ": unknown ", what, " '", name, "'");
  });
}

// KB_DATA_FORMAT_DEFAULT -> nullopt (the global image_data_format); unknown values fail.
std::optional<DataFormat> format_arg(const kb_data_format& f, const char* who);
std::shared_ptr<Buffer> buffer_from(const void* data, kb_data_type dtype, const int64_t* shape,
                                    size_t ndim, const char* who);

// Declares a one-tensor-in, one-tensor-out entry point.
#define KB_CAPI_UNARY(c_name, keras_name, expr)                    \
  KB_API kb_status c_name(kb_tensor* x, kb_tensor** out) {         \
    return kb::capi::guard(keras_name, [&] {                       \
      kb::capi::out_arg(out, keras_name);                          \
      const kb::NodePtr& xn = kb::capi::tensor_arg(x, keras_name); \
      *out = kb::capi::wrap(expr);                                 \
    });                                                            \
  }

#define KB_CAPI_BINARY(c_name, keras_name, expr)                         \
  KB_API kb_status c_name(kb_tensor* x, kb_tensor* y, kb_tensor** out) { \
    return kb::capi::guard(keras_name, [&] {                             \
      kb::capi::out_arg(out, keras_name);                                \
      const kb::NodePtr& xn = kb::capi::tensor_arg(x, keras_name, "x");  \
      const kb::NodePtr& yn = kb::capi::tensor_arg(y, keras_name, "y");  \
      *out = kb::capi::wrap(expr);                                       \
    });                                                                  \
  }

}  // namespace kb::capi
