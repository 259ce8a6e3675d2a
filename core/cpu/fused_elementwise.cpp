// CPU kernel of FusedElementwise (core/compile/fuse_elementwise.cpp): the register program runs
// over blocks of kBlock elements; each instruction is one loop over the block with the scalar
// table's expression, so the compiler vectorizes it as it does the single-op kernels, and the
// values evaluated per element are the same as the unfused steps' (a bfloat16 program computes
// in float and rounds each instruction's result, as the single-op kernels do). Blocks are split
// across threads.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "core/backend/kernel.h"
#include "core/cpu/loops.h"
#include "core/cpu/scratch.h"
#include "core/cpu/simd_targets.h"
#include "core/cpu/widen.h"
#include "core/ops/op.h"
#include "core/ops/scalar_funcs.h"
#include "core/ops/scalar_ops.h"
#include "core/graph/dispatch.h"

namespace kb::cpu {
namespace {

constexpr int64_t kBlock = 512;

// An expression's value as a register's element: a comparison's bool through a select, which
// vectorizes (its conversion to float did not: one vcomiss and vcvtsi2ss per element).
template <class T, class V>
inline T element(V v) {
  if constexpr (std::is_same_v<V, bool>)
    return v ? T(1) : T(0);
  else
    return T(v);
}

template <class T>
using UnaryFn = void (*)(const T* __restrict a, T* __restrict o, int64_t n);
template <class T>
using BinaryFn = void (*)(const T* __restrict a, const T* __restrict b, T* __restrict o, int64_t n);

#define KB_FUSED_UNARY(Name, Dom, Res, expr, grad)                                          \
  template <class T>                                                                        \
  KB_SIMD_CLONES void unary_##Name(const T* __restrict pa, T* __restrict o, int64_t n) {    \
    auto f = [](auto a) { return expr; };                                                   \
    if (n == kBlock) {                                                                      \
      _Pragma("omp simd") for (int64_t i = 0; i < kBlock; ++i) o[i] = element<T>(f(pa[i])); \
    } else {                                                                                \
      for (int64_t i = 0; i < n; ++i) o[i] = element<T>(f(pa[i]));                          \
    }                                                                                       \
  }
KB_UNARY_OPS(KB_FUSED_UNARY)
#define KB_FUSED_BINARY(Name, Dom, Res, expr, ga, gb)                                              \
  template <class T>                                                                               \
  KB_SIMD_CLONES void binary_##Name(const T* __restrict pa, const T* __restrict pb,                \
                                    T* __restrict o, int64_t n) {                                  \
    auto f = [](auto a, decltype(a) b) { return expr; };                                           \
    if (n == kBlock) {                                                                             \
      _Pragma("omp simd") for (int64_t i = 0; i < kBlock; ++i) o[i] = element<T>(f(pa[i], pb[i])); \
    } else {                                                                                       \
      for (int64_t i = 0; i < n; ++i) o[i] = element<T>(f(pa[i], pb[i]));                          \
    }                                                                                              \
  }
KB_BINARY_OPS(KB_FUSED_BINARY)

#define KB_FUSED_UNARY_PTR(Name, ...) &unary_##Name<T>,
#define KB_FUSED_BINARY_PTR(Name, ...) &binary_##Name<T>,
template <class T>
const UnaryFn<T> kUnary[] = {KB_UNARY_OPS(KB_FUSED_UNARY_PTR)};
template <class T>
const BinaryFn<T> kBinary[] = {KB_BINARY_OPS(KB_FUSED_BINARY_PTR)};

// As the Cast kernel converts (half computes in float).
template <class S, class D>
D convert(S v) {
  return convert_value<compute_t<S>, D>(compute_t<S>(v));
}

// A value loaded into a register of type R for a program computing in type Q: converted to Q
// (a bfloat16 program's Cast from float32 rounds there), then held exactly in R.
template <class R, class Q, class S>
R load_value(S v) {
  if constexpr (std::is_same_v<Q, R>)
    return convert<S, R>(v);
  else
    return R(convert<S, Q>(v));
}

