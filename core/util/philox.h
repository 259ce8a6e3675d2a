// Philox 4x32-10 counter-based generator (Salmon et al., SC'11): the same (key, counter) gives
// the same numbers on every device.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>

#include "core/util/host_device.h"

namespace kb {

// One Philox block: counter c (4 words) under key (k0, k1), in place.
KB_HD inline void philox4x32_10(uint32_t* c, uint32_t k0, uint32_t k1) {
  constexpr uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  for (int r = 0; r < 10; ++r) {
    uint64_t p0 = uint64_t(M0) * c[0];
    uint64_t p1 = uint64_t(M1) * c[2];
    uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0);
    uint32_t hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
    uint32_t n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
    k0 += W0;
    k1 += W1;
  }
}

inline std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  philox4x32_10(c.data(), k[0], k[1]);
  return c;
}

// A stream of uniform and normal draws for one seed, starting at a given counter.
class PhiloxStream {
 public:
  PhiloxStream(uint64_t seed, uint64_t offset = 0)
      : key_{uint32_t(seed), uint32_t(seed >> 32)}, counter_(offset) {}
  uint32_t next_u32() {
    if (pos_ == 4) {
      block_ = philox4x32_10({uint32_t(counter_), uint32_t(counter_ >> 32), 0, 0}, key_);
      ++counter_;
      pos_ = 0;
    }
    return block_[pos_++];
  }
  // Uniform in [0, 1).
  double uniform() {
    uint64_t hi = next_u32() >> 5, lo = next_u32() >> 6;  // 53 random bits
    return double((hi << 26) | lo) * (1.0 / 9007199254740992.0);
  }
  double normal() {
    double u1 = uniform(), u2 = uniform();
    if (u1 <= 0) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  std::array<uint32_t, 2> key_;
  uint64_t counter_;
  std::array<uint32_t, 4> block_{};
  int pos_ = 4;
};

}  // namespace kb
