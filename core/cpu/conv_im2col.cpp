#include "core/cpu/conv_im2col.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "core/cpu/dnnl_cache.h"
#include "core/cpu/loops.h"
#include "core/cpu/scratch.h"

namespace kb::cpu {
namespace {

// The windows' cells as a matrix (P x R): one row per output position p = ((n * out0 + o0) *
// out1 + o1) * out2 + o2, one column per kernel cell and channel, kz * C + c (kz in the kernel's
// order), so that each cell's C channels are one contiguous copy.
int64_t positions(const ConvGeo& g) { return g.N * g.out[0] * g.out[1] * g.out[2]; }
int64_t row_length(const ConvGeo& g) { return g.kvol * g.C; }

// A 1x1 kernel over every position (stride 1, no padding): the input is the matrix already.
bool identity_windows(const ConvGeo& g) {
  return g.kvol == 1 && g.s == A3{1, 1, 1} && g.pb == A3{0, 0, 0} && g.in == g.out;
}

// Per kernel cell z2 along the last axis (the same in every row): o2 * s - pb + z2 * d = i2 lies
// in [0, in) for o2 in [lo, hi), i2 = o2 * s - first. Made with the kernel: its divisions (and
// its allocation) stay out of the calls.
struct CellSpans {
  std::vector<int64_t> first, lo, hi;
};

CellSpans cell_spans(const ConvGeo& g) {
  CellSpans c;
  for (int64_t z2 = 0; z2 < g.k[2]; ++z2) {
    int64_t f0 = g.pb[2] - z2 * g.d[2], past = g.in[2] + f0;  // o2 * s in [f0, past)
    int64_t l = f0 <= 0 ? 0 : (f0 + g.s[2] - 1) / g.s[2];
    int64_t h = past <= 0 ? 0 : std::min(g.out[2], (past + g.s[2] - 1) / g.s[2]);
    c.first.push_back(f0);
    c.lo.push_back(std::min(l, h));
    c.hi.push_back(h);
  }
  return c;
}

// f(p0, kz, lo, hi, at, step) for each row of output positions along the last axis (p0 the first)
// and kernel cell kz: the cell lies inside the input for positions o2 in [lo, hi), its first
// channel at x + at + o2 * step (step: stride times the axis' element stride), and is padding
// elsewhere.
template <class F>
void for_window_spans(const ConvGeo& g, const CellSpans& cs, F&& f) {
  const int64_t step = g.s[2] * g.xs[2];
  int64_t p0 = 0;
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < g.out[1]; ++o1, p0 += g.out[2])
        for (int64_t z0 = 0; z0 < g.k[0]; ++z0) {
          int64_t i0 = o0 * g.s[0] - g.pb[0] + z0 * g.d[0];
          for (int64_t z1 = 0; z1 < g.k[1]; ++z1) {
            int64_t i1 = o1 * g.s[1] - g.pb[1] + z1 * g.d[1];
            bool inside = i0 >= 0 && i0 < g.in[0] && i1 >= 0 && i1 < g.in[1];
            int64_t row = n * g.xn + i0 * g.xs[0] + i1 * g.xs[1];
            for (int64_t z2 = 0; z2 < g.k[2]; ++z2) {
              size_t z = size_t(z2);
              f(p0, g.kz(z0, z1, z2), inside ? cs.lo[z] : 0, inside ? cs.hi[z] : 0,
                row - cs.first[z] * g.xs[2], step);
            }
          }
        }
}

// The windows' matrix of x: zeros first where a window has padding, then the spans inside.
// (Offsets as integers: at + o2 * step lies in x only for o2 in [lo, hi).)
void gather(const ConvGeo& g, const CellSpans& cs, const float* x, float* m) {
  const int64_t C = g.C, R = row_length(g);
  if (g.pb != A3{0, 0, 0} || g.pa != A3{0, 0, 0})
    std::memset(m, 0, size_t(positions(g) * R) * sizeof(float));
  for_window_spans(g, cs,
                   [&](int64_t p0, int64_t kz, int64_t lo, int64_t hi, int64_t at, int64_t step) {
                     for (int64_t o2 = lo; o2 < hi; ++o2) {
                       float* row = m + (p0 + o2) * R + kz * C;
                       const float* src = x + (at + o2 * step);
#pragma omp simd
                       for (int64_t c = 0; c < C; ++c) row[c] = src[c];
                     }
                   });
}

// The windows' matrix of x: x itself for a 1x1 kernel over every position, else gathered into
// scratch.
const float* windows(const ConvGeo& g, const CellSpans& cs, bool direct, const float* x,
                     float* scratch) {
  if (direct) return x;
  gather(g, cs, x, scratch);
  return scratch;
}

// dx = the sum over windows of their cells' values in m (laid out as gather's).
void scatter_add(const ConvGeo& g, const CellSpans& cs, const float* m, float* dx) {
  std::memset(dx, 0, size_t(g.N * g.xn) * sizeof(float));
  const int64_t C = g.C, R = row_length(g);
  for_window_spans(g, cs,
                   [&](int64_t p0, int64_t kz, int64_t lo, int64_t hi, int64_t at, int64_t step) {
                     for (int64_t o2 = lo; o2 < hi; ++o2) {
                       float* d = dx + (at + o2 * step);
                       const float* row = m + (p0 + o2) * R + kz * C;
#pragma omp simd
                       for (int64_t c = 0; c < C; ++c) d[c] += row[c];
                     }
                   });
}

// c (m x n, row-major) = op(a) * op(b), on the calling thread.
void sgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, const float* a, const float* b,
           float* c) {
  SerialScope serial(true);
  dnnl_util::sgemm(ta, tb, m, n, k, a, ta == 'N' ? k : m, b, tb == 'N' ? n : k, c, n, "conv");
}

