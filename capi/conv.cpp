// Convolution and pooling entry points, and the kb_padding / kb_pool_mode string parsers.
#include <cctype>
#include <cstring>
#include <string>

#include "capi/handles.h"
#include "core/api/conv.h"

using namespace kb;
using kb::capi::guard;
using kb::capi::out_arg;
using kb::capi::tensor_arg;
using kb::capi::wrap;

namespace {

// A tuple argument: NULL (count 0) means Keras' default of ones.
api::Ints tuple_arg(const int64_t* v, size_t n, size_t nsp, const char* who, const char* what) {
  if (!v) {
    check(n == 0, Status::invalid_argument, who, ": ", what, " is NULL but its count is ", n);
    return api::Ints(nsp, 1);
  }
  return capi::dims_arg(v, n, who, what);
}

api::Ints required_tuple_arg(const int64_t* v, size_t n, const char* who, const char* what) {
  check(v != nullptr, Status::invalid_argument, who, ": ", what, " is NULL");
  return capi::dims_arg(v, n, who, what);
}

// Range checks happen in core/api (padding before pool_mode, as Keras does); api::Padding and
// api::PoolKind have a fixed underlying type, so any int32 value is representable.
api::Padding padding_arg(const kb_padding& p) { return api::Padding(capi::raw_enum(p)); }
api::PoolKind pool_mode_arg(const kb_pool_mode& m) { return api::PoolKind(capi::raw_enum(m)); }

}  // namespace

