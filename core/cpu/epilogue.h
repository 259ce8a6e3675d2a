// What a fused convolution or matrix product adds to its result (FusedConv, FusedMatMul): a bias
// per output channel, then relu; and the pass that applies it where oneDNN's post-ops do not.
#pragma once
#include <cstdint>

#include "core/cpu/loops.h"
#include "core/util/dispatch.h"

namespace kb::cpu {

struct Epilogue {
  bool bias = false, relu = false;
};

// y holds n values; value p belongs to channel (p / channel_stride) % channels (a matrix
// product's column: stride 1, channels = its columns). bias (one per channel) may be null.
template <class T>
void apply_epilogue(T* y, int64_t n, int64_t channels, int64_t channel_stride, const T* bias,
                    bool relu) {
  parallel_for(
      n,
      [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
          auto v = compute_t<T>(y[p]);
          if (bias) v += compute_t<T>(bias[(p / channel_stride) % channels]);
          if (relu && !(v > 0)) v = 0;
          y[p] = T(v);
        }
      },
      kParallelGrain);
}

}  // namespace kb::cpu
