// keras.layers.BatchNormalization as Keras 2.2.4 builds it: batch statistics in training (the
// variance made unbiased for the moving average), moving averages as updates (zero-debiased),
// the moving statistics in inference; a Keras 3 or tf.keras model's are those Kerases' (the
// batch's own moments, no debiasing; Keras 3's formula).
#include <algorithm>
#include <functional>

#include "core/api/control.h"
#include "core/api/normalization.h"
#include "core/model/graph_math.h"
#include "core/model/layer_options.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

// An int, or tf.keras' list of one.
int64_t axis_of(const Json& c, const std::string& where) {
  if (c.contains("axis") && c["axis"].is_array()) {
    check(c["axis"].size() == 1 && c["axis"][0].is_number_integer(), Status::not_implemented, where,
          ": normalization over several axes");
    return c["axis"][0].get<int64_t>();
  }
  return int_or(c, "axis", -1, where);
}

class BatchNormalization : public Layer {
 public:
  // Keras 3 normalizes 16-bit inputs in float32, its statistics float32 too.
  bool autocast() const override { return false; }
  bool supports_masking() const override { return true; }
  explicit BatchNormalization(const Json& c)
      : Layer("BatchNormalization", c),
        axis_(axis_of(c, where())),
        momentum_(number_or(c, "momentum", 0.99, where())),
        epsilon_(number_or(c, "epsilon", 1e-3, where())),
        center_(bool_or(c, "center", true, where())),
        scale_(bool_or(c, "scale", true, where())) {}
  void build(const std::vector<Shape>& shapes) override {
    check(shapes.size() == 1 && shapes[0].rank() >= 2, Status::shape, where(),
          ": needs one input of rank 2 or more");
    int64_t rank = shapes[0].rank();
    if (axis_ < 0) axis_ += rank;
    check(axis_ >= 0 && axis_ < rank && shapes[0].dims[size_t(axis_)] > 0, Status::shape, where(),
          ": the normalized axis must exist and be known");
    Dims shape{shapes[0].dims[size_t(axis_)]};
    if (scale_)
      gamma_ =
          add_weight("gamma", shape, "gamma_initializer", "gamma_regularizer", "gamma_constraint");
    if (center_)
      beta_ = add_weight("beta", shape, "beta_initializer", "beta_regularizer", "beta_constraint");
    moving_mean_ =
        add_weight("moving_mean", shape, "moving_mean_initializer", nullptr, nullptr, false);
    moving_variance_ = add_weight("moving_variance", shape, "moving_variance_initializer", nullptr,
                                  nullptr, false);
  }
  Tensors call(const Tensors& inputs) override {
    const NodePtr& x = single(inputs);
    int64_t rank = x->rank();
    std::vector<int64_t> reduction;
    for (int64_t a = 0; a < rank; ++a)
      if (a != axis_) reduction.push_back(a);
    bool broadcast = axis_ != rank - 1;
    Dims bshape(size_t(rank), 1);
    bshape[size_t(axis_)] = x->shape().dims[size_t(axis_)];
    auto shaped = [&](const NodePtr& v) { return v && broadcast ? api::reshape(v, bshape) : v; };
    // Keras 2.2.4 normalizes through its backend's normalize_batch_in_training (whose fused
    // path returns the unbiased variance) and averages the variance made unbiased again:
    // variance *= n / (n - (1 + epsilon)), n = prod(shape(x)[reduction axes]). Keras 3
    // normalizes by the batch's moments and averages them as they are, and so does tf.keras but
    // over 4-D and 5-D inputs, where TensorFlow's fused kernel averages the unbiased variance
    // n / (n - 1) and raises epsilon to 1.001e-5.
    bool fused = rules() == KerasRules::tf_keras && (rank == 4 || rank == 5);
    NodePtr normed, mean, variance;
    std::function<NodePtr()> inference;
    if (rules() == KerasRules::keras2) {
      api::NormalizedBatch b =
          api::normalize_batch_in_training(x, gamma_, beta_, reduction, epsilon_);
      normed = b.normed, mean = b.mean, variance = b.var;
      inference = [&] {
        return api::batch_normalization(x, shaped(moving_mean_), shaped(moving_variance_),
                                        shaped(beta_), shaped(gamma_), axis_, epsilon_);
      };
    } else {
      double epsilon = fused ? std::max(epsilon_, 1.001e-5) : epsilon_;
      // The BatchNorm primitive where it applies: three passes over x (and three in the
      // gradient) where the composition's elementwise steps took a third of a ResNet50 step.
      api::NormalizedBatch b =
          api::normalize_by_population_moments(x, gamma_, beta_, reduction, epsilon);
      if (b.normed) {
        normed = b.normed, mean = b.mean, variance = b.var;
      } else {
        mean = api::mean(x, reduction, false);
        variance = api::var(x, reduction, false);
        normed = keras3_normalized(x, shaped(mean), shaped(variance), shaped(gamma_), shaped(beta_),
                                   epsilon);
      }
      inference = [&, epsilon] {
        return keras3_normalized(x, shaped(moving_mean_), shaped(moving_variance_), shaped(gamma_),
                                 shaped(beta_), epsilon);
      };
    }
    if (rules() == KerasRules::keras2 || fused) {
      NodePtr dims = api::shape(x);
      NodePtr n;
      for (int64_t a : reduction) {
        NodePtr d = api::slice(dims, {a}, {1});
        n = n ? times(n, d) : d;
      }
      n = api::cast(api::sum(n, std::nullopt, false), x->dtype());
      double less = fused ? 1.0 : 1.0 + epsilon_;
      variance = times(variance, divided(n, minus(n, number(n, less))));
    }
    // Keras 2.2.4 (on TensorFlow) zero-debiases its moving averages; Keras 3 and tf.keras do
    // not.
    auto average = [&](const NodePtr& moving, const NodePtr& value) {
      if (rules() == KerasRules::keras2)
        return api::moving_average_update(moving, value, momentum_);
      return api::update(moving, plus(times(moving, number(moving, momentum_)),
                                      times(value, number(value, 1.0 - momentum_))));
    };
    updates_.push_back(average(moving_mean_, mean));
    updates_.push_back(average(moving_variance_, variance));
    return {api::in_train_phase([&] { return normed; }, inference, nullptr, std::nullopt,
                                "BatchNormalization")};
  }

 private:
  int64_t axis_;
  double momentum_, epsilon_;
  bool center_, scale_;
  NodePtr gamma_, beta_, moving_mean_, moving_variance_;
};

const LayerRegistrar rows[] = {
    {"BatchNormalization", make_layer_of<BatchNormalization>},
};

}  // namespace
}  // namespace kb::model
