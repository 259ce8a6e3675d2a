// What a fused convolution or matrix product adds to its result (FusedConv, FusedMatMul): a bias
// per output channel, then relu; and the pass that applies it where oneDNN's post-ops do not.
#pragma once
#include <cstdint>

#include "core/cpu/loops.h"
#include "core/graph/dispatch.h"
#include "core/kernel_plans/epilogue_value.h"

namespace kb::cpu {

struct Epilogue {
  bool bias = false, relu = false;
};

// y holds n values; epilogue_value says what each gets. bias (one per channel) may be null.
template <class T>
void apply_epilogue(T* y, int64_t n, int64_t channels, int64_t channel_stride, const T* bias,
                    bool relu) {
  parallel_for(
      n,
      [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p)
          y[p] = T(epilogue_value(compute_t<T>(y[p]), bias, p, channels, channel_stride, relu));
      },
      kParallelGrain);
}

}  // namespace kb::cpu
