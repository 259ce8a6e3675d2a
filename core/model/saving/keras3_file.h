// Keras 3's `.keras` archives (zip: metadata.json, config.json, model.weights.h5): the model,
// its weights as Keras 3 walks them, its compile_config and its optimizer's state.
#pragma once
#include <memory>
#include <string>

#include "core/model/model.h"

namespace kb::model {

// A model from a `.keras` archive; compiled from its compile_config (optimizer state restored)
// when `compile` and the archive has one.
std::shared_ptr<Model> load_keras_archive(const std::string& path, bool compile);

}  // namespace kb::model
