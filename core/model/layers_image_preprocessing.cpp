// Keras 3's image preprocessing layers (keras/src/layers/preprocessing/image_preprocessing):
// Resizing (each interpolation of Keras on JAX, as JAX's image.resize computes it, antialias,
// crop_to_aspect_ratio and pad_to_aspect_ratio) and CenterCrop (a crop, or the crop to the aspect
// ratio then a bilinear resize where the image is smaller, Keras' smart_resize), and the random
// augmentations, which leave the images as they are in inference. A resize along an axis is
// a constant (out, in) matrix of interpolation weights contracted with the image, so that its
// gradient is the matrix' transpose.
#include <algorithm>
#include <cmath>
#include <optional>

#include "core/api/api.h"
#include "core/api/control.h"
#include "core/api/padding_resize.h"
#include "core/api/random.h"
#include "core/model/graph_math.h"
#include "core/model/layer_options.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

enum class Interp { nearest, bilinear, bicubic, lanczos3, lanczos5 };

// JAX's kernels of image.resize (jax/_src/image/scale.py) at distance x >= 0 from a sample.
double kernel_at(Interp how, double x) {
  constexpr double pi = 3.14159265358979323846;
  switch (how) {
    case Interp::bicubic:  // Keys' cubic with a = -0.5
      if (x >= 2) return 0;
      if (x >= 1) return ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0;
      return ((1.5 * x - 2.5) * x) * x + 1.0;
    case Interp::lanczos3:
    case Interp::lanczos5: {
      double r = how == Interp::lanczos3 ? 3 : 5;
      if (x > r) return 0;
      if (x <= 1e-3) return 1;
      return r * std::sin(pi * x) * std::sin(pi * x / r) / (pi * pi * x * x);
    }
    default:  // bilinear: the triangle
      return std::max(0.0, 1.0 - x);
  }
}

// The (out, in) weights of resizing an axis of `in` samples to `out`, as JAX's image.resize
// computes them: nearest takes floor((i + 0.5) * in / out); the kernels weigh each input by
// its distance from the output's center (half-pixel), normalized to sum to 1 (so an edge
// clamps), stretched by in / out when antialiasing a reduction.
NodePtr resize_matrix(int64_t out, int64_t in, Interp how, bool antialias, DType dtype) {
  auto b = Buffer::make(DType::f64, {out, in});
  double* w = b->as<double>();
  std::fill(w, w + out * in, 0.0);
  double inv_scale = double(in) / double(out);
  double stretch = antialias ? std::max(inv_scale, 1.0) : 1.0;
  for (int64_t i = 0; i < out; ++i) {
    double center = (double(i) + 0.5) * inv_scale;
    if (how == Interp::nearest) {
      w[i * in + std::min<int64_t>(in - 1, int64_t(std::floor(center)))] = 1.0;
      continue;
    }
    double total = 0;
    for (int64_t j = 0; j < in; ++j)
      total += w[i * in + j] = kernel_at(how, std::abs(center - 0.5 - double(j)) / stretch);
    for (int64_t j = 0; j < in; ++j)
      w[i * in + j] = std::abs(total) > 1000 * 1.1920929e-7 ? w[i * in + j] / total : 0.0;
  }
  return api::constant(b, dtype, std::nullopt, "");
}

