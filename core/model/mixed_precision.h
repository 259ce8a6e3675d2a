// A model rebuilt under another dtype policy: Keras' clone_model with each layer given the policy
// (the Keras 3 user's way to compute a float32 model in bfloat16: mixed_bfloat16).
#pragma once
#include <memory>
#include <string>

#include "core/model/model.h"

namespace kb::model {

// A copy of `model`, uncompiled, with its weights' values, whose layers that keep float32
// variables (every one but the inputs and the layers of other dtypes) take the dtype policy
// named `policy` ("mixed_bfloat16", "float32", ...): nested models' and wrapped layers' too.
std::shared_ptr<Model> with_dtype_policy(const Model& model, const std::string& policy);

}  // namespace kb::model
