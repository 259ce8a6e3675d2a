// The geometry of convolutions and pooling (core/ops/conv_ops.h): attributes in and out, 'same'
// and causal padding, window arithmetic. Free of graph and op registrations, so the CUDA plugin
// compiles it too.
#include <algorithm>

#include "core/ops/conv_ops.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace kb {

Attrs ConvGeom::attrs() const {
  return Attrs{{attr::layout, int64_t(channels_first)},
               {attr::strides, strides},
               {attr::dilation, dilation},
               {attr::pad_before, pad_before},
               {attr::pad_after, pad_after},
               {attr::groups, groups},
               {attr::same, int64_t(same)},
               {attr::causal, int64_t(causal)},
               {attr::who, who}};
}

ConvGeom ConvGeom::from(const Attrs& a) {
  ConvGeom g;
  g.channels_first = a.i(attr::layout) != 0;
  g.strides = a.ints(attr::strides);
  g.dilation = a.ints(attr::dilation);
  g.pad_before = a.ints(attr::pad_before);
  g.pad_after = a.ints(attr::pad_after);
  g.groups = a.i(attr::groups);
  g.same = a.i(attr::same, 0) != 0;
  g.causal = a.i(attr::causal, 0) != 0;
  g.who = a.has(attr::who) ? a.s(attr::who) : "conv";
  return g;
}

ConvGeom ConvGeom::resolved(const Dims& x, const Dims& k) const {
  ConvGeom g = *this;
  if (!(same || causal) || x.size() != nsp() + 2 || k.size() != nsp() + 2) return g;
  for (size_t i = 0; i < nsp(); ++i) {
    if (causal && k[i] >= 1 && dilation.size() == nsp() && pad_before.size() == nsp()) {
      g.pad_before[i] = dilated_size(k[i], dilation[i], who) - 1;
      g.pad_after[i] = 0;
      continue;
    }
    int64_t in = x[spatial_axis(channels_first, i)];
    if (!same || in < 0 || k[i] < 1 || strides[i] < 1 || dilation.size() != nsp()) continue;
    auto [pb, pa] = same_padding(in, dilated_size(k[i], dilation[i], who), strides[i]);
    g.pad_before[i] = pb;
    g.pad_after[i] = pa;
  }
  return g;
}

Attrs PoolGeom::attrs() const {
  return Attrs{{attr::layout, int64_t(channels_first)},
               {attr::mode, int64_t(mode)},
               {attr::window, window},
               {attr::strides, strides},
               {attr::pad_before, pad_before},
               {attr::pad_after, pad_after},
               {attr::same, int64_t(same)},
               {attr::who, who}};
}

PoolGeom PoolGeom::from(const Attrs& a) {
  PoolGeom g;
  g.channels_first = a.i(attr::layout) != 0;
  g.mode = PoolMode(a.i(attr::mode));
  g.window = a.ints(attr::window);
  g.strides = a.ints(attr::strides);
  g.pad_before = a.ints(attr::pad_before);
  g.pad_after = a.ints(attr::pad_after);
  g.same = a.i(attr::same, 0) != 0;
  g.who = a.has(attr::who) ? a.s(attr::who) : "pool";
  return g;
}

PoolGeom PoolGeom::resolved(const Dims& x) const {
  PoolGeom g = *this;
  if (!same || x.size() != nsp() + 2 || strides.size() != nsp()) return g;
  for (size_t i = 0; i < nsp(); ++i) {
    int64_t in = x[spatial_axis(channels_first, i)];
    if (in < 0 || window[i] < 1 || strides[i] < 1) continue;
    auto [pb, pa] = same_padding(in, window[i], strides[i]);
    g.pad_before[i] = pb;
    g.pad_after[i] = pa;
  }
  return g;
}

int64_t dilated_size(int64_t k, int64_t dilation, const std::string& who) {
  if (k < 0) return -1;
  check(k >= 1, Status::shape, who, ": empty kernel window");
  int64_t span = 0;
  check(!__builtin_mul_overflow(k - 1, dilation, &span) && span < INT64_MAX,
        Status::invalid_argument, who, ": a window of ", k, " cells dilated by ", dilation,
        " spans more than INT64_MAX cells");
  return span + 1;
}

int64_t windowed_size(int64_t in, int64_t k_eff, int64_t s, int64_t pb, int64_t pa,
                      const std::string& who, const char* what) {
  if (in < 0 || k_eff < 0) return -1;
  // The kernels index from -pb to the padded extent (i + pb, o * s - pb + z * d): it must fit.
  int64_t padded = padded_size(in, pb, pa, who, ": a dimension of ", in, " padded by ", pb, " and ",
                               pa, " overflows int64");
  check(k_eff <= padded, Status::shape, who, ": the ", what, " (", k_eff,
        ") is larger than the padded input (", padded, ")");
  return (padded - k_eff) / s + 1;
}

std::pair<int64_t, int64_t> same_padding(int64_t in, int64_t k_eff, int64_t s) {
  // Keras: out = ceil(in / s), total = (out - 1) * s + k_eff - in. Written with the cells from the
  // last window's start to the end, in - (out - 1) * s (in [1, s]), so that strides and windows
  // near INT64_MAX do not overflow it.
  int64_t tail = in > 0 ? in - (in - 1) / s * s : s;
  int64_t total = std::max<int64_t>(k_eff - tail, 0);
  return {total / 2, total - total / 2};
}

}  // namespace kb