extern "C" {

KB_API kb_status kb_parse_padding(const char* name, kb_padding* out) {
  return capi::parse_option(
      "parse_padding", "padding", name, out,
      {{"valid", KB_PADDING_VALID}, {"same", KB_PADDING_SAME}, {"causal", KB_PADDING_CAUSAL}});
}

KB_API kb_status kb_parse_pool_mode(const char* name, kb_pool_mode* out) {
  return capi::parse_option("parse_pool_mode", "pool_mode", name, out,
                            {{"max", KB_POOL_MAX}, {"avg", KB_POOL_AVG}});
}

KB_API kb_status kb_conv1d(kb_tensor* x, kb_tensor* kernel, int64_t strides, kb_padding padding,
                           kb_data_format data_format, int64_t dilation_rate, kb_tensor** out) {
  const char* who = "conv1d";
  return guard(who, [&] {
    out_arg(out, who);
    *out =
        wrap(api::conv1d(tensor_arg(x, who), tensor_arg(kernel, who, "kernel"), strides,
                         padding_arg(padding), capi::format_arg(data_format, who), dilation_rate));
  });
}

#define KB_CAPI_CONV(c_name, keras_name, fn, nsp)                                              \
  KB_API kb_status c_name(kb_tensor* x, kb_tensor* kernel, const int64_t* strides,             \
                          size_t n_strides, kb_padding padding, kb_data_format data_format,    \
                          const int64_t* dilation_rate, size_t n_dilation, kb_tensor** out) {  \
    const char* who = keras_name;                                                              \
    return guard(who, [&] {                                                                    \
      out_arg(out, who);                                                                       \
      *out = wrap(fn(tensor_arg(x, who), tensor_arg(kernel, who, "kernel"),                    \
                     tuple_arg(strides, n_strides, nsp, who, "strides"), padding_arg(padding), \
                     capi::format_arg(data_format, who),                                       \
                     tuple_arg(dilation_rate, n_dilation, nsp, who, "dilation_rate")));        \
    });                                                                                        \
  }
KB_CAPI_CONV(kb_conv2d, "conv2d", api::conv2d, 2)
KB_CAPI_CONV(kb_conv3d, "conv3d", api::conv3d, 3)

KB_API kb_status kb_depthwise_conv2d(kb_tensor* x, kb_tensor* depthwise_kernel,
                                     const int64_t* strides, size_t n_strides, kb_padding padding,
                                     kb_data_format data_format, const int64_t* dilation_rate,
                                     size_t n_dilation, kb_tensor** out) {
  const char* who = "depthwise_conv2d";
  return guard(who, [&] {
    out_arg(out, who);
    *out = wrap(api::depthwise_conv2d(
        tensor_arg(x, who), tensor_arg(depthwise_kernel, who, "depthwise_kernel"),
        tuple_arg(strides, n_strides, 2, who, "strides"), padding_arg(padding),
        capi::format_arg(data_format, who),
        tuple_arg(dilation_rate, n_dilation, 2, who, "dilation_rate")));
  });
}

static kb_status conv2d_transpose_impl(const char* who, kb_tensor* x, kb_tensor* kernel,
                                       const int64_t* output_shape, size_t output_ndim,
                                       const int64_t* strides, size_t n_strides, kb_padding padding,
                                       kb_data_format data_format, const int64_t* dilation_rate,
                                       size_t n_dilation, kb_tensor** out) {
  return guard(who, [&] {
    out_arg(out, who);
    *out = wrap(
        api::conv2d_transpose(tensor_arg(x, who), tensor_arg(kernel, who, "kernel"),
                              required_tuple_arg(output_shape, output_ndim, who, "output_shape"),
                              tuple_arg(strides, n_strides, 2, who, "strides"),
                              padding_arg(padding), capi::format_arg(data_format, who),
                              tuple_arg(dilation_rate, n_dilation, 2, who, "dilation_rate"), who));
  });
}

KB_API kb_status kb_conv2d_transpose(kb_tensor* x, kb_tensor* kernel, const int64_t* output_shape,
                                     size_t output_ndim, const int64_t* strides, size_t n_strides,
                                     kb_padding padding, kb_data_format data_format,
                                     const int64_t* dilation_rate, size_t n_dilation,
                                     kb_tensor** out) {
  return conv2d_transpose_impl("conv2d_transpose", x, kernel, output_shape, output_ndim, strides,
                               n_strides, padding, data_format, dilation_rate, n_dilation, out);
}

KB_API kb_status kb_deconv2d(kb_tensor* x, kb_tensor* kernel, const int64_t* output_shape,
                             size_t output_ndim, const int64_t* strides, size_t n_strides,
                             kb_padding padding, kb_data_format data_format,
                             const int64_t* dilation_rate, size_t n_dilation, kb_tensor** out) {
  return conv2d_transpose_impl("deconv2d", x, kernel, output_shape, output_ndim, strides, n_strides,
                               padding, data_format, dilation_rate, n_dilation, out);
}

KB_API kb_status kb_conv3d_transpose(kb_tensor* x, kb_tensor* kernel, const int64_t* output_shape,
                                     size_t output_ndim, const int64_t* strides, size_t n_strides,
                                     kb_padding padding, kb_data_format data_format,
                                     kb_tensor** out) {
  const char* who = "conv3d_transpose";
  return guard(who, [&] {
    out_arg(out, who);
    *out = wrap(
        api::conv3d_transpose(tensor_arg(x, who), tensor_arg(kernel, who, "kernel"),
                              required_tuple_arg(output_shape, output_ndim, who, "output_shape"),
                              tuple_arg(strides, n_strides, 3, who, "strides"),
                              padding_arg(padding), capi::format_arg(data_format, who)));
  });
}

KB_API kb_status kb_separable_conv1d(kb_tensor* x, kb_tensor* depthwise_kernel,
                                     kb_tensor* pointwise_kernel, int64_t strides,
                                     kb_padding padding, kb_data_format data_format,
                                     int64_t dilation_rate, kb_tensor** out) {
  const char* who = "separable_conv1d";
  return guard(who, [&] {
    out_arg(out, who);
    *out = wrap(api::separable_conv1d(
        tensor_arg(x, who), tensor_arg(depthwise_kernel, who, "depthwise_kernel"),
        tensor_arg(pointwise_kernel, who, "pointwise_kernel"), strides, padding_arg(padding),
        capi::format_arg(data_format, who), dilation_rate));
  });
}

KB_API kb_status kb_separable_conv2d(kb_tensor* x, kb_tensor* depthwise_kernel,
                                     kb_tensor* pointwise_kernel, const int64_t* strides,
                                     size_t n_strides, kb_padding padding,
                                     kb_data_format data_format, const int64_t* dilation_rate,
                                     size_t n_dilation, kb_tensor** out) {
  const char* who = "separable_conv2d";
  return guard(who, [&] {
    out_arg(out, who);
    *out = wrap(api::separable_conv2d(
        tensor_arg(x, who), tensor_arg(depthwise_kernel, who, "depthwise_kernel"),
        tensor_arg(pointwise_kernel, who, "pointwise_kernel"),
        tuple_arg(strides, n_strides, 2, who, "strides"), padding_arg(padding),
        capi::format_arg(data_format, who),
        tuple_arg(dilation_rate, n_dilation, 2, who, "dilation_rate")));
  });
}

#define KB_CAPI_POOL(c_name, keras_name, fn, nsp)                                                 \
  KB_API kb_status c_name(kb_tensor* x, const int64_t* pool_size, size_t n_pool,                  \
                          const int64_t* strides, size_t n_strides, kb_padding padding,           \
                          kb_data_format data_format, kb_pool_mode pool_mode, kb_tensor** out) {  \
    const char* who = keras_name;                                                                 \
    return guard(who, [&] {                                                                       \
      out_arg(out, who);                                                                          \
      *out = wrap(fn(tensor_arg(x, who), required_tuple_arg(pool_size, n_pool, who, "pool_size"), \
                     tuple_arg(strides, n_strides, nsp, who, "strides"), padding_arg(padding),    \
                     capi::format_arg(data_format, who), pool_mode_arg(pool_mode)));              \
    });                                                                                           \
  }
KB_CAPI_POOL(kb_pool2d, "pool2d", api::pool2d, 2)
KB_CAPI_POOL(kb_pool3d, "pool3d", api::pool3d, 3)

}  // extern "C"
