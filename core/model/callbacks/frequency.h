// The `save_freq` / `update_freq` argument Keras' callbacks share: "epoch", a number of batches,
// and for TensorBoard "batch" too.
#pragma once
#include <cstdint>
#include <string>

#include "core/model/json.h"

namespace kb::model {

// 0 for "epoch", 1 for "batch" (where `batch_word` allows it), else the positive number of
// batches `value` holds; anything else fails with Status::invalid_argument naming `key` and
// `where`.
int64_t batch_frequency(const Json& value, const char* key, bool batch_word,
                        const std::string& where);

}  // namespace kb::model
