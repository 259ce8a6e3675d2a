// keras.layers.convolutional: Conv1D/2D/3D (with groups), SeparableConv1D/2D,
// DepthwiseConv1D/2D, Conv1DTranspose/2D/3D, Cropping, UpSampling and ZeroPadding in 1, 2 and
// 3 dims.
#include "core/api/api.h"
#include "core/api/padding_resize.h"
#include "core/model/activations.h"
#include "core/model/layer_options.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

// The spatial dims of x (without batch and channels) in its data format.
Dims spatial_dims(const NodePtr& x, DataFormat f, const std::string& where) {
  const Dims& d = x->shape().dims;
  check(x->rank() >= 3, Status::shape, where, ": an input of rank ", x->rank());
  return f == DataFormat::channels_first ? Dims(d.begin() + 2, d.end())
                                         : Dims(d.begin() + 1, d.end() - 1);
}

// Keras' _Conv: the kernel (kernel_size + (input channels, filters)) and the bias, convolved with
// the backend function of its rank, bias added, activated.
class Conv : public Layer {
 public:
  Conv(const std::string& cls, const Json& c, int rank)
      : Layer(cls, c),
        rank_(rank),
        filters_(int_or(c, "filters", -1, where())),
        kernel_size_(ints_or(c, "kernel_size", size_t(rank), -1, where())),
        strides_(ints_or(c, "strides", size_t(rank), 1, where())),
        dilation_(ints_or(c, "dilation_rate", size_t(rank), 1, where())),
        padding_(padding_of(c, where())),
        format_(data_format_of(c, rank, where())),
        use_bias_(bool_or(c, "use_bias", true, where())),
        groups_(int_or(c, "groups", 1, where())) {
    check(filters_ > 0, Status::invalid_argument, where(), ": filters must be positive");
    check(groups_ > 0 && filters_ % groups_ == 0, Status::invalid_argument, where(), ": ", groups_,
          " groups do not divide the ", filters_, " filters");
    for (int64_t k : kernel_size_)
      check(k > 0, Status::invalid_argument, where(), ": kernel_size must be positive");
  }
  void build(const std::vector<Shape>& shapes) override {
    check(shapes.size() == 1 && shapes[0].rank() == rank_ + 2, Status::shape, where(),
          ": needs one input of rank ", rank_ + 2);
    int64_t channels = shapes[0].dims[size_t(channel_axis(format_, rank_ + 2))];
    check(channels > 0, Status::shape, where(), ": the channel dim must be known");
    check(channels % groups_ == 0, Status::shape, where(), ": ", groups_,
          " groups do not divide the ", channels, " input channels");
    Dims k = kernel_shape(channels / groups_);
    kernel_ =
        add_weight("kernel", k, "kernel_initializer", "kernel_regularizer", "kernel_constraint");
    if (use_bias_)
      bias_ =
          add_weight("bias", {filters_}, "bias_initializer", "bias_regularizer", "bias_constraint");
  }
  Tensors call(const Tensors& inputs) override {
    NodePtr y = convolve(single(inputs));
    if (use_bias_) y = api::bias_add(y, bias_, format_);
    return {activate(config().value("activation", Json()), y, where(), rules())};
  }

 protected:
  virtual Dims kernel_shape(int64_t channels) const {
    Dims k = kernel_size_;
    k.push_back(channels);
    k.push_back(filters_);
    return k;
  }
  virtual NodePtr convolve(const NodePtr& x) {
    if (groups_ == 1) return convolve_with(x, kernel_);
    // Keras' groups: each group of input channels convolved with its filters, as one grouped
    // convolution. Keras' kernel (spatial..., C / G, OC) in the primitive's layout (spatial...,
    // C, OC / G): K'[z, g C/G + c, m] = K[z, c, g OC/G + m].
    const int64_t nsp = rank_, in = kernel_->shape().dims[size_t(nsp)], out = filters_ / groups_;
    Dims split = kernel_size_, merged = kernel_size_;
    split.insert(split.end(), {in, groups_, out});
    merged.insert(merged.end(), {in * groups_, out});
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < nsp; ++i) perm.push_back(i);
    perm.insert(perm.end(), {nsp + 1, nsp, nsp + 2});
    NodePtr k = api::reshape(api::permute_dimensions(api::reshape(kernel_, split), perm), merged);
    return api::grouped_conv(x, k, groups_, strides_, padding_, format_, dilation_);
  }
  NodePtr convolve_with(const NodePtr& x, const NodePtr& kernel) const {
    return convolution(x, kernel, strides_, padding_, format_, dilation_);
  }
  int rank_;
  int64_t filters_;
  Dims kernel_size_, strides_, dilation_;
  api::Padding padding_;
  DataFormat format_;
  bool use_bias_;
  int64_t groups_;  // Keras 3 and tf.keras 2.3+
  NodePtr kernel_, bias_;
};

