// What a fused convolution or matrix product (FusedConv, FusedMatMul) adds to value p of its
// result, computed in C: the bias of p's channel ((p / channel_stride) % channels; a matrix
// product's column: stride 1, channels = its columns), then relu. Shared by the CPU's pass and
// the GPU's kernel.
#pragma once
#include <cstdint>

#include "core/util/host_device.h"

namespace kb {

template <class C, class T>
KB_HD C epilogue_value(C v, const T* bias, int64_t p, int64_t channels, int64_t channel_stride,
                       bool relu) {
  if (bias) v += C(bias[(p / channel_stride) % channels]);
  if (relu && !(v > 0)) v = C(0);
  return v;
}

}  // namespace kb
