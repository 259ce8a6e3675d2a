// Layers a program supplies (kb_model_register_layer): a function that builds the layer's graph
// from its config and input tensors, as a Keras layer's call does, with the weights it asks for.
#pragma once
#include <functional>
#include <map>
#include <string>

#include "core/model/layer.h"

namespace kb::model {

class CustomLayer : public Layer {
 public:
  // Builds the outputs; may call weight() for the layer's weights.
  using Build = std::function<Tensors(CustomLayer& layer, const Tensors& inputs)>;
  CustomLayer(const std::string& class_name, const Json& config, Build build);
  // The weight `name` of `shape`: made by the first call that names it (initialized by
  // `initializer`, a Keras initializer config), the same variable after.
  NodePtr weight(const std::string& name, const Dims& shape, const Json& initializer,
                 bool trainable);
  Tensors call(const Tensors& inputs) override { return build_(*this, inputs); }

 private:
  Build build_;
  std::map<std::string, NodePtr> by_name_;
};

// Registers class_name (not a built-in class) so that configs naming it build a CustomLayer.
void register_custom_layer(const std::string& class_name, CustomLayer::Build build);

}  // namespace kb::model
