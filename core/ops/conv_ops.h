// The geometry of the convolution and pooling primitives (Conv, ConvBackwardData,
// ConvBackwardFilter, Pool, PoolBackward, MaxPoolGradGrad), shared by their shape inference, their
// gradient rules, the Keras functions that build them and the kernels that run them.
//
// Attributes of Conv / ConvBackwardData / ConvBackwardFilter:
//   layout      0: channels last (N, spatial..., C); 1: channels first (N, C, spatial...)
//   strides, dilation, pad_before, pad_after: one entry per spatial dimension (1 to 3 of them)
//   groups      G: input channel c belongs to group c / (C / G)
//   same        1: Keras 'same' padding, pad_before/pad_after computed from the input's concrete
//               spatial dims (they may be unknown when the graph is built)
//   causal      1: pad_before = dilation * (kernel size - 1), pad_after = 0 (the kernel size may be
//               unknown when the graph is built); neither: the explicit pads
//   who         the Keras function that built the node (names it in error messages)
// The kernel layout is Keras' (spatial..., C, OC / G): K[z, c, m] connects input channel c to
// output channel (c / (C / G)) * (OC / G) + m. G = 1 gives a plain convolution kernel
// (spatial..., in, out); G = C gives a depthwise kernel (spatial..., in, multiplier).
//
// Pool / PoolBackward / MaxPoolGradGrad: layout, window, strides, pad_before, pad_after, same, who,
// and mode (0 max, 1 avg). Max ignores padded cells; avg divides by the number of real cells.
#pragma once
#include <string>
#include <vector>

#include "core/graph/attrs.h"
#include "core/graph/shape.h"

namespace kb {

enum class PoolMode : int64_t { max = 0, avg = 1 };

struct ConvGeom {
  bool channels_first = false;
  std::vector<int64_t> strides, dilation, pad_before, pad_after;
  int64_t groups = 1;
  bool same = false, causal = false;
  std::string who = "conv";

  size_t nsp() const { return strides.size(); }
  Attrs attrs() const;
  static ConvGeom from(const Attrs& a);
  // With 'same' or causal padding: the pads for input dims x and kernel dims k (where known).
  ConvGeom resolved(const Dims& x, const Dims& k) const;
};

struct PoolGeom {
  bool channels_first = false;
  PoolMode mode = PoolMode::max;
  std::vector<int64_t> window, strides, pad_before, pad_after;
  bool same = false;
  std::string who = "pool";

  size_t nsp() const { return window.size(); }
  Attrs attrs() const;
  static PoolGeom from(const Attrs& a);
  PoolGeom resolved(const Dims& x) const;  // 'same' pads for input dims x
};

// The axis of the channels and of the first spatial dimension for a tensor of rank nsp + 2.
inline size_t channel_axis(bool channels_first, size_t nsp) { return channels_first ? 1 : nsp + 1; }
inline size_t spatial_axis(bool channels_first, size_t i) { return (channels_first ? 2 : 1) + i; }

// Where the channels of a tensor of dims d (batch, channels and spatial axes) lie: value p in
// memory order belongs to channel (p / stride) % channels.
struct ChannelPlacement {
  int64_t channels = 0, stride = 1;
};
inline ChannelPlacement channel_placement(bool channels_first, const Dims& d) {
  ChannelPlacement c{d[channel_axis(channels_first, d.size() - 2)], 1};
  if (channels_first)
    for (size_t i = 2; i < d.size(); ++i) c.stride *= d[i];
  return c;
}

// The extent (k - 1) * dilation + 1 of a window of k cells dilated by `dilation` >= 1; -1 when k
// is unknown (< 0). Fails naming `who` for an empty window and when it does not fit in int64.
int64_t dilated_size(int64_t k, int64_t dilation, const std::string& who);

// Output size of a window of (dilated) extent `k_eff` over `in` padded by pb + pa at stride s;
// -1 when `in` is unknown. Fails naming `who` and `what` (the window) when it does not fit.
int64_t windowed_size(int64_t in, int64_t k_eff, int64_t s, int64_t pb, int64_t pa,
                      const std::string& who, const char* what);

// Keras' 'same' padding: (before, after) with the odd cell after.
std::pair<int64_t, int64_t> same_padding(int64_t in, int64_t k_eff, int64_t s);

}  // namespace kb
