// create and inspect.
#include "capi/handles.h"
#include "core/api/api.h"
#include "core/api/sparse.h"

using namespace kb;
using kb::capi::guard;
using kb::capi::out_arg;
using kb::capi::tensor_arg;
using kb::capi::wrap;

extern "C" {

KB_API kb_status kb_variable(const void* data, kb_data_type data_dtype, const int64_t* shape,
                             size_t ndim, kb_data_type dtype, const char* name, kb_tensor** out) {
  return guard("variable", [&] {
    out_arg(out, "variable");
    auto b = capi::buffer_from(data, data_dtype, shape, ndim, "variable");
    DType t = api::resolve_dtype(capi::optional_dtype_arg(dtype, "variable"));
    *out = wrap(api::variable(b, t, capi::name_arg(name)));
  });
}

KB_API kb_status kb_variable_from_tensor(kb_tensor* value, kb_data_type dtype, const char* name,
                                         kb_tensor** out) {
  return guard("variable", [&] {
    out_arg(out, "variable");
    const NodePtr& v = tensor_arg(value, "variable", "value");
    auto b = evaluate(v);
    DType t = api::resolve_dtype(capi::optional_dtype_arg(dtype, "variable"));
    *out = wrap(api::variable(b, t, capi::name_arg(name)));
  });
}

KB_API kb_status kb_constant(const void* data, kb_data_type data_dtype, const int64_t* value_shape,
                             size_t value_ndim, kb_data_type dtype, const int64_t* shape,
                             size_t ndim, const char* name, kb_tensor** out) {
  return guard("constant", [&] {
    out_arg(out, "constant");
    auto b = capi::buffer_from(data, data_dtype, value_shape, value_ndim, "constant");
    DType t = api::resolve_dtype(capi::optional_dtype_arg(dtype, "constant"));
    std::optional<Dims> s;
    if (shape) s = capi::dims_arg(shape, ndim, "constant", "shape");
    *out = wrap(api::constant(b, t, s, capi::name_arg(name)));
  });
}

KB_API kb_status kb_placeholder(const int64_t* shape, size_t shape_len, int64_t ndim,
                                kb_data_type dtype, int32_t sparse, const char* name,
                                kb_tensor** out) {
  return guard("placeholder", [&] {
    out_arg(out, "placeholder");
    DType t = api::resolve_dtype(capi::optional_dtype_arg(dtype, "placeholder"));
    Shape s;
    check(ndim <= 64, Status::invalid_argument, "placeholder: ndim ", ndim, " is too large");
    if ((!shape || shape_len == 0) && ndim > 0) {
      s = Shape(Dims(size_t(ndim), -1));
    } else if (!shape && ndim < 0) {
      s = Shape::unknown_rank();
    } else {
      s = Shape(capi::dims_arg(shape, shape_len, "placeholder", "shape"));
    }
    *out = wrap(sparse ? api::sparse_placeholder(s, t, capi::name_arg(name))
                       : api::placeholder(s, t, capi::name_arg(name)));
  });
}

#define KB_CAPI_FILLED(c_name, keras_name, fn)                                                     \
  KB_API kb_status c_name(const int64_t* shape, size_t ndim, kb_data_type dtype, const char* name, \
                          kb_tensor** out) {                                                       \
    return guard(keras_name, [&] {                                                                 \
      out_arg(out, keras_name);                                                                    \
      Dims d = capi::dims_arg(shape, ndim, keras_name, "shape");                                   \
      DType t = api::resolve_dtype(capi::optional_dtype_arg(dtype, keras_name));                   \
      *out = wrap(fn(d, t, capi::name_arg(name)));                                                 \
    });                                                                                            \
  }
KB_CAPI_FILLED(kb_zeros, "zeros", api::zeros)
KB_CAPI_FILLED(kb_ones, "ones", api::ones)

KB_API kb_status kb_eye(int64_t size, kb_data_type dtype, const char* name, kb_tensor** out) {
  return guard("eye", [&] {
    out_arg(out, "eye");
    DType t = api::resolve_dtype(capi::optional_dtype_arg(dtype, "eye"));
    *out = wrap(api::eye(size, t, capi::name_arg(name)));
  });
}

KB_API kb_status kb_zeros_like(kb_tensor* x, kb_data_type dtype, const char* name,
                               kb_tensor** out) {
  return guard("zeros_like", [&] {
    out_arg(out, "zeros_like");
    *out =
        wrap(api::zeros_like(tensor_arg(x, "zeros_like"),
                             capi::optional_dtype_arg(dtype, "zeros_like"), capi::name_arg(name)));
  });
}
KB_API kb_status kb_ones_like(kb_tensor* x, kb_data_type dtype, const char* name, kb_tensor** out) {
  return guard("ones_like", [&] {
    out_arg(out, "ones_like");
    *out = wrap(api::ones_like(tensor_arg(x, "ones_like"),
                               capi::optional_dtype_arg(dtype, "ones_like"), capi::name_arg(name)));
  });
}
KB_API kb_status kb_identity(kb_tensor* x, const char* name, kb_tensor** out) {
  return guard("identity", [&] {
    out_arg(out, "identity");
    *out = wrap(api::identity(tensor_arg(x, "identity"), capi::name_arg(name)));
  });
}

#define KB_CAPI_RANDOM_VAR(c_name, keras_name, fn)                                   \
  KB_API kb_status c_name(const int64_t* shape, size_t ndim, double a, double b,     \
                          kb_data_type dtype, const char* name, const int64_t* seed, \
                          kb_tensor** out) {                                         \
    return guard(keras_name, [&] {                                                   \
      out_arg(out, keras_name);                                                      \
      Dims d = capi::dims_arg(shape, ndim, keras_name, "shape");                     \
      DType t = api::resolve_dtype(capi::optional_dtype_arg(dtype, keras_name));     \
      std::optional<int64_t> s;                                                      \
      if (seed) s = *seed;                                                           \
      *out = wrap(fn(d, a, b, t, capi::name_arg(name), s));                          \
    });                                                                              \
  }
KB_CAPI_RANDOM_VAR(kb_random_uniform_variable, "random_uniform_variable",
                   api::random_uniform_variable)
KB_CAPI_RANDOM_VAR(kb_random_normal_variable, "random_normal_variable", api::random_normal_variable)

KB_API kb_status kb_arange(double start, const double* stop, double step, kb_data_type dtype,
                           kb_tensor** out) {
  return guard("arange", [&] {
    out_arg(out, "arange");
    DType t = dtype == KB_DTYPE_DEFAULT ? DType::i32 : capi::dtype_arg(dtype, "arange");
    std::optional<double> s;
    if (stop) s = *stop;
    *out = wrap(api::arange(start, s, step, t));
  });
}

KB_API kb_status kb_arange_to(kb_tensor* start, kb_tensor* stop, kb_tensor* step,
                              kb_data_type dtype, kb_tensor** out) {
  return guard("arange", [&] {
    out_arg(out, "arange");
    DType t = dtype == KB_DTYPE_DEFAULT ? DType::i32 : capi::dtype_arg(dtype, "arange");
    const NodePtr& a = tensor_arg(start, "arange", "start");
    NodePtr b = stop ? tensor_arg(stop, "arange", "stop") : nullptr;
    *out = wrap(api::arange_to(a, b, tensor_arg(step, "arange", "step"), t));
  });
}

// ---- inspect -------------------------------------------------------------------------------
KB_API kb_status kb_is_sparse(kb_tensor* x, int32_t* out) {
  return guard("is_sparse", [&] {
    out_arg(out, "is_sparse");
    *out = api::is_sparse(tensor_arg(x, "is_sparse")) ? 1 : 0;
  });
}
KB_API kb_status kb_is_keras_tensor(kb_tensor* x, int32_t* out) {
  return guard("is_keras_tensor", [&] {
    out_arg(out, "is_keras_tensor");
    check(x != nullptr, Status::invalid_argument, "is_keras_tensor: expected a tensor, got NULL");
    *out = tensor_arg(x, "is_keras_tensor")->keras_tensor;
  });
}
KB_API kb_status kb_is_tensor(kb_tensor* x, int32_t* out) {
  return guard("is_tensor", [&] {
    out_arg(out, "is_tensor");
    *out = x != nullptr && x->node != nullptr;
  });
}
KB_API kb_status kb_is_placeholder(kb_tensor* x, int32_t* out) {
  return guard("is_placeholder", [&] {
    out_arg(out, "is_placeholder");
    *out = tensor_arg(x, "is_placeholder")->is(ops::Placeholder);
  });
}
KB_API kb_status kb_shape(kb_tensor* x, kb_tensor** out) {
  return guard("shape", [&] {
    out_arg(out, "shape");
    *out = wrap(api::shape(tensor_arg(x, "shape")));
  });
}
static kb_status int_shape_as(const char* who, kb_tensor* x, int64_t* dims, size_t capacity,
                              int64_t* ndim) {
  return guard(who, [&] {
    out_arg(ndim, who);
    const Shape& s = tensor_arg(x, who)->shape();
    check(capacity == 0 || dims != nullptr, Status::invalid_argument, who, ": dims is NULL");
    for (size_t i = 0; s.rank_known && i < s.dims.size() && i < capacity; ++i) dims[i] = s.dims[i];
    *ndim = s.rank();
  });
}
KB_API kb_status kb_int_shape(kb_tensor* x, int64_t* dims, size_t capacity, int64_t* ndim) {
  return int_shape_as("int_shape", x, dims, capacity, ndim);
}
KB_API kb_status kb_get_variable_shape(kb_tensor* x, int64_t* dims, size_t capacity,
                                       int64_t* ndim) {
  return int_shape_as("get_variable_shape", x, dims, capacity, ndim);
}
KB_API kb_status kb_ndim(kb_tensor* x, int64_t* out) {
  return guard("ndim", [&] { *out_arg(out, "ndim") = tensor_arg(x, "ndim")->rank(); });
}
KB_API kb_status kb_dtype(kb_tensor* x, kb_data_type* out) {
  return guard("dtype",
               [&] { *out_arg(out, "dtype") = kb_data_type(tensor_arg(x, "dtype")->dtype()); });
}
KB_API kb_status kb_count_params(kb_tensor* x, int64_t* out) {
  return guard("count_params", [&] {
    *out_arg(out, "count_params") = api::count_params(tensor_arg(x, "count_params"));
  });
}

}  // extern "C"