template <int Rank>
struct ConvN : Conv {
  explicit ConvN(const Json& c) : Conv(ranked("Conv", Rank), c, Rank) {}
};

// conv_utils.deconv_length without output_padding.
int64_t deconv_length(int64_t size, int64_t stride, int64_t kernel, api::Padding padding,
                      int64_t dilation) {
  if (size < 0) return -1;
  kernel = kernel + (kernel - 1) * (dilation - 1);
  if (padding == api::Padding::valid) return size * stride + std::max<int64_t>(kernel - stride, 0);
  return size * stride;
}

// Conv2DTranspose / Conv3DTranspose: kernel_size + (filters, input channels).
class ConvTranspose : public Conv {
 public:
  ConvTranspose(const char* cls, const Json& c, int rank) : Conv(cls, c, rank) {
    check(!c.contains("output_padding") || c["output_padding"].is_null(), Status::not_implemented,
          where(), ": output_padding");
  }

 protected:
  Dims kernel_shape(int64_t channels) const override {
    Dims k = kernel_size_;
    k.push_back(filters_);
    k.push_back(channels);
    return k;
  }
  NodePtr convolve(const NodePtr& x) override {
    Dims space = spatial_dims(x, format_, where());
    Dims out{-1};
    if (format_ == DataFormat::channels_first) out.push_back(filters_);
    for (size_t i = 0; i < space.size(); ++i) {
      int64_t n = deconv_length(space[i], strides_[i], kernel_size_[i], padding_, dilation_[i]);
      check(n > 0, Status::shape, where(), ": the spatial dims must be known");
      out.push_back(n);
    }
    if (format_ == DataFormat::channels_last) out.push_back(filters_);
    if (rank_ == 1) {  // as a 2-D one over (1, steps)
      Dims out2{-1, 1, out[1], out[2]};
      NodePtr y = api::conv2d_transpose(api::expand_dims(x, 1), api::expand_dims(kernel_, 0), out2,
                                        {1, strides_[0]}, padding_, format_, {1, dilation_[0]});
      return api::squeeze(y, 1);
    }
    if (rank_ == 2)
      return api::conv2d_transpose(x, kernel_, out, strides_, padding_, format_, dilation_);
    return api::conv3d_transpose(x, kernel_, out, strides_, padding_, format_);
  }
};

struct Conv1DTranspose : ConvTranspose {
  explicit Conv1DTranspose(const Json& c) : ConvTranspose("Conv1DTranspose", c, 1) {}
};

struct Conv2DTranspose : ConvTranspose {
  explicit Conv2DTranspose(const Json& c) : ConvTranspose("Conv2DTranspose", c, 2) {}
};
struct Conv3DTranspose : ConvTranspose {
  explicit Conv3DTranspose(const Json& c) : ConvTranspose("Conv3DTranspose", c, 3) {}
};

// SeparableConv1D/2D: a depthwise kernel (kernel_size + (channels, depth_multiplier)) and a
// pointwise kernel ((1,) * rank + (channels * depth_multiplier, filters)).
class SeparableConv : public Conv {
 public:
  SeparableConv(const char* cls, const Json& c, int rank)
      : Conv(cls, c, rank), multiplier_(int_or(c, "depth_multiplier", 1, where())) {
    if (rank == 1) format_ = data_format_of(c, where());  // SeparableConv1D keeps its format
  }
  void build(const std::vector<Shape>& shapes) override {
    check(shapes.size() == 1 && shapes[0].rank() == rank_ + 2, Status::shape, where(),
          ": needs one input of rank ", rank_ + 2);
    int64_t channels = shapes[0].dims[size_t(channel_axis(format_, rank_ + 2))];
    check(channels > 0, Status::shape, where(), ": the channel dim must be known");
    Dims depth = kernel_size_;
    depth.push_back(channels);
    depth.push_back(multiplier_);
    Dims point(size_t(rank_), 1);
    point.push_back(channels * multiplier_);
    point.push_back(filters_);
    depthwise_ = add_weight("depthwise_kernel", depth, "depthwise_initializer",
                            "depthwise_regularizer", "depthwise_constraint");
    pointwise_ = add_weight("pointwise_kernel", point, "pointwise_initializer",
                            "pointwise_regularizer", "pointwise_constraint");
    if (use_bias_)
      bias_ =
          add_weight("bias", {filters_}, "bias_initializer", "bias_regularizer", "bias_constraint");
  }

