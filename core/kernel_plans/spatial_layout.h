// Element strides of an (N, C, spatial...) tensor stored channels first or channels last, with its
// spatial dimensions right-aligned into three (leading extents 1): the shape the pooling and
// resizing kernels index.
#pragma once
#include <cstdint>

namespace kb {

// sn: a batch item, sc: a channel, ss: each spatial axis.
inline void spatial_strides(bool channels_first, int64_t C, const int64_t sp[3], int64_t& sn,
                            int64_t& sc, int64_t ss[3]) {
  int64_t plane = sp[0] * sp[1] * sp[2];
  int64_t step = channels_first ? 1 : C;
  ss[2] = step;
  ss[1] = sp[2] * step;
  ss[0] = sp[1] * sp[2] * step;
  sc = channels_first ? plane : 1;
  sn = C * plane;
}

}  // namespace kb
