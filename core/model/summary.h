// Keras' model.summary() as text.
#pragma once
#include <string>

#include "core/model/model.h"

namespace kb::model {

std::string summary(const Model& model);

}  // namespace kb::model
