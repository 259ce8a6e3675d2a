// The options many layer configs share (data_format, padding), read once for every family.
#pragma once
#include <memory>
#include <string>

#include "core/api/conv.h"
#include "core/model/layer.h"

namespace kb::model {

// "channels_last" / "channels_first"; null or absent: the session's image_data_format.
DataFormat data_format_of(const Json& config, const std::string& where);
// data_format_of for a layer of `rank` spatial dims: Keras' 1-D layers are channels_last whatever
// their config says.
inline DataFormat data_format_of(const Json& config, int rank, const std::string& where) {
  return rank == 1 ? DataFormat::channels_last : data_format_of(config, where);
}
// "valid", "same" or "causal".
api::Padding padding_of(const Json& config, const std::string& where);
// x convolved with kernel over as many spatial dims as `strides` has (1 to 3), as Keras 3's
// ops.conv: conv1d, conv2d or conv3d.
NodePtr convolution(const NodePtr& x, const NodePtr& kernel, const Dims& strides,
                    api::Padding padding, DataFormat format, const Dims& dilation);
// The axis of the channels for inputs of `rank` (1 or rank - 1).
inline int64_t channel_axis(DataFormat f, int64_t rank) {
  return f == DataFormat::channels_first ? 1 : rank - 1;
}

// The class name of a layer family's member of `rank` spatial dims: ranked("Conv", 2) is "Conv2D".
inline std::string ranked(const char* family, int rank) {
  return family + std::to_string(rank) + "D";
}

// A registry row's factory: the layer class L made from its config.
template <class L>
std::shared_ptr<Layer> make_layer_of(const Json& config) {
  return std::make_shared<L>(config);
}

}  // namespace kb::model
