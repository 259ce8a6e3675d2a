// A model used as a layer of another (Keras' nested Sequential and functional models): its
// layers applied to the outer tensors, its weights the layer's.
#include "core/model/layer_options.h"
#include "core/model/model.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

template <const char* Class>
class NestedModel : public Layer {
 public:
  explicit NestedModel(const Json& c)
      : Layer(Class, named(c)),
        model_(Model::from_config(Json{{"class_name", Class}, {"config", c}})) {}
  Tensors call(const Tensors& inputs) override {
    Tensors out = model_->apply(inputs);
    if (!adopted_) {
      for (const auto& l : model_->layers()) adopt(*l);
      adopted_ = true;
    }
    return out;
  }
  const Model* nested_model() const override { return model_.get(); }

 private:
  // Keras 2.0/2.1 wrote a nested Sequential's config as the bare list of its layers.
  static Json named(const Json& c) {
    if (c.is_object()) return c;
    return Json{{"name", "sequential"}, {"layers", c}};
  }
  std::shared_ptr<Model> model_;
  bool adopted_ = false;
};

constexpr char kSequential[] = "Sequential";
constexpr char kModel[] = "Model";
constexpr char kFunctional[] = "Functional";

const LayerRegistrar rows[] = {
    {"Sequential", make_layer_of<NestedModel<kSequential>>},
    {"Model", make_layer_of<NestedModel<kModel>>},
    {"Functional", make_layer_of<NestedModel<kFunctional>>},
};

}  // namespace
}  // namespace kb::model
