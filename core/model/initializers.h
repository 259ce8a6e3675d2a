// Keras 2.2.4's initializers (keras.initializers): a weight's first value from its config entry,
// a name ("glorot_uniform") or {"class_name": ..., "config": ...} (tf.keras' too).
#pragma once
#include <memory>
#include <string>

#include "core/graph/buffer.h"
#include "core/model/json.h"

namespace kb::model {

std::shared_ptr<Buffer> initial_value(const Json& initializer, const Dims& shape, DType dtype,
                                      const std::string& where);

}  // namespace kb::model
