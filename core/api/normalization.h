// batch_normalization and normalize_batch_in_training as graph builders (docs/keras_semantics.md
// section 11).
#pragma once
#include <optional>
#include <vector>

#include "core/api/conv.h"
#include "core/graph/node.h"
#include "core/graph/session.h"

namespace kb::api {

// ---- normalization ----------------------------------------------------------------------------
// beta and gamma may be null (Keras None).
NodePtr batch_normalization(const NodePtr& x, const NodePtr& mean, const NodePtr& var,
                            const NodePtr& beta, const NodePtr& gamma, int64_t axis,
                            double epsilon);
struct NormalizedBatch {
  NodePtr normed, mean, var;
};
NormalizedBatch normalize_batch_in_training(const NodePtr& x, const NodePtr& gamma,
                                            const NodePtr& beta,
                                            const std::vector<int64_t>& reduction_axes,
                                            double epsilon);

}  // namespace kb::api
