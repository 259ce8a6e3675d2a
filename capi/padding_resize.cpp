// Entry points of the paddings and resizing (core/api/padding_resize.h), and the
// kb_interpolation string parser.
#include "capi/handles.h"
#include "core/api/api.h"
#include "core/api/padding_resize.h"

using namespace kb;
using kb::capi::guard;
using kb::capi::out_arg;
using kb::capi::tensor_arg;
using kb::capi::wrap;

extern "C" {

KB_API kb_status kb_parse_interpolation(const char* name, kb_interpolation* out) {
  return capi::parse_option(
      "parse_interpolation", "interpolation", name, out,
      {{"nearest", KB_INTERPOLATION_NEAREST}, {"bilinear", KB_INTERPOLATION_BILINEAR}});
}

KB_API kb_status kb_temporal_padding(kb_tensor* x, const int64_t* padding, size_t n_padding,
                                     kb_tensor** out) {
  const char* who = "temporal_padding";
  return guard(who, [&] {
    out_arg(out, who);
    *out = wrap(api::temporal_padding(tensor_arg(x, who),
                                      capi::list_arg(padding, n_padding, {1, 1}, who, "padding")));
  });
}

KB_API kb_status kb_spatial_2d_padding(kb_tensor* x, const int64_t* padding, size_t n_padding,
                                       kb_data_format data_format, kb_tensor** out) {
  const char* who = "spatial_2d_padding";
  return guard(who, [&] {
    out_arg(out, who);
    *out = wrap(api::spatial_2d_padding(
        tensor_arg(x, who), capi::list_arg(padding, n_padding, {1, 1, 1, 1}, who, "padding"),
        capi::format_arg(data_format, who)));
  });
}

KB_API kb_status kb_spatial_3d_padding(kb_tensor* x, const int64_t* padding, size_t n_padding,
                                       kb_data_format data_format, kb_tensor** out) {
  const char* who = "spatial_3d_padding";
  return guard(who, [&] {
    out_arg(out, who);
    *out = wrap(api::spatial_3d_padding(
        tensor_arg(x, who), capi::list_arg(padding, n_padding, {1, 1, 1, 1, 1, 1}, who, "padding"),
        capi::format_arg(data_format, who)));
  });
}

KB_API kb_status kb_resize_images(kb_tensor* x, int64_t height_factor, int64_t width_factor,
                                  kb_data_format data_format, kb_interpolation interpolation,
                                  kb_tensor** out) {
  const char* who = "resize_images";
  return guard(who, [&] {
    out_arg(out, who);
    const NodePtr& xn = tensor_arg(x, who);
    api::Format f = capi::format_arg(data_format, who);
    *out = wrap(api::resize_images(xn, height_factor, width_factor, f,
                                   api::Interpolation(capi::raw_enum(interpolation))));
  });
}

KB_API kb_status kb_resize_volumes(kb_tensor* x, int64_t depth_factor, int64_t height_factor,
                                   int64_t width_factor, kb_data_format data_format,
                                   kb_tensor** out) {
  const char* who = "resize_volumes";
  return guard(who, [&] {
    out_arg(out, who);
    *out = wrap(api::resize_volumes(tensor_arg(x, who), depth_factor, height_factor, width_factor,
                                    capi::format_arg(data_format, who)));
  });
}

}  // extern "C"
