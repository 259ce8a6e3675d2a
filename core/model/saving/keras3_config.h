// Keras 3's serialized objects (config.json of a `.keras` archive) in the form the model layer
// reads (Keras 2's model_config and training_config): the same layers and arguments, with
// Keras 3's functional nodes ({"args", "kwargs"} holding `__keras_tensor__` entries) as Keras
// 2's [layer, node, tensor] lists and its compile_config as a training_config.
#pragma once
#include "core/model/json.h"

namespace kb::model {

// {"class_name", "config"} of a Sequential or functional model from Keras 3's
// {"module", "class_name", "config", "registered_name", "build_config", ...}. A subclassed
// model (its call() is Python code) is refused: nothing in a file is ever run. `keras3`: the
// nodes are numbered as Keras 3 does (a nested Sequential's from 0); tf.keras 2.13-2.15's
// archives number them as Keras 2.
Json model_config_of_keras3(const Json& serialized, const std::string& where, bool keras3 = true);

// A training_config ({"optimizer_config", "loss", "metrics", "loss_weights"}) from Keras 3's
// compile_config.
Json training_config_of_keras3(const Json& compile_config, const std::string& where);

// Keras' naming.to_snake_case: the name of a layer's entry in model.weights.h5 ("Conv2D":
// "conv2d", "BatchNormalization": "batch_normalization").
std::string keras_snake_case(const std::string& class_name);

}  // namespace kb::model
