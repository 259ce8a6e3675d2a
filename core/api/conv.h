// The Keras convolution and pooling functions as graph builders (docs/keras_semantics.md
// section 13): conv1d/2d/3d, their transposes, depthwise and separable convolutions,
// pool2d/pool3d. Kernels use Keras' layouts; data_format nullopt means the global
// image_data_format.
#pragma once
#include <optional>
#include <vector>

#include "core/graph/node.h"
#include "core/graph/session.h"

namespace kb::api {

enum class Padding : int32_t { valid = 0, same = 1, causal = 2 };  // = kb_padding
enum class PoolKind : int32_t { max = 0, avg = 1 };                // = kb_pool_mode

using Ints = std::vector<int64_t>;
using Format = std::optional<DataFormat>;

NodePtr conv1d(const NodePtr& x, const NodePtr& kernel, int64_t strides, Padding padding,
               Format data_format, int64_t dilation_rate);
NodePtr conv2d(const NodePtr& x, const NodePtr& kernel, const Ints& strides, Padding padding,
               Format data_format, const Ints& dilation_rate);
NodePtr conv3d(const NodePtr& x, const NodePtr& kernel, const Ints& strides, Padding padding,
               Format data_format, const Ints& dilation_rate);
// output_shape: the full output shape in the caller's data_format; its batch entry may be -1
// (x's batch). A dilation_rate other than 1 makes the strides ignored (as Keras' TF backend does).
NodePtr conv2d_transpose(const NodePtr& x, const NodePtr& kernel, const Dims& output_shape,
                         const Ints& strides, Padding padding, Format data_format,
                         const Ints& dilation_rate, const char* who = "conv2d_transpose");
NodePtr conv3d_transpose(const NodePtr& x, const NodePtr& kernel, const Dims& output_shape,
                         const Ints& strides, Padding padding, Format data_format);
// Keras 3's grouped convolution (Conv1D/2D/3D with groups): x's C channels in `groups` equal
// groups, each convolved with its own OC / groups filters; the kernel in the Conv primitive's
// layout (spatial..., C, OC / groups), one spatial dim per entry of strides.
NodePtr grouped_conv(const NodePtr& x, const NodePtr& kernel, int64_t groups, const Ints& strides,
                     Padding padding, Format data_format, const Ints& dilation_rate);
NodePtr depthwise_conv2d(const NodePtr& x, const NodePtr& depthwise_kernel, const Ints& strides,
                         Padding padding, Format data_format, const Ints& dilation_rate);
NodePtr separable_conv1d(const NodePtr& x, const NodePtr& depthwise_kernel,
                         const NodePtr& pointwise_kernel, int64_t strides, Padding padding,
                         Format data_format, int64_t dilation_rate);
NodePtr separable_conv2d(const NodePtr& x, const NodePtr& depthwise_kernel,
                         const NodePtr& pointwise_kernel, const Ints& strides, Padding padding,
                         Format data_format, const Ints& dilation_rate);
NodePtr pool2d(const NodePtr& x, const Ints& pool_size, const Ints& strides, Padding padding,
               Format data_format, PoolKind pool_mode);
NodePtr pool3d(const NodePtr& x, const Ints& pool_size, const Ints& strides, Padding padding,
               Format data_format, PoolKind pool_mode);

}  // namespace kb::api