 protected:
  NodePtr convolve(const NodePtr& x) override {
    if (rank_ == 1)
      return api::separable_conv1d(x, depthwise_, pointwise_, strides_[0], padding_, format_,
                                   dilation_[0]);
    return api::separable_conv2d(x, depthwise_, pointwise_, strides_, padding_, format_, dilation_);
  }
  int64_t multiplier_;
  NodePtr depthwise_, pointwise_;
};

struct SeparableConv1D : SeparableConv {
  explicit SeparableConv1D(const Json& c) : SeparableConv("SeparableConv1D", c, 1) {}
};
struct SeparableConv2D : SeparableConv {
  explicit SeparableConv2D(const Json& c) : SeparableConv("SeparableConv2D", c, 2) {}
};

// DepthwiseConv1D/2D: filters are the channels times depth_multiplier; the 1-D one runs as a
// 2-D one over (1, steps).
template <int Rank>
class DepthwiseConv : public Conv {
 public:
  explicit DepthwiseConv(const Json& c)
      : Conv(ranked("DepthwiseConv", Rank), with_filters(c), Rank),
        multiplier_(int_or(c, "depth_multiplier", 1, where())) {}
  void build(const std::vector<Shape>& shapes) override {
    check(shapes.size() == 1 && shapes[0].rank() == Rank + 2, Status::shape, where(),
          ": needs one input of rank ", Rank + 2);
    int64_t channels = shapes[0].dims[size_t(channel_axis(format_, Rank + 2))];
    check(channels > 0, Status::shape, where(), ": the channel dim must be known");
    Dims depth = kernel_size_;
    depth.push_back(channels);
    depth.push_back(multiplier_);
    kernel_ = add_weight("depthwise_kernel", depth, "depthwise_initializer",
                         "depthwise_regularizer", "depthwise_constraint");
    if (use_bias_)
      bias_ = add_weight("bias", {channels * multiplier_}, "bias_initializer", "bias_regularizer",
                         "bias_constraint");
  }

 protected:
  NodePtr convolve(const NodePtr& x) override {
    if (Rank == 2) return api::depthwise_conv2d(x, kernel_, strides_, padding_, format_, dilation_);
    NodePtr y = api::depthwise_conv2d(api::expand_dims(x, 1), api::expand_dims(kernel_, 0),
                                      {1, strides_[0]}, padding_, format_, {1, dilation_[0]});
    return api::squeeze(y, 1);
  }

 private:
  static Json with_filters(Json c) {
    c["filters"] = 1;  // unused: the base class checks filters
    c.erase("groups");
    return c;
  }
  int64_t multiplier_;
};

// ZeroPadding1D/2D/3D: padding as an int, a pair per axis or ((a, b), ...).
std::vector<int64_t> pads_of(const Json& c, int rank, const std::string& where) {
  const Json& p = c.contains("padding") ? c["padding"] : Json(1);
  std::vector<int64_t> out;
  auto add = [&](const Json& v) {
    if (v.is_number_integer()) {
      out.push_back(v.get<int64_t>());
      out.push_back(v.get<int64_t>());
    } else {
      check(v.is_array() && v.size() == 2 && v[0].is_number_integer() && v[1].is_number_integer(),
            Status::invalid_argument, where, ": a padding entry is not an int or a pair");
      out.push_back(v[0].get<int64_t>());
      out.push_back(v[1].get<int64_t>());
    }
  };
  if (p.is_number_integer()) {
    for (int i = 0; i < rank; ++i) add(p);
  } else if (rank == 1) {
    add(p);
  } else {
    check(p.is_array() && p.size() == size_t(rank), Status::invalid_argument, where,
          ": padding is not one entry per spatial axis");
    for (const auto& v : p) add(v);
  }
  for (int64_t v : out) check(v >= 0, Status::invalid_argument, where, ": a negative padding");
  return out;
}

template <int Rank>
class ZeroPadding : public Layer {
 public:
  explicit ZeroPadding(const Json& c)
      : Layer(ranked("ZeroPadding", Rank), c),
        pads_(pads_of(c, Rank, where())),
        format_(data_format_of(c, Rank, where())) {}
  Tensors call(const Tensors& inputs) override {
    const NodePtr& x = single(inputs);
    if (Rank == 1) return {api::temporal_padding(x, pads_)};
    if (Rank == 2) return {api::spatial_2d_padding(x, pads_, format_)};
    return {api::spatial_3d_padding(x, pads_, format_)};
  }

