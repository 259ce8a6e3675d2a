// The core layers of keras.layers.core (and InputLayer), as Keras 2.2.4 builds them.
#include <optional>

#include "core/api/api.h"
#include "core/api/control.h"
#include "core/api/random.h"
#include "core/model/activations.h"
#include "core/model/layer_options.h"
#include "core/model/lora.h"
#include "core/ops/build.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

// The model makes the placeholder from the config; applied, the layer passes it on.
class InputLayer : public Layer {
 public:
  explicit InputLayer(const Json& c) : Layer("InputLayer", c) {}
  bool supports_masking() const override { return true; }
  Tensors call(const Tensors& inputs) override { return inputs; }
};

class Dense : public Layer {
 public:
  explicit Dense(const Json& c)
      : Layer("Dense", c),
        units_(int_or(c, "units", -1, where())),
        use_bias_(bool_or(c, "use_bias", true, where())),
        lora_(Lora::of(c, "kernel_constraint", where())) {
    check(units_ > 0, Status::invalid_argument, where(), ": units must be a positive integer");
    weights_as_added_ = lora_.enabled();
  }
  bool supports_masking() const override { return true; }
  void build(const std::vector<Shape>& shapes) override {
    check(shapes.size() == 1 && shapes[0].rank() >= 2 && shapes[0].dims.back() > 0, Status::shape,
          where(), ": needs an input of rank 2 or more with its last dim known");
    int64_t in = shapes[0].dims.back();
    kernel_ = add_weight("kernel", {in, units_}, "kernel_initializer", "kernel_regularizer",
                         "kernel_constraint", !lora_.enabled());
    if (use_bias_)
      bias_ =
          add_weight("bias", {units_}, "bias_initializer", "bias_regularizer", "bias_constraint");
    if (lora_.enabled()) {
      lora_.a = add_weight_initialized("lora_kernel_a", {in, lora_.rank}, Lora::a_initializer(),
                                       "kernel_regularizer", nullptr, true);
      lora_.b = add_weight_initialized("lora_kernel_b", {lora_.rank, units_}, Lora::b_initializer(),
                                       "kernel_regularizer", nullptr, true);
    }
  }
  // Keras 3 keeps the kernel merged with its LoRA, and the bias.
  std::vector<std::string> keras3_weight_paths() const override {
    return lora_.keras3_paths(use_bias_);
  }
  NodePtr keras3_saved_value(size_t i) const override {
    return i == 0 && lora_.enabled() ? lora_.merged(kernel_) : Layer::keras3_saved_value(i);
  }
  Tensors call(const Tensors& inputs) override {
    NodePtr y = api::dot(single(inputs), lora_.merged(kernel_));
    if (use_bias_) y = api::bias_add(y, bias_, DataFormat::channels_last);
    return {activate(config().value("activation", Json()), y, where(), rules())};
  }

 private:
  int64_t units_;
  bool use_bias_;
  Lora lora_;
  NodePtr kernel_, bias_;
};

class Activation : public Layer {
 public:
  explicit Activation(const Json& c) : Layer("Activation", c) {}
  bool supports_masking() const override { return true; }
  Tensors call(const Tensors& inputs) override {
    return {activate(config().value("activation", Json()), single(inputs), where(), rules())};
  }
};

class Dropout : public Layer {
 public:
  explicit Dropout(const Json& c) : Layer("Dropout", c), rate_(number_or(c, "rate", 0, where())) {
    check(rate_ >= 0 && rate_ <= 1, Status::invalid_argument, where(), ": rate must be in [0, 1]");
    auto seed = opt_number(c, "seed", where());
    if (seed) seed_ = static_cast<int64_t>(*seed);
    if (c.contains("noise_shape") && !c["noise_shape"].is_null())
      noise_shape_ = dims_of(c["noise_shape"], where());
  }
  bool supports_masking() const override { return true; }
  Tensors call(const Tensors& inputs) override {
    const NodePtr& x = single(inputs);
    if (!(rate_ > 0 && rate_ < 1)) return {x};
    return {api::in_train_phase([&] { return api::dropout(x, rate_, noise_shape_, seed_); },
                                [&] { return x; }, nullptr, std::nullopt, "Dropout")};
  }

 private:
  double rate_;
  std::optional<int64_t> seed_;
  std::optional<Dims> noise_shape_;
};

class Flatten : public Layer {
 public:
  explicit Flatten(const Json& c) : Layer("Flatten", c) {}
  Tensors call(const Tensors& inputs) override {
    NodePtr x = single(inputs);
    // channels_first inputs are made channels_last first, so both flatten alike (Keras 2.2.4).
    if (data_format_of(config(), where()) == DataFormat::channels_first && x->rank() > 2) {
      std::vector<int64_t> pattern{0};
      for (int64_t i = 2; i < x->rank(); ++i) pattern.push_back(i);
      pattern.push_back(1);
      x = api::permute_dimensions(x, pattern);
    }
    return {api::batch_flatten(x)};
  }
};

class Reshape : public Layer {
 public:
  explicit Reshape(const Json& c) : Layer("Reshape", c) {
    const Json& t = required(c, "target_shape", where());
    check(t.is_array(), Status::invalid_argument, where(), ": target_shape is not a list");
    for (const Json& d : t) {
      check(d.is_number_integer() && d.get<int64_t>() >= -1, Status::invalid_argument, where(),
            ": target_shape holds a dim that is not an integer >= -1");
      target_.push_back(d.get<int64_t>());
    }
  }
  Tensors call(const Tensors& inputs) override {
    const NodePtr& x = single(inputs);
    // Keras: reshape to (batch,) + target_shape, one -1 in the target taken from x's size.
    Dims dims{-1};
    int64_t known = 1, unknown = -1;
    for (size_t i = 0; i < target_.size(); ++i) {
      if (target_[i] < 0) {
        check(unknown < 0, Status::invalid_argument, where(), ": two unknown dims in target_shape");
        unknown = int64_t(i);
      } else {
        known *= target_[i];
      }
      dims.push_back(target_[i]);
    }
    if (unknown >= 0) {
      Dims rest(x->shape().dims.begin() + 1, x->shape().dims.end());
      int64_t n = numel(rest);
      check(x->rank() >= 1 && n >= 0 && known > 0 && n % known == 0, Status::shape, where(),
            ": cannot infer the -1 of target_shape from input shape ", dims_str(x->shape().dims));
      dims[size_t(unknown) + 1] = n / known;
    }
    return {api::reshape(x, dims)};
  }

