// What a fused convolution or matrix product adds to its result (FusedConv, FusedMatMul): a bias
// per output channel, then relu, bounded above for a convolution (Keras' ReLU(max_value), relu6);
// and the pass that applies it where oneDNN's post-ops do not.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/cpu/loops.h"
#include "core/graph/dispatch.h"
#include "core/kernel_plans/epilogue_value.h"

namespace kb::cpu {

struct Epilogue {
  bool bias = false, relu = false;
  // With relu: the result's upper bound (FusedConv's attribute relu_max, from the CPU's fold of a
  // BatchNormalization and its ReLU(max_value); the GPU's kernels have no bound).
  float relu_max = std::numeric_limits<float>::infinity();
  bool bounded() const { return relu && relu_max < std::numeric_limits<float>::infinity(); }
};

// y holds n values, runs of channel_stride values of one channel, the channels in turn (n a
// multiple of channels * channel_stride); epilogue_value says what each gets. bias (one per
// channel) may be null. A run at a time: finding each value's channel took two integer divisions
// per value, 10 us for a 32x10 product's 320.
template <class T>
void apply_epilogue(T* y, int64_t n, int64_t channels, int64_t channel_stride, const T* bias,
                    bool relu, float relu_max = std::numeric_limits<float>::infinity()) {
  const int64_t block = std::max<int64_t>(channels * channel_stride, 1);  // every channel's run
  parallel_for(
      n / block,
      [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o)
          for (int64_t ch = 0; ch < channels; ++ch) {
            T* run = y + (o * channels + ch) * channel_stride;
            const T* own = bias ? bias + ch : nullptr;  // the run's bias alone
            for (int64_t i = 0; i < channel_stride; ++i) {
              compute_t<T> v = epilogue_value(compute_t<T>(run[i]), own, 0, 1, 1, relu);
              if (relu && v > compute_t<T>(relu_max)) v = compute_t<T>(relu_max);
              run[i] = T(v);
            }
          }
      },
      std::max<int64_t>(1, kParallelGrain / block));
}

}  // namespace kb::cpu
