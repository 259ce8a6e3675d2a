// The epilogue of a fused convolution or matrix product (core/kernel_plans/epilogue_value.h) as its
// own kernel, where the library's fused call is not available.
#pragma once
#include "core/cuda/common.cuh"
#include "core/kernel_plans/epilogue_value.h"

namespace kb::cuda {

template <class T>
__global__ void epilogue_kernel(T* y, const T* bias, int64_t n, int64_t channels,
                                int64_t channel_stride, bool relu) {
  KB_GRID_LOOP(p, n) {
    y[p] = T(epilogue_value(compute_t<T>(y[p]), bias, p, channels, channel_stride, relu));
  }
}

template <class T>
void epilogue_on_device(T* y, const T* bias, int64_t n, int64_t channels, int64_t channel_stride,
                        bool relu) {
  if (n == 0 || (!bias && !relu)) return;
  epilogue_kernel<T>
      <<<blocks_for(n), 256, 0, stream()>>>(y, bias, n, channels, channel_stride, relu);
  after_launch("epilogue");
}

}  // namespace kb::cuda
