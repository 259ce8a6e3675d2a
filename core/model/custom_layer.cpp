#include "core/model/custom_layer.h"

#include "core/graph/session.h"
#include "core/util/error.h"

namespace kb::model {

CustomLayer::CustomLayer(const std::string& class_name, const Json& config, Build build)
    : Layer(class_name, config), build_(std::move(build)) {}

NodePtr CustomLayer::weight(const std::string& name, const Dims& shape, const Json& initializer,
                            bool trainable) {
  auto it = by_name_.find(name);
  if (it != by_name_.end()) {
    check(it->second->shape().dims == shape, Status::shape, where(), ": weight '", name,
          "' asked for again with shape ", dims_str(shape), ", it has ",
          dims_str(it->second->shape().dims));
    return it->second;
  }
  for (int64_t d : shape)
    check(d >= 0, Status::invalid_argument, where(), ": weight '", name, "' has a negative dim");
  NodePtr v;
  {
    NameScope scope(this->name());
    v = add_weight_initialized(name, shape, initializer, nullptr, nullptr, trainable);
  }
  by_name_[name] = v;
  return v;
}

void register_custom_layer(const std::string& class_name, CustomLayer::Build build) {
  check(!class_name.empty(), Status::invalid_argument, "the class name is empty");
  check(static_cast<bool>(build), Status::invalid_argument, "no build function");
  register_layer_class(class_name, [class_name, build](const Json& config) {
    return std::make_shared<CustomLayer>(class_name, config, build);
  });
}

}  // namespace kb::model
