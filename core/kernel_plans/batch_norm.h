// Batch normalization's layout and per-element value, shared by the CPU and GPU kernels of
// BatchNorm and BatchCenteredDot (core/ops/batch_norm_ops.cpp). x is viewed as (outer, channels,
// inner): the channels are x's kept axes [begin, end) flattened; the axes before them (outer)
// and after them (inner) are reduced.
#pragma once
#include <cmath>
#include <cstdint>

#include "core/util/host_device.h"

namespace kb {

struct ChannelLayout {
  int64_t outer = 1, channels = 1, inner = 1;

  KB_HD int64_t channel_of(int64_t e) const { return (e / inner) % channels; }
};

// dims: x's dims (known), [begin, end): the kept axes.
template <class D>
ChannelLayout channel_layout(const D& dims, int64_t begin, int64_t end) {
  ChannelLayout l;
  for (int64_t i = 0; i < int64_t(dims.size()); ++i)
    (i < begin ? l.outer : i < end ? l.channels : l.inner) *= dims[size_t(i)];
  return l;
}

// The layout of a BatchNorm or BatchCenteredDot node's x (dims known), from its attrs.
template <class D, class A>
ChannelLayout channel_layout(const D& dims, const A& attrs) {
  return channel_layout(dims, attrs.i(attr::begin), attrs.i(attr::end));
}

// Channel c's factor and offset: y = x * scale + shift with scale = gamma / sqrt(var + eps) and
// shift = beta - mean * scale, the operations (and their order) of the composition
// tf.nn.batch_normalization computes, in C.
template <class C, class T>
KB_HD void batch_norm_affine(const T* mean, const T* var, const T* gamma, const T* beta, int64_t c,
                             C epsilon, C& scale, C& shift) {
  using std::sqrt;
  scale = C(1) / sqrt(C(var[c]) + epsilon);
  scale = scale * C(gamma[c]);
  shift = C(beta[c]) - C(mean[c]) * scale;
}

}  // namespace kb
