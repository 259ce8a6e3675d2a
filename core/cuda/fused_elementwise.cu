// CUDA kernel of FusedElementwise (core/compile/fuse_elementwise.h): one thread per element runs
// the group's register program, every thread the same instruction at once (no divergence), with
// the scalar table's expressions as the single-op kernels use them. Inputs are read through
// their broadcast strides and converted as the Cast kernel converts. The program and the input
// strides travel as the kernel's parameter; a group beyond its fixed sizes stays unfused.
#include "core/cuda/common.cuh"
#include "core/ops/scalar_funcs.h"
#include "core/ops/scalar_ops.h"

namespace kb::cuda {
namespace {

constexpr int kMaxInputs = 12;
constexpr int kMaxInstructions = 48;
constexpr int kMaxRegisters = 16;

#define KB_INDEX(Name, ...) kOp##Name,
enum UnaryIndex { KB_UNARY_OPS(KB_INDEX) };
enum BinaryIndex { KB_BINARY_OPS(KB_INDEX) };
#undef KB_INDEX

// Bool-only operations never join a float group (core/compile/fuse_elementwise.cpp).
#define KB_UNARY_CASE(Name, Dom, Res, expr, grad)         \
  case kOp##Name:                                         \
    if constexpr (ScalarDomain::Dom != ScalarDomain::B) { \
      auto f = [](T a) { return expr; };                  \
      return T(f(x));                                     \
    }                                                     \
    break;
#define KB_BINARY_CASE(Name, Dom, Res, expr, ga, gb)      \
  case kOp##Name:                                         \
    if constexpr (ScalarDomain::Dom != ScalarDomain::B) { \
      auto f = [](T a, T b) { return expr; };             \
      return T(f(x, y));                                  \
    }                                                     \
    break;

template <class T>
__device__ T unary_op(int op, T x) {
  switch (op) { KB_UNARY_OPS(KB_UNARY_CASE) }
  return T(0);
}
template <class T>
__device__ T binary_op(int op, T x, T y) {
  switch (op) { KB_BINARY_OPS(KB_BINARY_CASE) }
  return T(0);
}
#undef KB_UNARY_CASE
#undef KB_BINARY_CASE

// The program with its inputs' layouts: {kind, op, dst, a, b} per instruction as the rewrite
// writes it (kind 0 loads input a, 1 applies unary op to register a, 2 binary op to a and b).
struct Program {
  int instructions = 0;
  int result = 0;
  int rank = 0;
  int16_t code[kMaxInstructions][5] = {};
  int64_t dims[kMaxDims] = {};
  int64_t stride[kMaxInputs][kMaxDims] = {};
  bool direct[kMaxInputs] = {};  // laid out as the output: element i at i
  DType dtype[kMaxInputs] = {};
};

struct Operands {
  const void* in[kMaxInputs] = {};
};

template <class T>
__device__ T load(const Program& p, const Operands& o, int k, int64_t i) {
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

template <class T>
__global__ void fused_kernel(Program p, Operands o, T* out, int64_t n) {
  KB_GRID_LOOP(i, n) {
    T r[kMaxRegisters];
    for (int j = 0; j < p.instructions; ++j) {
      const int16_t* c = p.code[j];
      if (c[0] == 0)
        r[c[2]] = load<T>(p, o, c[3], i);
      else if (c[0] == 1)
        r[c[2]] = unary_op<T>(c[1], r[c[3]]);
      else
        r[c[2]] = binary_op<T>(c[1], r[c[3]], r[c[4]]);
    }
    out[i] = r[p.result];
  }
}

// The program of the node for these inputs; false when it exceeds the kernel's sizes.
bool make_program(const KernelArgs& k, Program& p) {
  const Attrs& a = k.node.attrs;
  std::vector<int64_t> code = a.ints("program");
  int64_t registers = a.i("registers");
  const Dims& od = k.out.shape.dims;
  size_t ni = code.size() / 5;
  check(ni > 0 && code.size() == ni * 5, Status::internal, "FusedElementwise: bad program");
  if (ni > size_t(kMaxInstructions) || registers > kMaxRegisters ||
      k.in.size() > size_t(kMaxInputs) || od.size() > size_t(kMaxDims))
    return false;
  p.instructions = int(ni);
  p.result = int(a.i("result"));
  p.rank = int(od.size());
  for (size_t j = 0; j < ni; ++j)
    for (size_t f = 0; f < 5; ++f) p.code[j][f] = int16_t(code[j * 5 + f]);
  for (size_t d = 0; d < od.size(); ++d) p.dims[d] = od[d];
  for (size_t i = 0; i < k.in.size(); ++i) {
    const TensorType& t = k.in[i];
    p.dtype[i] = t.dtype;
    p.direct[i] = t.shape.dims == od;
    broadcast_strides(od, t.shape.dims, p.stride[i]);
  }
  return true;
}

template <class T>
Kernel fused_factory(const KernelArgs& k) {
  Program p;
  if (!make_program(k, p)) return Kernel{};
  return [p](const std::vector<const Buffer*>& in, Buffer& out) {
    int64_t n = out.numel();
    if (n == 0) return;
    Operands o;
    for (size_t i = 0; i < in.size(); ++i) o.in[i] = in[i]->data();
    fused_kernel<T><<<blocks_for(n), 256, 0, stream()>>>(p, o, out.as<T>(), n);
    after_launch("fused elementwise");
  };
}

Kernel make_fused_elementwise(const KernelArgs& k) {
  if (k.out.dtype == DType::f32) return fused_factory<float>(k);
  if (k.out.dtype == DType::f64) return fused_factory<double>(k);
  return Kernel{};
}
Registrar reg_fused("FusedElementwise", make_fused_elementwise);

}  // namespace
}  // namespace kb::cuda
