// The random tensors and dropout as graph builders (docs/keras_semantics.md sections 11 and 14).
#pragma once
#include <optional>
#include <vector>

#include "core/api/conv.h"
#include "core/graph/node.h"
#include "core/graph/session.h"

namespace kb::api {

// ---- random -----------------------------------------------------------------------------------
// Keras' keras.utils.set_random_seed: from now on each seed not given is the next of `seed`'s
// sequence, so that a program that sets it builds the same graphs and draws the same numbers
// each run; until it is called (and in another process) they come from the system's entropy.
void set_random_seed(int64_t seed);
// `seed`, or one drawn now as set_random_seed says.
uint64_t seed_or_drawn(std::optional<int64_t> seed);

// dtype nullopt: floatx; seed nullopt: a seed drawn now (at graph-build time, seed_or_drawn).
NodePtr random_uniform(const Dims& shape, double minval, double maxval, std::optional<DType> dtype,
                       std::optional<int64_t> seed);
NodePtr random_normal(const Dims& shape, double mean, double stddev, std::optional<DType> dtype,
                      std::optional<int64_t> seed);
NodePtr truncated_normal(const Dims& shape, double mean, double stddev, std::optional<DType> dtype,
                         std::optional<int64_t> seed);
NodePtr random_binomial(const Dims& shape, double p, std::optional<DType> dtype,
                        std::optional<int64_t> seed);
// The same draws in the shape of `like` (its rank known; dimensions unknown now are taken when a
// function runs): Keras' random_normal(K.shape(x)) as GaussianNoise writes it.
NodePtr random_uniform_like(const NodePtr& like, double minval, double maxval,
                            std::optional<DType> dtype, std::optional<int64_t> seed);
NodePtr random_normal_like(const NodePtr& like, double mean, double stddev,
                           std::optional<DType> dtype, std::optional<int64_t> seed);
NodePtr truncated_normal_like(const NodePtr& like, double mean, double stddev,
                              std::optional<DType> dtype, std::optional<int64_t> seed);
NodePtr random_binomial_like(const NodePtr& like, double p, std::optional<DType> dtype,
                             std::optional<int64_t> seed);
// noise_shape nullopt: x's shape; a -1 entry takes x's dimension (right-aligned).
NodePtr dropout(const NodePtr& x, double level, const std::optional<Dims>& noise_shape,
                std::optional<int64_t> seed);

}  // namespace kb::api
