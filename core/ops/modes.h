// The "mode" attribute of the ops that have one, as named values (the attribute stores the
// number). PoolMode is with the pooling geometry (core/ops/conv_ops.h).
#pragma once
#include <cstdint>

#include "core/graph/attrs.h"

namespace kb {

enum class ReduceMode : int64_t { sum = 0, prod = 1, max = 2, min = 3 };  // Reduce
enum class ArgMode : int64_t { max = 0, min = 1 };                        // ArgReduce
enum class ScanMode : int64_t { sum = 0, prod = 1 };                      // Cumulative
enum class ResizeMode : int64_t { nearest = 0, bilinear = 1 };            // Resize, ResizeGrad

template <class Mode>
Mode mode_of(const Attrs& a) {
  return static_cast<Mode>(a.i(attr::mode));
}

}  // namespace kb
