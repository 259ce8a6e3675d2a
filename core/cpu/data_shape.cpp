// CPU kernels of the primitives whose output shape comes from the values (Where, TrimTrailing):
// they receive `out` without storage, set its dims and allocate.
#include <cstring>

#include "core/backend/kernel.h"
#include "core/util/convert_value.h"
#include "core/graph/dispatch.h"

namespace kb {
namespace {

using Ins = std::vector<const Buffer*>;

Kernel make_where(const KernelArgs& k) {
  return dispatch_dtype(k.in[0].dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    return [](const Ins& in, Buffer& out) {
      const Buffer& x = *in[0];
      const T* v = x.as<T>();
      int64_t n = x.numel(), rank = int64_t(x.dims.size()), count = 0;
      for (int64_t i = 0; i < n; ++i) count += compute_t<T>(v[i]) != compute_t<T>(0);
      out.dims = {count, rank};
      out.allocate();
      int64_t* o = out.as<int64_t>();
      for (int64_t i = 0; i < n; ++i) {
        if (compute_t<T>(v[i]) == compute_t<T>(0)) continue;
        // Row-major coordinates of flat index i.
        int64_t rest = i;
        for (int64_t d = rank - 1; d >= 0; --d) {
          o[d] = rest % x.dims[size_t(d)];
          rest /= x.dims[size_t(d)];
        }
        o += rank;
      }
    };
  });
}
KernelRegistrar k1("cpu", ops::Where, make_where);

Kernel make_trim_trailing(const KernelArgs& k) {
  int64_t axis = k.node.attrs.i(attr::axis);
  double value = k.node.attrs.f(attr::value);
  return dispatch_dtype(k.in[0].dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using C = compute_t<T>;
    C pad = convert_value<double, C>(value);
    return [axis, pad](const Ins& in, Buffer& out) {
      const Buffer& x = *in[0];
      int64_t outer = 1, inner = 1, len = x.dims[size_t(axis)];
      for (int64_t d = 0; d < axis; ++d) outer *= x.dims[size_t(d)];
      for (size_t d = size_t(axis) + 1; d < x.dims.size(); ++d) inner *= x.dims[d];
      const T* v = x.as<T>();
      int64_t keep = 0;  // 1 + the last position along axis holding anything but the padding
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = len - 1; j >= keep; --j) {
          const T* row = v + (o * len + j) * inner;
          bool padding = true;
          for (int64_t i = 0; i < inner && padding; ++i) padding = C(row[i]) == pad;
          if (!padding) {
            keep = j + 1;
            break;
          }
        }
      out.dims = x.dims;
      out.dims[size_t(axis)] = keep;
      out.allocate();
      size_t bytes = size_t(keep * inner) * sizeof(T);
      for (int64_t o = 0; o < outer; ++o)
        if (bytes) std::memcpy(out.as<T>() + o * keep * inner, v + o * len * inner, bytes);
    };
  });
}
KernelRegistrar k2("cpu", ops::TrimTrailing, make_trim_trailing);

}  // namespace
}  // namespace kb
