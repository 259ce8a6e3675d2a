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
// x normalized by its population moments over `axes` (Keras 3's BatchNormalization in
// training) through the BatchNorm primitive: gamma and beta (or null) hold one value per kept
// element, in any shape; the mean and the biased variance are (kept elements,) vectors. All
// null where the kept axes are not one run of known dims (the caller composes it then).
NormalizedBatch normalize_by_population_moments(const NodePtr& x, const NodePtr& gamma,
                                                const NodePtr& beta,
                                                const std::vector<int64_t>& axes, double epsilon);

}  // namespace kb::api
