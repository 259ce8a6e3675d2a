// CPU kernel of Random (core/ops/random_ops.cpp); the numbers are
// core/kernel_plans/random_draw.h's.
#include "core/backend/kernel.h"
#include "core/cpu/loops.h"
#include "core/graph/dispatch.h"
#include "core/kernel_plans/random_draw.h"

namespace kb::cpu {
namespace {

using Ins = std::vector<const Buffer*>;

Kernel make_random(const KernelArgs& k) {
  const Node* node = &k.node;
  RandomSpec r = random_spec(k.node.attrs);
  return dispatch_dtype(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    if constexpr (!is_float_v<T>) {
      fail(Status::dtype, "random: floating dtype required");
    } else {
      return [node, r](const Ins&, Buffer& out) {
        RandomDraw d = random_draw(r.seed, node->runs.fetch_add(1));
        T* o = out.as<T>();
        int64_t n = out.numel();
        if (r.dist == kUniform) {
          parallel_for(
              random_uniform_blocks<T>(n),
              [&](int64_t bb, int64_t be) {
                for (int64_t i = bb; i < be; ++i) random_uniform_block(d, i, o, n, r.a, r.b);
              },
              kParallelGrain / 16);
          return;
        }
        parallel_for(
            n,
            [&](int64_t eb, int64_t ee) {
              for (int64_t i = eb; i < ee; ++i)
                o[i] = random_normal_element<T>(d, uint64_t(i), r.dist, r.a, r.b);
            },
            kParallelGrain / 16);
      };
    }
  });
}
KernelRegistrar k1("cpu", ops::Random, make_random);

}  // namespace
}  // namespace kb::cpu
