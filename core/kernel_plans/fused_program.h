// A FusedElementwise node's register program (core/compile/fuse_elementwise.cpp) evaluated one
// element at a time: the body of the CUDA kernel (one thread per element) and of the emulated
// device's kernel, with the scalar table's expressions as the single-op kernels use them. Inputs
// are read through their broadcast strides and converted as the Cast kernel converts. The
// program has fixed sizes, so that it travels as a CUDA kernel's parameter; a bigger group is
// declined (it stays unfused). The CPU's kernel (core/cpu/fused_elementwise.cpp) runs blocks of
// elements its own way.
#pragma once
#include <cstdint>
#include <vector>

#include "core/backend/kernel.h"
#include "core/ops/scalar_funcs.h"
#include "core/ops/scalar_ops.h"
#include "core/graph/dispatch.h"
#include "core/util/error.h"
#include "core/util/narrow_float.h"
#include "core/util/host_device.h"

namespace kb {

namespace fused {

constexpr int kMaxInputs = 12;
constexpr int kMaxInstructions = 48;
constexpr int kMaxRegisters = 16;
constexpr int kMaxRank = 8;

#define KB_INDEX(Name, ...) kOp##Name,
enum UnaryIndex { KB_UNARY_OPS(KB_INDEX) };
enum BinaryIndex { KB_BINARY_OPS(KB_INDEX) };
#undef KB_INDEX

#define KB_UNARY_CASE(Name, Dom, Res, expr, grad) \
  case kOp##Name: {                               \
    auto f = [](T a) { return expr; };            \
    return T(f(x));                               \
  }
#define KB_BINARY_CASE(Name, Dom, Res, expr, ga, gb) \
  case kOp##Name: {                                  \
    auto f = [](T a, T b) { return expr; };          \
    return T(f(x, y));                               \
  }

template <class T>
KB_HD T unary_op(int op, T x) {
  switch (op) { KB_UNARY_OPS(KB_UNARY_CASE) }
  return T(0);
}
template <class T>
KB_HD T binary_op(int op, T x, T y) {
  switch (op) { KB_BINARY_OPS(KB_BINARY_CASE) }
  return T(0);
}
#undef KB_UNARY_CASE
#undef KB_BINARY_CASE

}  // namespace fused

// The program with its inputs' layouts: {kind, op, dst, a, b} per instruction as the rewrite
// writes it (kind 0 loads input a, 1 applies unary op to register a, 2 binary op to a and b).
struct FusedProgram {
  int instructions = 0;
  int result = 0;
  int rank = 0;
  int16_t code[fused::kMaxInstructions][5] = {};
  int64_t dims[fused::kMaxRank] = {};
  int64_t stride[fused::kMaxInputs][fused::kMaxRank] = {};
  bool direct[fused::kMaxInputs] = {};  // laid out as the output: element i at i
  DType dtype[fused::kMaxInputs] = {};
};

struct FusedOperands {
  const void* in[fused::kMaxInputs] = {};
};

// The program of the node for these inputs; false when it exceeds the fixed sizes.
inline bool make_fused_program(const KernelArgs& k, FusedProgram& p) {
  const Attrs& a = k.node.attrs;
  std::vector<int64_t> code = a.ints(attr::program);
  int64_t registers = a.i(attr::registers);
  const Dims& od = k.out.shape.dims;
  size_t ni = code.size() / 5;
  check(ni > 0 && code.size() == ni * 5, Status::internal, "FusedElementwise: bad program");
  // A program mixing float32 and bfloat16 values (its instructions' rounding listed) is the
  // CPU's alone.
  if (a.has(attr::rounded)) return false;
  if (ni > size_t(fused::kMaxInstructions) || registers > fused::kMaxRegisters ||
      k.in.size() > size_t(fused::kMaxInputs) || od.size() > size_t(fused::kMaxRank))
    return false;
  p.instructions = int(ni);
  p.result = int(a.i(attr::result));
  p.rank = int(od.size());
  for (size_t j = 0; j < ni; ++j)
    for (size_t f = 0; f < 5; ++f) p.code[j][f] = int16_t(code[j * 5 + f]);
  for (size_t d = 0; d < od.size(); ++d) p.dims[d] = od[d];
  for (size_t i = 0; i < k.in.size(); ++i) {
    const TensorType& t = k.in[i];
    p.dtype[i] = t.dtype;
    p.direct[i] = t.shape.dims == od;
    broadcast_strides(t.shape.dims, od, p.stride[i]);
  }
  return true;
}

// Input k's value for output element i, converted to T.
template <class T>
KB_HD T fused_load(const FusedProgram& p, const FusedOperands& o, int k, int64_t i) {
  int64_t off = i;
  if (!p.direct[k]) {
    off = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      off += (i % p.dims[d]) * p.stride[k][d];
      i /= p.dims[d];
    }
  }
  switch (p.dtype[k]) {
    case DType::f16:
      return convert_value<float, T>(static_cast<const half*>(o.in[k])[off]);
    case DType::bf16:
      return convert_value<float, T>(static_cast<const bfloat16*>(o.in[k])[off]);
    case DType::f32:
      return convert_value<float, T>(static_cast<const float*>(o.in[k])[off]);
    case DType::f64:
      return convert_value<double, T>(static_cast<const double*>(o.in[k])[off]);
    case DType::i8:
      return convert_value<int8_t, T>(static_cast<const int8_t*>(o.in[k])[off]);
    case DType::i16:
      return convert_value<int16_t, T>(static_cast<const int16_t*>(o.in[k])[off]);
    case DType::i32:
      return convert_value<int32_t, T>(static_cast<const int32_t*>(o.in[k])[off]);
    case DType::i64:
      return convert_value<int64_t, T>(static_cast<const int64_t*>(o.in[k])[off]);
    case DType::u8:
      return convert_value<uint8_t, T>(static_cast<const uint8_t*>(o.in[k])[off]);
    case DType::b8:
      return convert_value<bool, T>(static_cast<const bool*>(o.in[k])[off]);
    default:
      return T(0);
  }
}

// Output element i: the program run over its registers. A float16 or bfloat16 group computes in
// float and rounds every instruction's result to its type, as its unfused kernels store each
// result: the same values, not more precise ones.
template <class T>
KB_HD T fused_element(const FusedProgram& p, const FusedOperands& o, int64_t i) {
  using C = compute_t<T>;
  C r[fused::kMaxRegisters];
  for (int j = 0; j < p.instructions; ++j) {
    const int16_t* c = p.code[j];
    T v;
    if (c[0] == 0)
      v = fused_load<T>(p, o, c[3], i);
    else if (c[0] == 1)
      v = T(fused::unary_op<C>(c[1], r[c[3]]));
    else
      v = T(fused::binary_op<C>(c[1], r[c[3]], r[c[4]]));
    r[c[2]] = C(v);
  }
  return T(r[p.result]);
}

}  // namespace kb
