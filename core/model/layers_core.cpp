// The core layers of keras.layers.core (and InputLayer), as Keras 2.2.4 builds them.
#include <optional>

#include "core/api/api.h"
#include "core/api/control.h"
#include "core/api/random.h"
#include "core/model/activations.h"
#include "core/model/layer.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

// The model makes the placeholder from the config; applied, the layer passes it on.
class InputLayer : public Layer {
 public:
  explicit InputLayer(const Json& c) : Layer("InputLayer", c) {}
  Tensors call(const Tensors& inputs) override { return inputs; }
};

class Dense : public Layer {
 public:
  explicit Dense(const Json& c)
      : Layer("Dense", c),
        units_(int_or(c, "units", -1, where())),
        use_bias_(bool_or(c, "use_bias", true, where())) {
    check(units_ > 0, Status::invalid_argument, where(), ": units must be a positive integer");
  }
  void build(const std::vector<Shape>& shapes) override {
    check(shapes.size() == 1 && shapes[0].rank() >= 2 && shapes[0].dims.back() > 0, Status::shape,
          where(), ": needs an input of rank 2 or more with its last dim known");
    kernel_ = add_weight("kernel", {shapes[0].dims.back(), units_}, "kernel_initializer",
                         "kernel_regularizer");
    if (use_bias_) bias_ = add_weight("bias", {units_}, "bias_initializer", "bias_regularizer");
  }
  Tensors call(const Tensors& inputs) override {
    NodePtr y = api::dot(single(inputs), kernel_);
    if (use_bias_) y = api::bias_add(y, bias_, DataFormat::channels_last);
    return {activate(config().value("activation", Json()), y, where())};
  }

 private:
  int64_t units_;
  bool use_bias_;
  NodePtr kernel_, bias_;
};

class Activation : public Layer {
 public:
  explicit Activation(const Json& c) : Layer("Activation", c) {}
  Tensors call(const Tensors& inputs) override {
    return {activate(config().value("activation", Json()), single(inputs), where())};
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
    if (string_or(config(), "data_format", "channels_last", where()) == "channels_first" &&
        x->rank() > 2) {
      std::vector<int64_t> pattern{0};
      for (int64_t i = 2; i < x->rank(); ++i) pattern.push_back(i);
      pattern.push_back(1);
      x = api::permute_dimensions(x, pattern);
    }
    return {api::batch_flatten(x)};
  }
};

template <class L>
std::shared_ptr<Layer> make(const Json& c) {
  return std::make_shared<L>(c);
}

const LayerRegistrar rows[] = {
    {"InputLayer", make<InputLayer>}, {"Dense", make<Dense>},     {"Activation", make<Activation>},
    {"Dropout", make<Dropout>},       {"Flatten", make<Flatten>},
};

}  // namespace
}  // namespace kb::model
