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

}  // namespace

Kernel widened(const KernelArgs& args, size_t reads,
               const std::function<Kernel(const KernelArgs&)>& make_f32) {
  std::vector<TensorType> in32 = args.in;
  for (TensorType& t : in32)
    if (is_narrow_float(t.dtype)) t.dtype = DType::f32;
  TensorType out32 = args.out;
  out32.dtype = DType::f32;
  Kernel f32 = make_f32(KernelArgs{args.node, in32, out32, args.used_parts});
  if (!f32) return {};
  std::vector<DType> in;
  for (size_t i = 0; i < reads && i < args.in.size(); ++i) in.push_back(args.in[i].dtype);
  return [f32 = std::move(f32), in = std::move(in), out_type = args.out.dtype](
             const std::vector<const Buffer*>& ins, Buffer& out) {
    std::vector<Buffer> wide(ins.size());
    std::vector<const Buffer*> values(ins.begin(), ins.end());
    for (size_t i = 0; i < ins.size() && i < in.size(); ++i) {
      if (!is_narrow_float(in[i])) continue;
      wide[i] = Buffer(DType::f32, ins[i]->dims);
      wide[i].allocate();
      widen_into(in[i], ins[i]->data(), wide[i].as<float>(), ins[i]->numel());
      values[i] = &wide[i];
    }
    if (!is_narrow_float(out_type)) {
      f32(values, out);
      return;
    }
    Buffer result(DType::f32, out.dims);
    result.allocate();
    f32(values, result);
    narrow_into(out_type, result.as<float>(), out.data(), out.numel());
  };
}

}  // namespace kb::cpu
