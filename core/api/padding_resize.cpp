// temporal_padding, spatial_2d_padding, spatial_3d_padding over the Pad primitive; resize_images
// and resize_volumes over Resize (docs/keras_semantics.md section 8).
#include "core/api/api.h"
#include "core/api/padding_resize.h"
#include "core/ops/build.h"
#include "core/util/error.h"

namespace kb::api {

namespace {

DataFormat resolve_format(Format f) { return f ? *f : Session::get().image_data_format(); }

void check_input(const NodePtr& x, int64_t rank, const char* who, const char* layout) {
  require(x, who, "x");
  check(x->shape().rank_known && x->rank() == rank, Status::shape, who, ": x must have rank ", rank,
        " ", layout, ", got ", x->shape().str());
}

// x padded on the spatial axes (nsp of them, after the batch and, for channels_first, the
// channels) by the flat pair list `padding`.
NodePtr pad_spatial(const char* who, const NodePtr& x, const Ints& padding, size_t nsp, bool first,
                    const char* nesting) {
  check(padding.size() == 2 * nsp, Status::invalid_argument, who, ": padding must be ", nesting,
        " (", 2 * nsp, " values), got ", padding.size(), " values");
  for (int64_t p : padding)
    check(p >= 0, Status::invalid_argument, who, ": padding must be non-negative, got ",
          dims_str(padding));
  size_t r = nsp + 2, off = first ? 2 : 1;
  std::vector<int64_t> pb(r, 0), pa(r, 0);
  for (size_t i = 0; i < nsp; ++i) {
    pb[off + i] = padding[2 * i];
    pa[off + i] = padding[2 * i + 1];
  }
  return make_node(ops::Pad, {x},
                   {{attr::pad_before, pb}, {attr::pad_after, pa}, {attr::who, std::string(who)}});
}

void check_factor(int64_t f, const char* who, const char* what) {
  check(f >= 1, Status::invalid_argument, who, ": ", what, " must be a positive integer, got ", f);
}

NodePtr resize(const char* who, const NodePtr& x, const Ints& factors, bool first,
               Interpolation mode) {
  Attrs a{{attr::layout, int64_t(first)},
          {attr::factors, factors},
          {attr::mode,
           int64_t(mode == Interpolation::bilinear ? ResizeMode::bilinear : ResizeMode::nearest)},
          {attr::who, std::string(who)}};
  return make_node(ops::Resize, {x}, a);
}

}  // namespace

NodePtr temporal_padding(const NodePtr& x, const Ints& padding) {
  const char* who = "temporal_padding";
  check_input(x, 3, who, "(batch, steps, features)");
  return pad_spatial(who, x, padding, 1, false, "(left, right)");
}

NodePtr spatial_2d_padding(const NodePtr& x, const Ints& padding, Format data_format) {
  const char* who = "spatial_2d_padding";
  check_input(x, 4, who, "(batch and 2 spatial dimensions and channels)");
  bool first = resolve_format(data_format) == DataFormat::channels_first;
  return pad_spatial(who, x, padding, 2, first, "((top, bottom), (left, right))");
}

NodePtr spatial_3d_padding(const NodePtr& x, const Ints& padding, Format data_format) {
  const char* who = "spatial_3d_padding";
  check_input(x, 5, who, "(batch and 3 spatial dimensions and channels)");
  bool first = resolve_format(data_format) == DataFormat::channels_first;
  return pad_spatial(who, x, padding, 3, first,
                     "((left_dim1, right_dim1), (left_dim2, right_dim2), (left_dim3, right_dim3))");
}

NodePtr resize_images(const NodePtr& x, int64_t height_factor, int64_t width_factor,
                      Format data_format, Interpolation interpolation) {
  const char* who = "resize_images";
  require(x, who, "x");
  // Keras checks the interpolation first; an unknown data_format fails at the end (its
  // transpose_shape), so both are errors here, in that order.
  check(interpolation == Interpolation::nearest || interpolation == Interpolation::bilinear,
        Status::invalid_argument, who, ": interpolation should be one of \"nearest\" or ",
        "\"bilinear\", got ", int32_t(interpolation));
  check(data_format.has_value(), Status::invalid_argument, who,
        ": data_format must be channels_last or channels_first (resize_images has no default)");
  check_input(x, 4, who, "(batch, 2 spatial dimensions, channels)");
  check_factor(height_factor, who, "height_factor");
  check_factor(width_factor, who, "width_factor");
  bool first = *data_format == DataFormat::channels_first;
  if (interpolation == Interpolation::nearest) {
    check(!is_bool(x->dtype()), Status::dtype, who, ": x must be numeric, got bool");
    return resize(who, x, {height_factor, width_factor}, first, interpolation);
  }
  // TensorFlow's resize_bilinear computes and returns float32 for every input dtype.
  check(!is_bool(x->dtype()), Status::dtype, who, ": x must be numeric, got bool");
  NodePtr xf = x->dtype() == DType::f32 ? x : kb::cast(x, DType::f32);
  return resize(who, xf, {height_factor, width_factor}, first, interpolation);
}

NodePtr resize_volumes(const NodePtr& x, int64_t depth_factor, int64_t height_factor,
                       int64_t width_factor, Format data_format) {
  const char* who = "resize_volumes";
  require(x, who, "x");
  check(data_format.has_value(), Status::invalid_argument, who,
        ": data_format must be channels_last or channels_first (resize_volumes has no default)");
  check_input(x, 5, who, "(batch, 3 spatial dimensions, channels)");
  check_factor(depth_factor, who, "depth_factor");
  check_factor(height_factor, who, "height_factor");
  check_factor(width_factor, who, "width_factor");
  check(!is_bool(x->dtype()), Status::dtype, who, ": x must be numeric, got bool");
  bool first = *data_format == DataFormat::channels_first;
  return resize(who, x, {depth_factor, height_factor, width_factor}, first, Interpolation::nearest);
}

}  // namespace kb::api