 private:
  Dims target_;
};

class Permute : public Layer {
 public:
  explicit Permute(const Json& c) : Layer("Permute", c) {
    const Json& d = required(c, "dims", where());
    check(d.is_array(), Status::invalid_argument, where(), ": dims is not a list");
    pattern_.push_back(0);
    for (const auto& v : d) {
      check(v.is_number_integer(), Status::invalid_argument, where(), ": dims holds a non-integer");
      pattern_.push_back(v.get<int64_t>());
    }
  }
  Tensors call(const Tensors& inputs) override {
    return {api::permute_dimensions(single(inputs), pattern_)};
  }

 private:
  std::vector<int64_t> pattern_;
};

class RepeatVector : public Layer {
 public:
  explicit RepeatVector(const Json& c) : Layer("RepeatVector", c), n_(int_or(c, "n", -1, where())) {
    check(n_ > 0, Status::invalid_argument, where(), ": n must be positive");
  }
  Tensors call(const Tensors& inputs) override { return {api::repeat(single(inputs), n_)}; }

 private:
  int64_t n_;
};

// The identity that adds l1/l2 activity penalties to the loss (Layer applies them).
class ActivityRegularization : public Layer {
 public:
  explicit ActivityRegularization(const Json& c) : Layer("ActivityRegularization", c) {}
  bool supports_masking() const override { return true; }
  Tensors call(const Tensors& inputs) override { return {single(inputs)}; }
};

// Dropout of whole channels: the noise is shared along the spatial axes.
class SpatialDropout : public Layer {
 public:
  SpatialDropout(const char* cls, const Json& c, int spatial)
      : Layer(cls, c), rate_(number_or(c, "rate", 0, where())), spatial_(spatial) {
    format_ = data_format_of(c, spatial, where());
    auto seed = opt_number(c, "seed", where());
    if (seed) seed_ = static_cast<int64_t>(*seed);
  }
  bool supports_masking() const override { return true; }
  Tensors call(const Tensors& inputs) override {
    const NodePtr& x = single(inputs);
    if (!(rate_ > 0 && rate_ < 1)) return {x};
    check(x->rank() == spatial_ + 2, Status::shape, where(), ": needs inputs of rank ",
          spatial_ + 2);
    // -1 takes x's dim (batch and channels), 1 shares the noise.
    Dims noise(size_t(spatial_ + 2), 1);
    noise[0] = -1;
    noise[size_t(channel_axis(format_, spatial_ + 2))] = -1;
    return {api::in_train_phase([&] { return api::dropout(x, rate_, noise, seed_); },
                                [&] { return x; }, nullptr, std::nullopt, class_name().c_str())};
  }

 private:
  double rate_;
  int spatial_;
  DataFormat format_;
  std::optional<int64_t> seed_;
};

template <int Spatial>
struct SpatialDropoutN : SpatialDropout {
  explicit SpatialDropoutN(const Json& c)
      : SpatialDropout(Spatial == 1   ? "SpatialDropout1D"
                       : Spatial == 2 ? "SpatialDropout2D"
                                      : "SpatialDropout3D",
                       c, Spatial) {}
};

// Masking: timesteps whose features all equal mask_value are zeroed and masked out.
class Masking : public Layer {
 public:
  explicit Masking(const Json& c)
      : Layer("Masking", c), value_(number_or(c, "mask_value", 0, where())) {}
  bool supports_masking() const override { return true; }
  Tensors call(const Tensors& inputs) override {
    const NodePtr& x = single(inputs);
    NodePtr keep = api::any(api::binary_op("not_equal", ops::NotEqual, x, scalar_like(x, value_)),
                            std::vector<int64_t>{-1}, true);
    return {api::binary_op("multiply", ops::Mul, x, api::cast(keep, x->dtype()))};
  }
  Tensors compute_mask(const Tensors& inputs, const Tensors&) override {
    const NodePtr& x = inputs[0];
    return {api::any(api::binary_op("not_equal", ops::NotEqual, x, scalar_like(x, value_)),
                     std::vector<int64_t>{-1}, false)};
  }

 private:
  double value_;
};

const LayerRegistrar rows[] = {
    {"Masking", make_layer_of<Masking>},
    {"InputLayer", make_layer_of<InputLayer>},
    {"Dense", make_layer_of<Dense>},
    {"Activation", make_layer_of<Activation>},
    {"Dropout", make_layer_of<Dropout>},
    {"Flatten", make_layer_of<Flatten>},
    {"Reshape", make_layer_of<Reshape>},
    {"Permute", make_layer_of<Permute>},
    {"RepeatVector", make_layer_of<RepeatVector>},
    {"ActivityRegularization", make_layer_of<ActivityRegularization>},
    {"SpatialDropout1D", make_layer_of<SpatialDropoutN<1>>},
    {"SpatialDropout2D", make_layer_of<SpatialDropoutN<2>>},
    {"SpatialDropout3D", make_layer_of<SpatialDropoutN<3>>},
};

}  // namespace
}  // namespace kb::model
