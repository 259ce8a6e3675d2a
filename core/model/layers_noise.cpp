// keras.layers.noise: GaussianNoise, GaussianDropout, AlphaDropout (training only).
#include <cmath>

#include "core/api/control.h"
#include "core/api/random.h"
#include "core/model/graph_math.h"
#include "core/model/layer_options.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

NodePtr in_training(const char* who, const std::function<NodePtr()>& noisy, const NodePtr& x) {
  return api::in_train_phase(
      noisy, [&] { return x; }, nullptr, std::nullopt, who);
}

class GaussianNoise : public Layer {
 public:
  bool supports_masking() const override { return true; }
  explicit GaussianNoise(const Json& c)
      : Layer("GaussianNoise", c), stddev_(number_or(c, "stddev", 0, where())) {}
  Tensors call(const Tensors& inputs) override {
    const NodePtr& x = single(inputs);
    return {in_training(
        "GaussianNoise",
        [&] { return plus(x, api::random_normal_like(x, 0, stddev_, x->dtype(), std::nullopt)); },
        x)};
  }

 private:
  double stddev_;
};

class GaussianDropout : public Layer {
 public:
  bool supports_masking() const override { return true; }
  explicit GaussianDropout(const Json& c)
      : Layer("GaussianDropout", c), rate_(number_or(c, "rate", 0, where())) {}
  Tensors call(const Tensors& inputs) override {
    const NodePtr& x = single(inputs);
    if (!(rate_ > 0 && rate_ < 1)) return {x};
    double stddev = std::sqrt(rate_ / (1.0 - rate_));
    return {in_training(
        "GaussianDropout",
        [&] { return times(x, api::random_normal_like(x, 1.0, stddev, x->dtype(), std::nullopt)); },
        x)};
  }

 private:
  double rate_;
};

class AlphaDropout : public Layer {
 public:
  bool supports_masking() const override { return true; }
  explicit AlphaDropout(const Json& c)
      : Layer("AlphaDropout", c), rate_(number_or(c, "rate", 0, where())) {
    auto seed = opt_number(c, "seed", where());
    if (seed) seed_ = static_cast<int64_t>(*seed);
  }
  Tensors call(const Tensors& inputs) override {
    const NodePtr& x = single(inputs);
    if (!(rate_ > 0 && rate_ < 1)) return {x};
    return {in_training(
        "AlphaDropout",
        [&] {
          // Keras 2.2.4: keep with probability 1 - rate, dropped units set to alpha_p, then an
          // affine map that keeps the mean and variance (SELU's constants).
          const double alpha = 1.6732632423543772848170429916717;
          const double scale = 1.0507009873554804934193349852946;
          const double alpha_p = -alpha * scale;
          NodePtr u = api::random_uniform_like(x, 0, 1, x->dtype(), seed_);
          NodePtr kept = api::cast(
              api::binary_op("greater_equal", ops::GreaterEqual, u, number(u, rate_)), x->dtype());
          double a = std::pow((1 - rate_) * (1 + rate_ * alpha_p * alpha_p), -0.5);
          double b = -a * alpha_p * rate_;
          NodePtr y = plus(times(x, kept), times(number(x, alpha_p), minus(number(x, 1.0), kept)));
          return plus(times(number(x, a), y), number(x, b));
        },
        x)};
  }

 private:
  double rate_;
  std::optional<int64_t> seed_;
};

const LayerRegistrar rows[] = {
    {"GaussianNoise", make_layer_of<GaussianNoise>},
    {"GaussianDropout", make_layer_of<GaussianDropout>},
    {"AlphaDropout", make_layer_of<AlphaDropout>},
};

}  // namespace
}  // namespace kb::model
