// keras.layers.advanced_activations: LeakyReLU, PReLU, ELU, ThresholdedReLU, Softmax, ReLU.
#include "core/model/activations.h"
#include "core/model/graph_math.h"
#include "core/model/layer_options.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

class LeakyReLU : public Layer {
 public:
  bool supports_masking() const override { return true; }
  explicit LeakyReLU(const Json& c)
      : Layer("LeakyReLU", c), alpha_(number_or(c, "alpha", 0.3, where())) {}
  Tensors call(const Tensors& in) override {
    return {api::relu(single(in), alpha_, std::nullopt, 0)};
  }

 private:
  double alpha_;
};

class PReLU : public Layer {
 public:
  bool supports_masking() const override { return true; }
  explicit PReLU(const Json& c) : Layer("PReLU", c) {}
  void build(const std::vector<Shape>& shapes) override {
    check(shapes.size() == 1 && shapes[0].rank() >= 2, Status::shape, where(),
          ": needs one input of rank 2 or more");
    Dims shape(shapes[0].dims.begin() + 1, shapes[0].dims.end());
    const Json& shared = config().value("shared_axes", Json());
    if (shared.is_number_integer()) {
      shape[size_t(shared.get<int64_t>() - 1)] = 1;
    } else if (shared.is_array()) {
      for (const auto& a : shared) {
        check(a.is_number_integer() && a.get<int64_t>() >= 1 &&
                  a.get<int64_t>() <= int64_t(shape.size()),
              Status::invalid_argument, where(), ": a shared axis out of range");
        shape[size_t(a.get<int64_t>() - 1)] = 1;
      }
    }
    for (int64_t d : shape)
      check(d > 0, Status::shape, where(), ": the input dims (but the batch) must be known");
    alpha_ =
        add_weight("alpha", shape, "alpha_initializer", "alpha_regularizer", "alpha_constraint");
  }
  Tensors call(const Tensors& in) override {
    // Keras 2.2.4 (TensorFlow): relu(x) - alpha * relu(-x)
    const NodePtr& x = single(in);
    NodePtr pos = api::relu(x, 0, std::nullopt, 0);
    NodePtr neg = times(api::negative(alpha_), api::relu(api::negative(x), 0, std::nullopt, 0));
    return {plus(pos, neg)};
  }

 private:
  NodePtr alpha_;
};

class ELU : public Layer {
 public:
  bool supports_masking() const override { return true; }
  explicit ELU(const Json& c) : Layer("ELU", c), alpha_(number_or(c, "alpha", 1.0, where())) {}
  Tensors call(const Tensors& in) override { return {api::elu(single(in), alpha_)}; }

 private:
  double alpha_;
};

class ThresholdedReLU : public Layer {
 public:
  bool supports_masking() const override { return true; }
  explicit ThresholdedReLU(const Json& c)
      : Layer("ThresholdedReLU", c), theta_(number_or(c, "theta", 1.0, where())) {}
  Tensors call(const Tensors& in) override {
    const NodePtr& x = single(in);
    NodePtr mask = api::binary_op("greater", ops::Greater, x, number(x, theta_));
    return {times(x, api::cast(mask, Session::get().floatx()))};
  }

 private:
  double theta_;
};

class Softmax : public Layer {
 public:
  bool supports_masking() const override { return true; }
  explicit Softmax(const Json& c) : Layer("Softmax", c), axis_(int_or(c, "axis", -1, where())) {}
  Tensors call(const Tensors& in) override { return {softmax_along(single(in), axis_, where())}; }

 private:
  int64_t axis_;
};

class ReLU : public Layer {
 public:
  bool supports_masking() const override { return true; }
  explicit ReLU(const Json& c)
      : Layer("ReLU", c),
        slope_(number_or(c, "negative_slope", 0, where())),
        threshold_(number_or(c, "threshold", 0, where())),
        max_value_(opt_number(c, "max_value", where())) {}
  Tensors call(const Tensors& in) override {
    return {api::relu(single(in), slope_, max_value_, threshold_)};
  }

 private:
  double slope_, threshold_;
  std::optional<double> max_value_;
};

const LayerRegistrar rows[] = {
    {"LeakyReLU", make_layer_of<LeakyReLU>},
    {"PReLU", make_layer_of<PReLU>},
    {"ELU", make_layer_of<ELU>},
    {"ThresholdedReLU", make_layer_of<ThresholdedReLU>},
    {"Softmax", make_layer_of<Softmax>},
    {"ReLU", make_layer_of<ReLU>},
};

}  // namespace
}  // namespace kb::model
