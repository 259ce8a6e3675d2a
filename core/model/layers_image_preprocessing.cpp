// The image layers of keras.layers.preprocessing that compute alike in training and inference:
// Resizing (bilinear or nearest, as JAX's image.resize computes them without antialiasing,
// crop_to_aspect_ratio) and CenterCrop (a crop, or the crop to the aspect ratio then a
// bilinear resize where the image is smaller, Keras' smart_resize). A resize along an axis is
// a constant (out, in) matrix of interpolation weights contracted with the image, so that its
// gradient is the matrix' transpose.
#include <algorithm>
#include <cmath>

#include "core/api/api.h"
#include "core/model/graph_math.h"
#include "core/model/layer_options.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

enum class Interp { bilinear, nearest };

// The (out, in) weights of resizing an axis of `in` samples to `out` with half-pixel centers:
// bilinear clamps at the edges; nearest takes floor((i + 0.5) * in / out).
NodePtr resize_matrix(int64_t out, int64_t in, Interp how, DType dtype) {
  auto b = Buffer::make(DType::f64, {out, in});
  double* w = b->as<double>();
  std::fill(w, w + out * in, 0.0);
  double scale = double(in) / double(out);
  for (int64_t i = 0; i < out; ++i) {
    double src = (double(i) + 0.5) * scale;
    if (how == Interp::nearest) {
      w[i * in + std::min<int64_t>(in - 1, int64_t(std::floor(src)))] = 1.0;
      continue;
    }
    src -= 0.5;
    double lo = std::floor(src), t = src - lo;
    int64_t a = std::clamp<int64_t>(int64_t(lo), 0, in - 1),
            c = std::clamp<int64_t>(int64_t(lo) + 1, 0, in - 1);
    w[i * in + a] += 1.0 - t;
    w[i * in + c] += t;
  }
  return api::constant(b, dtype, std::nullopt, "");
}

struct ImageAxes {
  int64_t height, width;  // the axes of the rows and columns
};

ImageAxes image_axes(const NodePtr& x, DataFormat f, const std::string& where) {
  check(x->shape().rank_known && (x->rank() == 4 || x->rank() == 3), Status::shape, where,
        ": takes images of rank 4 (or 3)");
  int64_t r = x->rank();
  ImageAxes a = f == DataFormat::channels_last ? ImageAxes{r - 3, r - 2} : ImageAxes{r - 2, r - 1};
  check(x->shape().dims[size_t(a.height)] > 0 && x->shape().dims[size_t(a.width)] > 0,
        Status::shape, where, ": the images' height and width must be known");
  return a;
}

// x[..., h0:h0+h, w0:w0+w, ...] on the image axes.
NodePtr crop(const NodePtr& x, const ImageAxes& a, int64_t h0, int64_t h, int64_t w0, int64_t w) {
  std::vector<int64_t> start(size_t(x->rank()), 0), size(size_t(x->rank()), -1);
  start[size_t(a.height)] = h0, size[size_t(a.height)] = h;
  start[size_t(a.width)] = w0, size[size_t(a.width)] = w;
  return api::slice(x, start, size);
}

// The image axis `axis` of x resized to `out` samples.
NodePtr resize_axis(const NodePtr& x, int64_t axis, int64_t out, Interp how) {
  int64_t in = x->shape().dims[size_t(axis)];
  if (in == out) return x;
  std::string labels;
  for (int64_t i = 0; i < x->rank(); ++i) labels += char('a' + i);
  std::string result = labels;
  result[size_t(axis)] = 'z';
  std::string eq = std::string("z") + labels[size_t(axis)] + "," + labels + "->" + result;
  return api::einsum(eq, {resize_matrix(out, in, how, x->dtype()), x});
}

// Keras' crop_to_aspect_ratio: the largest centered box of the target's aspect ratio.
NodePtr crop_to_aspect(const NodePtr& x, const ImageAxes& a, int64_t height, int64_t width) {
  int64_t h = x->shape().dims[size_t(a.height)], w = x->shape().dims[size_t(a.width)];
  int64_t ch = std::max<int64_t>(std::min<int64_t>(h, int64_t(double(w * height) / width)), 1);
  int64_t cw = std::max<int64_t>(std::min<int64_t>(w, int64_t(double(h * width) / height)), 1);
  return crop(x, a, int64_t(double(h - ch) / 2), ch, int64_t(double(w - cw) / 2), cw);
}

NodePtr resized(const NodePtr& x, const ImageAxes& a, int64_t height, int64_t width, Interp how) {
  return resize_axis(resize_axis(x, a.height, height, how), a.width, width, how);
}

int64_t positive(const Json& c, const char* key, const std::string& where) {
  int64_t v = int_or(c, key, 0, where);
  check(v > 0 && v <= (int64_t(1) << 20), Status::invalid_argument, where, ": ", key,
        " must be a positive size");
  return v;
}

class Resizing : public Layer {
 public:
  explicit Resizing(const Json& c)
      : Layer("Resizing", c),
        height_(positive(c, "height", where())),
        width_(positive(c, "width", where())),
        format_(data_format_of(c, where())),
        crop_(bool_or(c, "crop_to_aspect_ratio", false, where())) {
    std::string how = string_or(c, "interpolation", "bilinear", where());
    check(how == "bilinear" || how == "nearest", Status::not_implemented, where(),
          ": interpolation '", how, "' (bilinear and nearest are available)");
    how_ = how == "nearest" ? Interp::nearest : Interp::bilinear;
    check(!bool_or(c, "pad_to_aspect_ratio", false, where()), Status::not_implemented, where(),
          ": pad_to_aspect_ratio");
    check(!bool_or(c, "antialias", false, where()), Status::not_implemented, where(),
          ": antialias");
  }
  Tensors call(const Tensors& inputs) override {
    NodePtr x = single(inputs);
    if (x->dtype() != dtype()) x = api::cast(x, dtype());
    ImageAxes a = image_axes(x, format_, where());
    if (crop_) x = crop_to_aspect(x, a, height_, width_);
    return {resized(x, a, height_, width_, how_)};
  }

 private:
  int64_t height_, width_;
  DataFormat format_;
  bool crop_;
  Interp how_ = Interp::bilinear;
};

class CenterCrop : public Layer {
 public:
  explicit CenterCrop(const Json& c)
      : Layer("CenterCrop", c),
        height_(positive(c, "height", where())),
        width_(positive(c, "width", where())),
        format_(data_format_of(c, where())) {}
  Tensors call(const Tensors& inputs) override {
    NodePtr x = single(inputs);
    if (x->dtype() != dtype()) x = api::cast(x, dtype());
    ImageAxes a = image_axes(x, format_, where());
    int64_t h = x->shape().dims[size_t(a.height)], w = x->shape().dims[size_t(a.width)];
    if (h >= height_ && w >= width_)
      return {crop(x, a, (h - height_) / 2, height_, (w - width_) / 2, width_)};
    // Smaller than the target: Keras' smart_resize.
    return {resized(crop_to_aspect(x, a, height_, width_), a, height_, width_, Interp::bilinear)};
  }

 private:
  int64_t height_, width_;
  DataFormat format_;
};

const LayerRegistrar rows[] = {
    {"Resizing", make_layer_of<Resizing>},
    {"CenterCrop", make_layer_of<CenterCrop>},
};

}  // namespace
}  // namespace kb::model
