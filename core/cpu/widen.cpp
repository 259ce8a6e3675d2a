#include "core/cpu/widen.h"

#include <memory>

#include "core/cpu/loops.h"
#include "core/util/dispatch.h"

namespace kb::cpu {
namespace {

// Copies n values of a 16-bit float type into float32 (widen) or back (narrow).
void widen_into(DType t, const void* src, float* dst, int64_t n) {
  dispatch_dtype(t, [&](auto z) {
    using T = decltype(z);
    if constexpr (is_narrow_float_v<T>) {
      const T* s = static_cast<const T*>(src);
      parallel_for(n, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) dst[i] = float(s[i]);
      });
    }
  });
}
void narrow_into(DType t, const float* src, void* dst, int64_t n) {
  dispatch_dtype(t, [&](auto z) {
    using T = decltype(z);
    if constexpr (is_narrow_float_v<T>) {
      T* d = static_cast<T*>(dst);
      parallel_for(n, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) d[i] = T(src[i]);
      });
    }
  });
}

bool is_narrow(DType t) { return t == DType::f16 || t == DType::bf16; }

}  // namespace

Kernel widened(Kernel f32, std::vector<DType> in, DType out) {
  return [f32 = std::move(f32), in = std::move(in), out_type = out](
             const std::vector<const Buffer*>& ins, Buffer& out) {
    std::vector<Buffer> wide(ins.size());
    std::vector<const Buffer*> args(ins.size());
    for (size_t i = 0; i < ins.size(); ++i) {
      args[i] = ins[i];
      if (i >= in.size() || !is_narrow(in[i])) continue;
      wide[i] = Buffer(DType::f32, ins[i]->dims);
      wide[i].allocate();
      widen_into(in[i], ins[i]->data(), wide[i].as<float>(), ins[i]->numel());
      args[i] = &wide[i];
    }
    if (!is_narrow(out_type)) {
      f32(args, out);
      return;
    }
    Buffer result(DType::f32, out.dims);
    result.allocate();
    f32(args, result);
    narrow_into(out_type, result.as<float>(), out.data(), out.numel());
  };
}

}  // namespace kb::cpu
