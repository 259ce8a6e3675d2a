// local_conv1d and local_conv2d (locally connected layers, docs/keras_semantics.md section 13) as
// graph builders.
#pragma once
#include <optional>
#include <vector>

#include "core/api/conv.h"
#include "core/graph/node.h"
#include "core/graph/session.h"

namespace kb::api {

// ---- locally connected ------------------------------------------------------------------------
NodePtr local_conv1d(const NodePtr& inputs, const NodePtr& kernel, const Ints& kernel_size,
                     const Ints& strides, Format data_format);
NodePtr local_conv2d(const NodePtr& inputs, const NodePtr& kernel, const Ints& kernel_size,
                     const Ints& strides, const Ints& output_shape, Format data_format);

}  // namespace kb::api
