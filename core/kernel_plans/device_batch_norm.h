// How the device sums BatchCenteredDot (core/cuda/batch_norm.cu), shared with the emulated device
// that runs it on the host. The rows of x (outer) go in chunks, each summed per channel in double
// into scratch, then each channel adds its chunks in order. Channels last (inner == 1): a block
// takes a chunk of kChunkRows rows and a tile of kLanes channels; lane l's kRowsAtOnce threads take
// rows y, y + kRowsAtOnce, ... of the chunk, and their sums are added to row 0's in order.
// Otherwise a block of kThreads threads takes a chunk and a channel: thread t takes values t,
// t + kThreads, ... of the chunk's runs of that channel, and their sums combine in a tree.
#pragma once
#include <algorithm>
#include <cstdint>

#include "core/kernel_plans/batch_norm.h"
#include "core/util/host_device.h"

namespace kb {

struct CenteredDotChunks {
  static constexpr int kLanes = 32, kRowsAtOnce = 8, kChunkRows = 256;  // channels last
  static constexpr int kThreads = 256, kChunkValues = 8192;             // channels first

  bool channels_last = true;
  int64_t chunk_rows = kChunkRows, chunks = 0;
  int64_t tiles = 0;  // the grid's second dimension: channel tiles, or channels

  explicit CenteredDotChunks(const ChannelLayout& l) : channels_last(l.inner == 1) {
    if (!channels_last)
      chunk_rows = std::max<int64_t>(1, kChunkValues / std::max<int64_t>(l.inner, 1));
    chunks = (l.outer + chunk_rows - 1) / chunk_rows;
    tiles = channels_last ? (l.channels + kLanes - 1) / kLanes : l.channels;
  }
  // Whether the tiles fit a grid's second dimension and the chunks its first.
  bool fit_grid() const { return tiles <= 65535 && chunks <= int64_t(1) << 30; }
  // Rows [first, last) of chunk q.
  KB_HD void rows(int64_t q, int64_t outer, int64_t* first, int64_t* last) const {
    *first = q * chunk_rows;
    *last = *first + chunk_rows < outer ? *first + chunk_rows : outer;
  }
};

// One term of the sum at element i: (a - mean) (x - mean), or a (x - mean), in C, as a double.
template <bool Center, class C, class T>
KB_HD double centered_term(const T* a, const T* x, C mean, int64_t i) {
  C av = Center ? C(a[i]) - mean : C(a[i]);
  return double(av * (C(x[i]) - mean));
}

// Channels last: the sum of lane row y's rows of chunk [first, last) for channel c.
template <bool Center, class C, class T>
KB_HD double centered_rows_sum(const T* a, const T* x, C mean, const ChannelLayout& l,
                               int64_t first, int64_t last, int y, int64_t c) {
  double s = 0;
  for (int64_t o = first + y; o < last; o += CenteredDotChunks::kRowsAtOnce)
    s += centered_term<Center>(a, x, mean, o * l.channels + c);
  return s;
}

// Otherwise: thread t's share of channel c's values in rows [first, last).
template <bool Center, class C, class T>
KB_HD double centered_runs_share(const T* a, const T* x, C mean, const ChannelLayout& l,
                                 int64_t first, int64_t last, int t, int64_t c) {
  double s = 0;
  int64_t values = (last - first) * l.inner;
  for (int64_t j = t; j < values; j += CenteredDotChunks::kThreads) {
    int64_t o = first + j / l.inner, i = j % l.inner;
    s += centered_term<Center>(a, x, mean, (o * l.channels + c) * l.inner + i);
  }
  return s;
}

// A channel's chunks added in order.
KB_HD inline double centered_chunks_sum(const double* partial, int64_t chunks, int64_t channels,
                                        int64_t c) {
  double s = 0;
  for (int64_t q = 0; q < chunks; ++q) s += partial[q * channels + c];
  return s;
}

}  // namespace kb
