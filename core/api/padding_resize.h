// Paddings with zeros and the resizing of images and volumes as graph builders
// (docs/keras_semantics.md section 8).
#pragma once
#include <optional>
#include <vector>

#include "core/api/conv.h"
#include "core/graph/node.h"
#include "core/graph/session.h"

namespace kb::api {

enum class Interpolation : int32_t { nearest = 0, bilinear = 1 };  // = kb_interpolation

// ---- paddings (zeros) -------------------------------------------------------------------------
// padding: (left, right) for temporal_padding; ((top, bottom), (left, right)) and
// ((d0, d1), (h0, h1), (w0, w1)) for the spatial paddings, as flat pair lists.
NodePtr temporal_padding(const NodePtr& x, const Ints& padding);
NodePtr spatial_2d_padding(const NodePtr& x, const Ints& padding, Format data_format);
NodePtr spatial_3d_padding(const NodePtr& x, const Ints& padding, Format data_format);

// ---- resizing ---------------------------------------------------------------------------------
// data_format is required (Keras has no default here): nullopt is an error.
NodePtr resize_images(const NodePtr& x, int64_t height_factor, int64_t width_factor,
                      Format data_format, Interpolation interpolation);
NodePtr resize_volumes(const NodePtr& x, int64_t depth_factor, int64_t height_factor,
                       int64_t width_factor, Format data_format);

}  // namespace kb::api