// An input seen from the output: dims and strides with the axes that are contiguous for both
// merged (stride 0 along broadcast axes).
struct Source {
  DType dtype;
  bool direct = false;  // same dtype and shape as the output: read in place
  Dims d, s;
  // When the outermost axis is broadcast: the product of the others, the period after which
  // the input's values repeat along the output (0 otherwise).
  int64_t period = 0;
};

Source make_source(const TensorType& in, const Dims& od, DType out_dtype) {
  Source src;
  src.dtype = in.dtype;
  src.direct = in.dtype == out_dtype && !is_narrow_float(out_dtype) && in.shape.dims == od;
  Dims st = broadcast_strides(in.shape.dims, od);
  for (size_t i = 0; i < od.size(); ++i) {
    if (od[i] == 1) continue;
    if (!src.d.empty() && src.s.back() == st[i] * od[i]) {
      src.d.back() *= od[i];
      src.s.back() = st[i];
    } else {
      src.d.push_back(od[i]);
      src.s.push_back(st[i]);
    }
  }
  if (src.d.empty()) {
    src.d.push_back(1);
    src.s.push_back(0);
  }
  if (src.d.size() >= 2 && src.s[0] == 0) {
    src.period = 1;
    for (size_t i = 1; i < src.d.size(); ++i) src.period *= src.d[i];
  }
  return src;
}

// n copies of v (vectorized: the copies of broadcast values are a good part of a program's
// stores).
template <class T>
KB_SIMD_CLONES void fill_copies(T* __restrict o, int64_t n, T v) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) o[i] = v;
}

// A broadcast input's block, kept per thread and input while the next blocks read the same
// values: one value (a per-channel parameter over H*W positions, a scalar), or a pattern that
// repeats along the output (a bias of the last axis, the same C values at the same places in
// every block). Writing the block anew each time cost more than the program's arithmetic.
template <class T>
struct KeptBlock {
  enum Kind { none, copies, periodic };
  T* values;  // kBlock values
  Kind kind;
  T value;        // copies: the value
  int64_t phase;  // periodic: the block's first index modulo the source's period
};

// Elements [i0, i0 + n) of the broadcast input, converted to T (through Q, the program's type):
// a pointer into the input when they lie there contiguously in T, the kept block when it holds
// them, else written to buf.
template <class T, class Q, class S>
const T* load(const Source& src, const S* base, int64_t i0, int64_t n, T* buf, int64_t* idx,
              KeptBlock<T>& kept) {
  size_t r = src.d.size();
  std::fill(idx, idx + r, int64_t(0));
  int64_t rem = i0, pos = 0;
  for (size_t i = r; i-- > 0;) {
    idx[i] = rem % src.d[i];
    rem /= src.d[i];
    pos += idx[i] * src.s[i];
  }
  const int64_t inner = src.d[r - 1], is = src.s[r - 1];
  // (A float32 value loaded into a bfloat16 program is rounded: never read in place.)
  constexpr bool as_is = std::is_same_v<S, T> && std::is_same_v<Q, T>;
  if constexpr (as_is) {
    if (is == 1 && inner - idx[r - 1] >= n) return base + pos;
  }
  if (is == 0 && inner - idx[r - 1] >= n) {
    T v = load_value<T, Q, S>(base[pos]);
    if (kept.kind != KeptBlock<T>::copies || std::memcmp(&kept.value, &v, sizeof(T)) != 0) {
      fill_copies(kept.values, kBlock, v);
      kept.kind = KeptBlock<T>::copies;
      kept.value = v;
    }
    return kept.values;
  }
  if (src.period > 0 && n == kBlock) {
    int64_t phase = i0 % src.period;
    if (kept.kind == KeptBlock<T>::periodic && kept.phase == phase) return kept.values;
    kept.kind = KeptBlock<T>::periodic;
    kept.phase = phase;
    buf = kept.values;  // written below
  }
  T* o = buf;
  while (n > 0) {
    int64_t m = std::min(inner - idx[r - 1], n);
    const S* p = base + pos;
    if (is == 0) {
      fill_copies(o, m, load_value<T, Q, S>(p[0]));
    } else if (as_is && is == 1) {
      std::memcpy(o, p, size_t(m) * sizeof(T));  // a row of a broadcast operand (a bias)
    } else if (std::is_same_v<S, bfloat16> && std::is_same_v<T, float> && is == 1) {
      bf16_to_f32(reinterpret_cast<const bfloat16*>(p), reinterpret_cast<float*>(o), m);
    } else {
      for (int64_t i = 0; i < m; ++i) o[i] = load_value<T, Q, S>(p[i * is]);
    }
    o += m;
    n -= m;
    idx[r - 1] += m;
    pos += m * is;
    if (idx[r - 1] == inner) {
      pos -= inner * is;
      idx[r - 1] = 0;
      for (size_t i = r - 1; i-- > 0;) {
        ++idx[i];
        pos += src.s[i];
        if (idx[i] < src.d[i]) break;
        pos -= src.d[i] * src.s[i];
        idx[i] = 0;
      }
    }
  }
  return buf;
}

