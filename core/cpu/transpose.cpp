#include "core/cpu/transpose.h"

#include <array>
#include <cstring>

#include "core/cpu/loops.h"

namespace kb::cpu {

using Small = SmallVector<int64_t, 8>;

template <class E>
static void copy_rows(const E* s, E* d, const Small& od, const std::array<Small, 2>& strides) {
  strided_rows<2>(
      od, strides,
      [&](const std::array<int64_t, 2>& off, const std::array<int64_t, 2>& st, int64_t len) {
        E* po = d + off[0];
        const E* ps = s + off[1];
        if (st[0] == 1 && st[1] == 1) {
          std::memcpy(po, ps, size_t(len) * sizeof(E));
        } else {
          for (int64_t i = 0; i < len; ++i) po[i * st[0]] = ps[i * st[1]];
        }
      });
}

void transpose_copy(const void* src, void* dst, const Dims& src_dims,
                    const std::vector<int64_t>& perm, size_t es) {
  // Built per call, so kept off the heap.
  const size_t r = perm.size();
  Small ss = contiguous_strides_as<Small>(src_dims), od(r), in_strides(r);
  for (size_t i = 0; i < r; ++i) {
    od[i] = src_dims[size_t(perm[i])];
    in_strides[i] = ss[size_t(perm[i])];
  }
  std::array<Small, 2> strides{contiguous_strides_as<Small>(od), in_strides};
  switch (es) {
    case 1:
      copy_rows(static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst), od, strides);
      break;
    case 2:
      copy_rows(static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst), od, strides);
      break;
    case 4:
      copy_rows(static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), od, strides);
      break;
    default:
      copy_rows(static_cast<const uint64_t*>(src), static_cast<uint64_t*>(dst), od, strides);
      break;
  }
}

}  // namespace kb::cpu
