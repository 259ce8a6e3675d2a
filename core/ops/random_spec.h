// The attributes of a Random node (core/ops/random_ops.cpp), read by its kernels
// (core/kernel_plans/random_draw.h).
#pragma once
#include <cstdint>

#include "core/graph/attrs.h"

namespace kb {

enum RandomDist : int64_t { kUniform = 0, kNormal = 1, kTruncatedNormal = 2 };

// A Random node's attributes: the distribution, its parameters (uniform: [a, b); normal: mean
// a, stddev b) and the seed.
struct RandomSpec {
  int64_t dist;
  double a, b;
  uint64_t seed;
};
inline RandomSpec random_spec(const Attrs& at) {
  return {at.i(attr::dist), at.f(attr::a), at.f(attr::b), uint64_t(at.i(attr::seed))};
}

}  // namespace kb