// Work of one element of an instruction, in units of a simple add: the transcendental table
// functions are polynomials of 15-30 operations.
int64_t instruction_cost(int64_t kind, int64_t op) {
#define KB_COST_NAME(Name, ...) #Name,
  static const char* const unary[] = {KB_UNARY_OPS(KB_COST_NAME)};
  static const char* const binary[] = {KB_BINARY_OPS(KB_COST_NAME)};
#undef KB_COST_NAME
  static const std::set<std::string> costly = {"Exp",  "Log",        "Log1p",    "Sin", "Cos",
                                               "Tanh", "Sigmoid",    "Softplus", "Pow", "Sqrt",
                                               "Div",  "Reciprocal", "Erf"};
  const char* name = kind == 1 ? unary[op] : kind == 2 ? binary[op] : "";
  return costly.count(name) ? 8 : 1;
}

// The program over outputs of type Q, computed in registers of type T (float for bfloat16, each
// result rounded to Q).
template <class T, class Q = T>
Kernel fused_kernel(const KernelArgs& k) {
  constexpr bool narrow = !std::is_same_v<Q, T>;
  const Attrs& a = k.node.attrs;
  std::vector<int64_t> code = a.ints(attr::program);
  // A program mixing float32 and bfloat16 values: which instructions round (else all do in a
  // bfloat16 program, none in a float32 one).
  std::vector<int64_t> rounded =
      a.has(attr::rounded) ? a.ints(attr::rounded) : std::vector<int64_t>{};
  const bool mixed = !rounded.empty();
  int64_t nregs = a.i(attr::registers);
  int64_t result = a.i(attr::result);
  Dims od = k.out.shape.dims;
  std::vector<Source> srcs;
  size_t max_rank = 1;
  for (auto& t : k.in) {
    srcs.push_back(make_source(t, od, k.out.dtype));
    max_rank = std::max(max_rank, srcs.back().d.size());
  }
  size_t ni = code.size() / 5;
  check(ni > 0 && code.size() == ni * 5, Status::internal, "FusedElementwise: bad program");
  check(!mixed || (rounded.size() == ni && std::is_same_v<T, float>), Status::internal,
        "FusedElementwise: bad rounding list");
  // The last instruction writes the output directly when it computes the result (in T).
  bool last_writes_out = !narrow && code[(ni - 1) * 5] != 0 && code[(ni - 1) * 5 + 2] == result;
  // Blocks per thread at least: a long program splits smaller tensors across the threads than
  // one add would (an LSTM's gates, 16K elements through three sigmoids and a tanh, ran on one).
  // An instruction over a block in the cache takes about half the time per element of a loop
  // that streams its operands from memory (0.09 against 0.17 ns here): a unit of cost counts
  // half of kParallelGrain's.
  int64_t cost = 0;
  for (size_t j = 0; j < ni; ++j) cost += instruction_cost(code[j * 5], code[j * 5 + 1]);
  int64_t grain = std::max<int64_t>(1, 2 * kParallelGrain / (kBlock * std::max<int64_t>(cost, 1)));
  return [=](const std::vector<const Buffer*>& in, Buffer& out) {
    Q* o = out.as<Q>();
    int64_t total = out.numel();
    int64_t nblocks = (total + kBlock - 1) / kBlock;
    parallel_for(
        nblocks,
        [&](int64_t b0, int64_t b1) {
          // Kept per thread: a step of a loop body runs thousands of times per call.
          ThreadScratch<T, struct FusedRegisters> regs_s(static_cast<size_t>(nregs * kBlock));
          ThreadScratch<const T*, struct FusedOperands> ptr_s(static_cast<size_t>(nregs));
          ThreadScratch<int64_t, struct FusedIndex> idx(max_rank);
          ThreadScratch<T, struct FusedKeptValues> kept_values(srcs.size() * size_t(kBlock));
          ThreadScratch<KeptBlock<T>, struct FusedKeptBlocks> kept(srcs.size());
          for (size_t s = 0; s < srcs.size(); ++s)
            kept.data()[s] = {kept_values.data() + s * size_t(kBlock), KeptBlock<T>::none, T(0), 0};
          T* regs = regs_s.data();
          const T** ptr = ptr_s.data();
          for (int64_t blk = b0; blk < b1; ++blk) {
            int64_t i0 = blk * kBlock;
            int64_t n = std::min(kBlock, total - i0);
            for (size_t j = 0; j < ni; ++j) {
              const int64_t* c = &code[j * 5];
              T* dst = regs + c[2] * kBlock;
              if (c[0] == 0) {
                const Source& src = srcs[size_t(c[3])];
                const Buffer* b = in[size_t(c[3])];
                if (src.direct) {
                  ptr[size_t(c[2])] = b->as<T>() + i0;
                } else {
                  ptr[size_t(c[2])] = dispatch_dtype(src.dtype, [&](auto z) -> const T* {
                    using S = decltype(z);
                    KeptBlock<T>& kb = kept.data()[size_t(c[3])];
                    if constexpr (std::is_same_v<T, float>) {
                      if (mixed) {
                        if (rounded[j])
                          return load<T, bfloat16, S>(src, b->as<S>(), i0, n, dst, idx.data(), kb);
                        return load<T, T, S>(src, b->as<S>(), i0, n, dst, idx.data(), kb);
                      }
                    }
                    return load<T, Q, S>(src, b->as<S>(), i0, n, dst, idx.data(), kb);
                  });
                }
                continue;
              }
              if constexpr (!narrow) {
                if (last_writes_out && j + 1 == ni) dst = o + i0;
              }
              if (c[0] == 1)
                kUnary<T>[c[1]](ptr[size_t(c[3])], dst, n);
              else if (c[0] == 2)
                kBinary<T>[c[1]](ptr[size_t(c[3])], ptr[size_t(c[4])], dst, n);
              else  // 3: a copy, rounded below (a cast to bfloat16 in a mixed program)
                std::memcpy(dst, ptr[size_t(c[3])], size_t(n) * sizeof(T));
              // A bfloat16 value is rounded as the single-op kernels round it.
              if constexpr (std::is_same_v<T, float>) {
                if (mixed ? rounded[j] != 0 : narrow) round_to_bf16(dst, n);
              }
              ptr[size_t(c[2])] = dst;
            }
            if constexpr (narrow)
              f32_to_bf16(ptr[size_t(result)], o + i0, n);  // exact: rounded already
            else if (!last_writes_out) {
              std::memcpy(o + i0, ptr[size_t(result)], size_t(n) * sizeof(T));
            }
          }
        },
        grain);
  };
}

Kernel make_fused_elementwise(const KernelArgs& k) {
  if (k.out.dtype == DType::f32) return fused_kernel<float>(k);
  if (k.out.dtype == DType::f64) return fused_kernel<double>(k);
  if (k.out.dtype == DType::bf16) return fused_kernel<float, bfloat16>(k);
  return Kernel();
}
KernelRegistrar kr_fused("cpu", ops::FusedElementwise, make_fused_elementwise);

}  // namespace
}  // namespace kb::cpu