Interp interpolation_of(const Json& c, const std::string& where) {
  std::string how = string_or(c, "interpolation", "bilinear", where);
  if (how == "nearest") return Interp::nearest;
  if (how == "bilinear") return Interp::bilinear;
  if (how == "bicubic") return Interp::bicubic;
  if (how == "lanczos3") return Interp::lanczos3;
  if (how == "lanczos5") return Interp::lanczos5;
  fail(Status::not_implemented, where, ": interpolation '", how,
       "' (nearest, bilinear, bicubic, lanczos3 and lanczos5 are available: Keras' on JAX)");
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
NodePtr resize_axis(const NodePtr& x, int64_t axis, int64_t out, Interp how, bool antialias) {
  int64_t in = x->shape().dims[size_t(axis)];
  if (in == out) return x;
  return contract_axis(x, axis, resize_matrix(out, in, how, antialias, x->dtype()));
}

// Keras' crop_to_aspect_ratio: the largest centered box of the target's aspect ratio.
NodePtr crop_to_aspect(const NodePtr& x, const ImageAxes& a, int64_t height, int64_t width) {
  int64_t h = x->shape().dims[size_t(a.height)], w = x->shape().dims[size_t(a.width)];
  int64_t ch = std::max<int64_t>(std::min<int64_t>(h, int64_t(double(w * height) / width)), 1);
  int64_t cw = std::max<int64_t>(std::min<int64_t>(w, int64_t(double(h * width) / height)), 1);
  return crop(x, a, int64_t(double(h - ch) / 2), ch, int64_t(double(w - cw) / 2), cw);
}

// Keras' pad_to_aspect_ratio: fill_value bands, as wide on both sides, above and below (else
// left and right) to the target's aspect ratio.
NodePtr pad_to_aspect(const NodePtr& x, const ImageAxes& a, DataFormat f, int64_t height,
                      int64_t width, double fill, const std::string& where) {
  int64_t h = x->shape().dims[size_t(a.height)], w = x->shape().dims[size_t(a.width)];
  int64_t rows = int64_t(double(std::max(h, int64_t(double(w * height) / width)) - h) / 2);
  int64_t cols = int64_t(double(std::max(w, int64_t(double(h * width) / height)) - w) / 2);
  if (rows > 0)
    cols = 0;
  else if (cols == 0)
    return x;
  check(x->rank() == 4, Status::not_implemented, where,
        ": pad_to_aspect_ratio of unbatched images");
  NodePtr padded = api::spatial_2d_padding(x, {rows, rows, cols, cols}, f);
  if (fill == 0) return padded;
  // + fill where the bands are: a constant of 1s there, broadcast over batch and channels.
  Dims dims(4, 1);
  int64_t ph = h + 2 * rows, pw = w + 2 * cols;
  dims[size_t(a.height)] = ph, dims[size_t(a.width)] = pw;
  auto band = Buffer::make(DType::f64, dims);
  for (int64_t i = 0; i < ph; ++i)
    for (int64_t j = 0; j < pw; ++j)
      band->as<double>()[i * pw + j] =
          i < rows || i >= rows + h || j < cols || j >= cols + w ? fill : 0.0;
  return plus(padded, api::constant(band, x->dtype(), std::nullopt, ""));
}

NodePtr resized(const NodePtr& x, const ImageAxes& a, int64_t height, int64_t width, Interp how,
                bool antialias = false) {
  return resize_axis(resize_axis(x, a.height, height, how, antialias), a.width, width, how,
                     antialias);
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
        crop_(bool_or(c, "crop_to_aspect_ratio", false, where())),
        pad_(bool_or(c, "pad_to_aspect_ratio", false, where())),
        antialias_(bool_or(c, "antialias", false, where())),
        fill_(number_or(c, "fill_value", 0.0, where())),
        how_(interpolation_of(c, where())) {
    check(!(crop_ && pad_), Status::invalid_argument, where(),
          ": crop_to_aspect_ratio and pad_to_aspect_ratio exclude each other");
    std::string fill_mode = string_or(c, "fill_mode", "constant", where());
    check(fill_mode == "constant", Status::not_implemented, where(), ": fill_mode '", fill_mode,
          "' (Keras has constant only)");
  }
  Tensors call(const Tensors& inputs) override {
    NodePtr x = single(inputs);
    if (x->dtype() != compute_dtype()) x = api::cast(x, compute_dtype());
    ImageAxes a = image_axes(x, format_, where());
    if (crop_) x = crop_to_aspect(x, a, height_, width_);
    if (pad_) x = pad_to_aspect(x, a, format_, height_, width_, fill_, where());
    return {resized(x, a, height_, width_, how_, antialias_)};
  }

 private:
  int64_t height_, width_;
  DataFormat format_;
  bool crop_, pad_, antialias_;
  double fill_;
  Interp how_;
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
    if (x->dtype() != compute_dtype()) x = api::cast(x, compute_dtype());
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

// Keras 3's random augmentation layers: the images unchanged in inference (predict,
// evaluate), a random transform per image in training. RandomFlip, RandomBrightness and
// RandomContrast draw theirs (from the layer's seed, not Keras' generator, so not Keras'
// numbers); the others refuse to be trained through, naming the layer.
enum class Augment { flip, brightness, contrast, untrained };

// A (lo, hi) range from a factor: a number f is (-f, f) (contrast: (f, f) below and above 1).
std::pair<double, double> factor_of(const Json& c, const char* key, const std::string& where) {
  const Json& f = c.value(key, Json(0.0));
  if (f.is_number()) return {-f.get<double>(), f.get<double>()};
  check(f.is_array() && f.size() == 2 && f[0].is_number() && f[1].is_number(),
        Status::invalid_argument, where, ": ", key, " is a number or a pair of numbers");
  return {f[0].get<double>(), f[1].get<double>()};
}

class RandomAugmentation : public Layer {
 public:
  RandomAugmentation(const std::string& cls, const Json& c, Augment kind)
      : Layer(cls, c), kind_(kind), format_(data_format_of(c, where())) {
    if (c.contains("seed") && c["seed"].is_number_integer()) seed_ = c["seed"].get<int64_t>();
    if (kind == Augment::flip) {
      std::string mode = string_or(c, "mode", "horizontal_and_vertical", where());
      check(mode == "horizontal" || mode == "vertical" || mode == "horizontal_and_vertical",
            Status::invalid_argument, where(), ": mode '", mode, "'");
      horizontal_ = mode != "vertical";
      vertical_ = mode != "horizontal";
    }
    if (kind == Augment::brightness || kind == Augment::contrast) {
      factor_ = factor_of(c, "factor", where());
      const Json& r = c.value("value_range", Json::array({0, 255}));
      check(r.is_array() && r.size() == 2 && r[0].is_number() && r[1].is_number(),
            Status::invalid_argument, where(), ": value_range is a pair of numbers");
      range_ = {r[0].get<double>(), r[1].get<double>()};
    }
  }
  bool supports_masking() const override { return true; }
  std::string training_refusal() const override {
    return kind_ == Augment::untrained
               ? "its random transform in training is not available (it leaves the images as "
                 "they are in predict and evaluate)"
               : "";
  }
  Tensors call(const Tensors& inputs) override {
    NodePtr x = single(inputs);
    if (x->dtype() != compute_dtype()) x = api::cast(x, compute_dtype());
    if (kind_ == Augment::untrained) return {x};
    ImageAxes a = image_axes(x, format_, where());
    return {api::in_train_phase([&] { return augmented(x, a); }, [&] { return x; }, nullptr,
                                std::nullopt, class_name().c_str())};
  }

 private:
  // A draw per image in [lo, hi), shaped (batch, 1, 1, 1) (or (1, 1, 1) for one image).
  NodePtr per_image(const NodePtr& x, double lo, double hi) const {
    std::vector<int64_t> start(size_t(x->rank()), 0), size(size_t(x->rank()), 1);
    if (x->rank() == 4) size[0] = -1;
    return api::random_uniform_like(api::slice(x, start, size), lo, hi, x->dtype(), seed_);
  }
  NodePtr augmented(const NodePtr& x, const ImageAxes& a) const {
    if (kind_ == Augment::flip) {  // each direction flipped with probability 1/2
      NodePtr y = x;
      for (auto [on, axis] : {std::pair{horizontal_, a.width}, std::pair{vertical_, a.height}})
        if (on)
          y = select(less_equal(per_image(y, 0, 1), number(y, 0.5)), api::reverse(y, {axis}), y);
      return y;
    }
    double span = range_.second - range_.first;
    if (kind_ == Augment::brightness)  // x + delta * span, delta in factor's range
      return api::clip(plus(x, times(per_image(x, factor_.first, factor_.second), number(x, span))),
                       range_.first, range_.second);
    // contrast: (x - mean) * f + mean over each image's pixels, f in [1 - lo, 1 + hi]
    NodePtr mean = api::mean(x, std::vector<int64_t>{a.height, a.width}, true);
    NodePtr f = per_image(x, 1.0 - std::abs(factor_.first), 1.0 + factor_.second);
    return api::clip(plus(times(minus(x, mean), f), mean), range_.first, range_.second);
  }
  Augment kind_;
  DataFormat format_;
  std::optional<int64_t> seed_;
  bool horizontal_ = false, vertical_ = false;
  std::pair<double, double> factor_{0, 0}, range_{0, 255};
};

template <Augment Kind>
std::shared_ptr<Layer> augmentation(const Json& c, const char* cls) {
  return std::make_shared<RandomAugmentation>(cls, c, Kind);
}

#define KB_AUGMENTATION(Name, Kind)                                            \
  {                                                                            \
#Name, [](const Json& c) { return augmentation<Augment::Kind>(c, #Name); } \
  }

const LayerRegistrar rows[] = {
    {"Resizing", make_layer_of<Resizing>},
    {"CenterCrop", make_layer_of<CenterCrop>},
    KB_AUGMENTATION(RandomFlip, flip),
    KB_AUGMENTATION(RandomBrightness, brightness),
    KB_AUGMENTATION(RandomContrast, contrast),
    KB_AUGMENTATION(RandomCrop, untrained),  // Keras 3.15 too crops in training only
    KB_AUGMENTATION(RandomRotation, untrained),
    KB_AUGMENTATION(RandomZoom, untrained),
    KB_AUGMENTATION(RandomTranslation, untrained),
    KB_AUGMENTATION(RandomShear, untrained),
    KB_AUGMENTATION(RandomPerspective, untrained),
    KB_AUGMENTATION(RandomElasticTransform, untrained),
    KB_AUGMENTATION(RandomErasing, untrained),
    KB_AUGMENTATION(RandomGaussianBlur, untrained),
    KB_AUGMENTATION(RandomGrayscale, untrained),
    KB_AUGMENTATION(RandomHue, untrained),
    KB_AUGMENTATION(RandomSaturation, untrained),
    KB_AUGMENTATION(RandomSharpness, untrained),
    KB_AUGMENTATION(RandomColorDegeneration, untrained),
    KB_AUGMENTATION(RandomColorJitter, untrained),
    KB_AUGMENTATION(RandomPosterization, untrained),
    KB_AUGMENTATION(RandomInvert, untrained),
};
#undef KB_AUGMENTATION

}  // namespace
}  // namespace kb::model
