// The emulated device's kernels for the CUDA plugin's strided kernels: the copies of
// core/kernel_plans/copy_plan.h and the broadcasting binary operations and select of
// core/cuda/elementwise.cu, over the same maps (core/kernel_plans/strided_map.h), on the host.
// Every offset a map yields is checked against its operand, so that a map reading or writing
// outside a tensor (which a GPU would do silently) fails the suites.
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/kernel_plans/copy_plan.h"
#include "core/ops/op.h"
#include "core/ops/scalar_funcs.h"
#include "core/ops/scalar_ops.h"
#include "core/graph/dispatch.h"
#include "core/kernel_plans/scalar_domain.h"
#include "element_kernels.h"

namespace kb::emulation {
namespace {

using Ins = std::vector<const Buffer*>;

int64_t inside(int64_t offset, int64_t size, const std::string& op, const char* what) {
  if (offset < 0 || offset >= size)
    throw std::logic_error("emulated device: " + op + "'s map reaches element " +
                           std::to_string(offset) + " of its " + what + " of " +
                           std::to_string(size));
  return offset;
}

Kernel copy_kernel(const KernelArgs& k, const CopyPlan& plan) {
  return [p = plan, op = k.node.op->name](const Ins& in, Buffer& out) {
    size_t es = dtype_size(out.dtype);
    char* o = static_cast<char*>(out.data());
    if (p.zero_first) std::memset(o, 0, out.nbytes());
    for (const CopyPart& c : p.parts) {
      const Buffer& src = *in[size_t(c.input)];
      const char* s = static_cast<const char*>(src.data());
      for (int64_t i = 0; i < c.n; ++i) {
        int64_t off[2];
        c.map.offsets(i, off, 2);
        int64_t to = inside(c.out_base + off[0], out.numel(), op, "output");
        int64_t from = inside(c.in_base + off[1], src.numel(), op, "input");
        std::memcpy(o + size_t(to) * es, s + size_t(from) * es, es);
      }
    }
  };
}

// As core/cuda/elementwise.cu's binary_factory: operands of one shape read at i, others through
// the broadcast map; computed in compute_t<T>.
template <ScalarDomain D, ScalarResult R, class F>
Kernel binary_kernel(const KernelArgs& k) {
  return dispatch_in_domain<D, Kernel>(k.in[0].dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using O = std::conditional_t<R == ScalarResult::BOOL, bool, T>;
    using C = compute_t<T>;
    const Dims& od = k.out.shape.dims;
    bool same = k.in[0].shape.dims == od && k.in[1].shape.dims == od;
    StridedMap m = make_map(od, {od, k.in[0].shape.dims, k.in[1].shape.dims});
    return [m, same, op = k.node.op->name](const Ins& in, Buffer& out) {
      const T *a = in[0]->as<T>(), *b = in[1]->as<T>();
      O* o = out.as<O>();
      for (int64_t i = 0; i < out.numel(); ++i) {
        int64_t off[3] = {i, i, i};
        if (!same) m.offsets(i, off, 3);
        C x = C(a[inside(off[1], in[0]->numel(), op, "first operand")]);
        C y = C(b[inside(off[2], in[1]->numel(), op, "second operand")]);
        o[inside(off[0], out.numel(), op, "output")] = O(F{}(x, y));
      }
    };
  });
}

#define KB_EMULATED_BINARY(Name, Dom, Res, expr, ga, gb) \
  struct Fn##Name {                                      \
    template <class A>                                   \
    auto operator()(A a, A b) const {                    \
      return expr;                                       \
    }                                                    \
  };
KB_BINARY_OPS(KB_EMULATED_BINARY)
#undef KB_EMULATED_BINARY

#define KB_EMULATED_BINARY_ROW(Name, Dom, Res, expr, ga, gb) \
  {#Name, binary_kernel<ScalarDomain::Dom, ScalarResult::Res, Fn##Name>},
const std::pair<const char*, KernelFactory> kBinary[] = {KB_BINARY_OPS(KB_EMULATED_BINARY_ROW)};
#undef KB_EMULATED_BINARY_ROW

// As core/cuda/elementwise.cu's select: condition, then and else through one map.
Kernel select_kernel(const KernelArgs& k) {
  StridedMap m =
      make_map(k.out.shape.dims, {k.in[0].shape.dims, k.in[1].shape.dims, k.in[2].shape.dims});
  size_t es = dtype_size(k.out.dtype);
  return [m, es, op = k.node.op->name](const Ins& in, Buffer& out) {
    const bool* c = in[0]->as<bool>();
    const char *a = static_cast<const char*>(in[1]->data()),
               *b = static_cast<const char*>(in[2]->data());
    char* o = static_cast<char*>(out.data());
    for (int64_t i = 0; i < out.numel(); ++i) {
      int64_t off[3];
      m.offsets(i, off, 3);
      bool take_a = c[inside(off[0], in[0]->numel(), op, "condition")];
      const char* src = take_a
                            ? a + size_t(inside(off[1], in[1]->numel(), op, "then operand")) * es
                            : b + size_t(inside(off[2], in[2]->numel(), op, "else operand")) * es;
      std::memcpy(o + size_t(i) * es, src, es);
    }
  };
}

}  // namespace

std::optional<Kernel> strided_kernel(const char* op, const KernelArgs& args) {
  if (std::optional<CopyPlan> plan = copy_plan(args)) return copy_kernel(args, *plan);
  if (std::strcmp(op, "Select") == 0) return select_kernel(args);
  for (auto& [name, factory] : kBinary)
    if (std::strcmp(op, name) == 0) return factory(args);
  return std::nullopt;
}

}  // namespace kb::emulation
