// The small layers keras.applications defines for its models, under the names their files give
// them: ConvNeXt's LayerScale (x * gamma, gamma starting at init_values) and
// InceptionResNetV2's CustomScaleLayer (x + r * scale).
#include "core/model/graph_math.h"
#include "core/model/layer_options.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

class LayerScale : public Layer {
 public:
  explicit LayerScale(const Json& c)
      : Layer("LayerScale", c),
        init_(number_or(c, "init_values", 1e-6, where())),
        dim_(int_or(c, "projection_dim", 0, where())) {
    check(dim_ > 0, Status::invalid_argument, where(), ": projection_dim must be positive");
  }
  void build(const std::vector<Shape>&) override {
    gamma_ = add_weight_initialized(
        "gamma", {dim_}, Json{{"class_name", "Constant"}, {"config", {{"value", init_}}}}, nullptr,
        nullptr, true);
  }
  Tensors call(const Tensors& inputs) override { return {times(single(inputs), gamma_)}; }

 private:
  double init_;
  int64_t dim_;
  NodePtr gamma_;
};

class CustomScaleLayer : public Layer {
 public:
  explicit CustomScaleLayer(const Json& c)
      : Layer("CustomScaleLayer", c), scale_(number_or(c, "scale", 1.0, where())) {}
  Tensors call(const Tensors& inputs) override {
    check(inputs.size() == 2, Status::invalid_argument, where(), ": takes two inputs, given ",
          inputs.size());
    return {plus(inputs[0], times(inputs[1], number(inputs[1], scale_)))};
  }

 private:
  double scale_;
};

const LayerRegistrar rows[] = {
    {"LayerScale", make_layer_of<LayerScale>},
    {"CustomScaleLayer", make_layer_of<CustomScaleLayer>},
};

}  // namespace
}  // namespace kb::model