 private:
  std::vector<int64_t> pads_;
  DataFormat format_;
};

// Cropping1D/2D/3D: a slice of the spatial axes with known sizes.
template <int Rank>
class Cropping : public Layer {
 public:
  explicit Cropping(const Json& c)
      : Layer(ranked("Cropping", Rank), with_default(c)),
        crops_(pads_of(rename(config()), Rank, where())),
        format_(data_format_of(c, Rank, where())) {}
  Tensors call(const Tensors& inputs) override {
    const NodePtr& x = single(inputs);
    check(x->rank() == Rank + 2, Status::shape, where(), ": needs inputs of rank ", Rank + 2);
    Dims space = spatial_dims(x, format_, where());
    int64_t first = format_ == DataFormat::channels_first ? 2 : 1;
    std::vector<int64_t> start(size_t(Rank + 2), 0), size(size_t(Rank + 2), -1);
    for (int i = 0; i < Rank; ++i) {
      int64_t keep = space[size_t(i)] - crops_[size_t(2 * i)] - crops_[size_t(2 * i + 1)];
      check(space[size_t(i)] >= 0 && keep >= 0, Status::shape, where(),
            ": crops larger than the input, or a spatial dim unknown");
      start[size_t(first + i)] = crops_[size_t(2 * i)];
      size[size_t(first + i)] = keep;
    }
    return {api::slice(x, start, size)};
  }

 private:
  static Json with_default(Json c) {
    if (!c.contains("cropping")) c["cropping"] = Rank == 1 ? Json{1, 1} : Json(0);
    return c;
  }
  static Json rename(const Json& c) { return Json{{"padding", c["cropping"]}}; }
  std::vector<int64_t> crops_;
  DataFormat format_;
};

template <int Rank>
class UpSampling : public Layer {
 public:
  explicit UpSampling(const Json& c)
      : Layer(ranked("UpSampling", Rank), c),
        size_(ints_or(c, "size", size_t(Rank), 2, where())),
        format_(data_format_of(c, Rank, where())) {
    std::string interpolation = string_or(c, "interpolation", "nearest", where());
    check(interpolation == "nearest" || interpolation == "bilinear", Status::invalid_argument,
          where(), ": unknown interpolation '", interpolation, "'");
    bilinear_ = interpolation == "bilinear";
  }
  Tensors call(const Tensors& inputs) override {
    const NodePtr& x = single(inputs);
    if (Rank == 1) return {api::repeat_elements(x, size_[0], 1)};
    if (Rank == 2)
      return {api::resize_images(
          x, size_[0], size_[1], format_,
          bilinear_ ? api::Interpolation::bilinear : api::Interpolation::nearest)};
    return {api::resize_volumes(x, size_[0], size_[1], size_[2], format_)};
  }

 private:
  std::vector<int64_t> size_;
  DataFormat format_;
  bool bilinear_ = false;
};

const LayerRegistrar rows[] = {
    {"Conv1D", make_layer_of<ConvN<1>>},
    {"Conv2D", make_layer_of<ConvN<2>>},
    {"Conv3D", make_layer_of<ConvN<3>>},
    {"Conv1DTranspose", make_layer_of<Conv1DTranspose>},
    {"Conv2DTranspose", make_layer_of<Conv2DTranspose>},
    {"Conv3DTranspose", make_layer_of<Conv3DTranspose>},
    {"SeparableConv1D", make_layer_of<SeparableConv1D>},
    {"SeparableConv2D", make_layer_of<SeparableConv2D>},
    {"DepthwiseConv1D", make_layer_of<DepthwiseConv<1>>},
    {"DepthwiseConv2D", make_layer_of<DepthwiseConv<2>>},
    {"ZeroPadding1D", make_layer_of<ZeroPadding<1>>},
    {"ZeroPadding2D", make_layer_of<ZeroPadding<2>>},
    {"ZeroPadding3D", make_layer_of<ZeroPadding<3>>},
    {"Cropping1D", make_layer_of<Cropping<1>>},
    {"Cropping2D", make_layer_of<Cropping<2>>},
    {"Cropping3D", make_layer_of<Cropping<3>>},
    {"UpSampling1D", make_layer_of<UpSampling<1>>},
    {"UpSampling2D", make_layer_of<UpSampling<2>>},
    {"UpSampling3D", make_layer_of<UpSampling<3>>},
};

}  // namespace
}  // namespace kb::model
