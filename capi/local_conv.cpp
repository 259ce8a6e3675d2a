// Entry points of the locally connected convolutions (core/api/local_conv.h).
#include "capi/handles.h"
#include "core/api/api.h"
#include "core/api/local_conv.h"

using namespace kb;
using kb::capi::guard;
using kb::capi::out_arg;
using kb::capi::tensor_arg;
using kb::capi::wrap;

extern "C" {

KB_API kb_status kb_local_conv1d(kb_tensor* inputs, kb_tensor* kernel, const int64_t* kernel_size,
                                 size_t n_kernel_size, const int64_t* strides, size_t n_strides,
                                 kb_data_format data_format, kb_tensor** out) {
  const char* who = "local_conv1d";
  return guard(who, [&] {
    out_arg(out, who);
    *out = wrap(
        api::local_conv1d(tensor_arg(inputs, who, "inputs"), tensor_arg(kernel, who, "kernel"),
                          capi::required_list_arg(kernel_size, n_kernel_size, who, "kernel_size"),
                          capi::required_list_arg(strides, n_strides, who, "strides"),
                          capi::format_arg(data_format, who)));
  });
}

KB_API kb_status kb_local_conv2d(kb_tensor* inputs, kb_tensor* kernel, const int64_t* kernel_size,
                                 size_t n_kernel_size, const int64_t* strides, size_t n_strides,
                                 const int64_t* output_shape, size_t n_output_shape,
                                 kb_data_format data_format, kb_tensor** out) {
  const char* who = "local_conv2d";
  return guard(who, [&] {
    out_arg(out, who);
    *out = wrap(api::local_conv2d(
        tensor_arg(inputs, who, "inputs"), tensor_arg(kernel, who, "kernel"),
        capi::required_list_arg(kernel_size, n_kernel_size, who, "kernel_size"),
        capi::required_list_arg(strides, n_strides, who, "strides"),
        capi::required_list_arg(output_shape, n_output_shape, who, "output_shape"),
        capi::format_arg(data_format, who)));
  });
}

}  // extern "C"
