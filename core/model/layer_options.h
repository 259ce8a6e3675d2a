// The options many layer configs share (data_format, padding), read once for every family.
#pragma once
#include <memory>
#include <string>

#include "core/api/conv.h"
#include "core/model/layer.h"

namespace kb::model {

// "channels_last" / "channels_first"; null or absent: the session's image_data_format.
DataFormat data_format_of(const Json& config, const std::string& where);
// "valid", "same" or "causal".
api::Padding padding_of(const Json& config, const std::string& where);
// The axis of the channels for inputs of `rank` (1 or rank - 1).
inline int64_t channel_axis(DataFormat f, int64_t rank) {
  return f == DataFormat::channels_first ? 1 : rank - 1;
}

// A registry row's factory: the layer class L made from its config.
template <class L>
std::shared_ptr<Layer> make_layer_of(const Json& config) {
  return std::make_shared<L>(config);
}

}  // namespace kb::model