// y (P x OC) += bias per column, then relu and its bound, as apply_epilogue (a select that
// vectorizes: the file is compiled with -fno-trapping-math, see CMakeLists.txt).
void add_epilogue(const ConvGeo& g, const float* bias, bool relu, float relu_max, float* y) {
  const int64_t P = positions(g), OC = g.OC;
  for (int64_t p = 0; p < P; ++p) {
    float* row = y + p * OC;
    if (bias)
#pragma omp simd
      for (int64_t oc = 0; oc < OC; ++oc) row[oc] += bias[oc];
    if (relu)
#pragma omp simd
      for (int64_t oc = 0; oc < OC; ++oc) row[oc] = row[oc] > 0 ? row[oc] : 0.0f;
    if (relu && relu_max < std::numeric_limits<float>::infinity())
#pragma omp simd
      for (int64_t oc = 0; oc < OC; ++oc) row[oc] = row[oc] > relu_max ? relu_max : row[oc];
  }
}

struct Im2colMatrix;  // the ThreadScratch tag of the windows' matrix

}  // namespace

bool im2col_fits(const ConvGeo& g) {
  if (g.cg.channels_first || g.G != 1 || g.C < 8) return false;
  return positions(g) * g.OC * row_length(g) < kSerialWork;
}

Kernel im2col_kernel(ConvPass pass, const ConvGeo& g, Epilogue e) {
  const int64_t P = positions(g), R = row_length(g), OC = g.OC;
  const bool direct = identity_windows(g);
  const CellSpans cs = cell_spans(g);
  switch (pass) {
    case ConvPass::forward:  // y (P x OC) = windows (P x R) * K (R x OC)
      return [=](const std::vector<const Buffer*>& in, Buffer& out) {
        ThreadScratch<float, Im2colMatrix> scratch(direct ? 0 : size_t(P * R));
        const float* m = windows(g, cs, direct, in[0]->as<float>(), scratch.data());
        sgemm('N', 'N', P, OC, R, m, in[1]->as<float>(), out.as<float>());
        if (e.bias || e.relu)
          add_epilogue(g, e.bias ? in[2]->as<float>() : nullptr, e.relu, e.relu_max,
                       out.as<float>());
      };
    case ConvPass::backward_data:  // d windows = dy (P x OC) * K^T, added back to their cells
      return [=](const std::vector<const Buffer*>& in, Buffer& out) {
        const float* dy = in[0]->as<float>();
        const float* k = in[1]->as<float>();
        if (direct) return sgemm('N', 'T', P, R, OC, dy, k, out.as<float>());
        ThreadScratch<float, Im2colMatrix> m(size_t(P * R));
        sgemm('N', 'T', P, R, OC, dy, k, m.data());
        scatter_add(g, cs, m.data(), out.as<float>());
      };
    case ConvPass::backward_filter:  // dK (R x OC) = windows^T * dy (P x OC)
      return [=](const std::vector<const Buffer*>& in, Buffer& out) {
        ThreadScratch<float, Im2colMatrix> scratch(direct ? 0 : size_t(P * R));
        const float* m = windows(g, cs, direct, in[0]->as<float>(), scratch.data());
        sgemm('T', 'N', R, OC, P, m, in[1]->as<float>(), out.as<float>());
      };
  }
  return {};
}

}  // namespace kb::cpu
