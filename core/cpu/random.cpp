// CPU kernel of Random (core/ops/random_ops.cpp). Every element has its own Philox counter
// (element index, re-draw attempt, run number) under the key `seed`, so the numbers do not depend
// on the thread split, and run r of a node always gives the same numbers for the same seed.
//   uniform: float64 takes 53 bits (two words), float32 24 bits and float16 11 bits (one word
//            each), so u in [0, 1) is exact in the dtype; the value is a + (b - a) * u;
//   normal:  Box-Muller on two 53-bit uniforms of one block (u1 in (0, 1]);
//   truncated normal: as normal, re-drawn with the next attempt's block while |z| > 2.
#include <cmath>

#include "core/backend/kernel.h"
#include "core/cpu/loops.h"
#include "core/util/dispatch.h"
#include "core/util/philox.h"

namespace kb::cpu {
namespace {

using Ins = std::vector<const Buffer*>;

struct Draw {
  std::array<uint32_t, 2> key;
  uint64_t run;
  std::array<uint32_t, 4> block(uint64_t index, uint32_t attempt) const {
    return philox4x32_10({uint32_t(index), uint32_t((index >> 32) & 0xFFFFu) | (attempt << 16),
                          uint32_t(run), uint32_t(run >> 32)},
                         key);
  }
};

inline double u53(uint32_t hi, uint32_t lo) {  // [0, 1)
  return double((uint64_t(hi >> 5) << 26) | (lo >> 6)) * (1.0 / 9007199254740992.0);
}

inline double std_normal(const std::array<uint32_t, 4>& b) {
  double u1 = 1.0 - u53(b[0], b[1]);  // (0, 1]
  double u2 = u53(b[2], b[3]);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

Kernel make_random(const KernelArgs& k) {
  const Node* node = &k.node;
  int64_t dist = k.node.attrs.i("dist");
  double a = k.node.attrs.f("a"), b = k.node.attrs.f("b");
  uint64_t seed = uint64_t(k.node.attrs.i("seed"));
  return dispatch_dtype(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    if constexpr (!is_float_v<T>) {
      fail(Status::dtype, "random: floating dtype required");
    } else {
      return [node, dist, a, b, seed](const Ins&, Buffer& out) {
        Draw d{{uint32_t(seed), uint32_t(seed >> 32)}, node->runs.fetch_add(1)};
        T* o = out.as<T>();
        int64_t n = out.numel();
        if (dist == 0) {
          // Elements per block: 2 for float64 (two words each), 4 otherwise.
          constexpr int64_t per = std::is_same_v<T, double> ? 2 : 4;
          int64_t blocks = (n + per - 1) / per;
          parallel_for(
              blocks,
              [&](int64_t bb, int64_t be) {
                for (int64_t i = bb; i < be; ++i) {
                  auto w = d.block(uint64_t(i), 0);
                  for (int64_t j = 0; j < per && i * per + j < n; ++j) {
                    double u;
                    if constexpr (std::is_same_v<T, double>)
                      u = u53(w[2 * j], w[2 * j + 1]);
                    else if constexpr (std::is_same_v<T, float>)
                      u = double(w[j] >> 8) * (1.0 / 16777216.0);
                    else
                      u = double(w[j] >> 21) * (1.0 / 2048.0);
                    using C = compute_t<T>;
                    o[i * per + j] = T(C(a) + (C(b) - C(a)) * C(u));
                  }
                }
              },
              kParallelGrain / 16);
          return;
        }
        parallel_for(
            n,
            [&](int64_t eb, int64_t ee) {
              for (int64_t i = eb; i < ee; ++i) {
                double zv = std_normal(d.block(uint64_t(i), 0));
                // Truncated: re-draw beyond 2 stddev (P = 4.6% per attempt).
                for (uint32_t att = 1; dist == 2 && std::abs(zv) > 2.0 && att < 0xFFFFu; ++att)
                  zv = std_normal(d.block(uint64_t(i), att));
                if (dist == 2 && std::abs(zv) > 2.0) zv = 0.0;
                o[i] = T(compute_t<T>(a + b * zv));
              }
            },
            kParallelGrain / 16);
      };
    }
  });
}
KernelRegistrar k1("cpu", "Random", make_random);

}  // namespace
}  // namespace kb::cpu
