// CUDA kernel of Random: the same numbers as the CPU's (core/kernel_plans/random_draw.h), one
// thread per uniform block or normal element; the run number comes from the node's counter, as on
// the CPU.
#include "core/cuda/common.cuh"
#include "core/kernel_plans/random_draw.h"

namespace kb::cuda {
namespace {

template <class T>
__global__ void uniform_kernel(RandomDraw d, T* o, int64_t n, double a, double b) {
  int64_t blocks = random_uniform_blocks<T>(n);
  KB_GRID_LOOP(i, blocks) random_uniform_block(d, i, o, n, a, b);
}

template <class T>
__global__ void normal_kernel(RandomDraw d, T* o, int64_t n, int64_t dist, double a, double b) {
  KB_GRID_LOOP(i, n) o[i] = random_normal_element<T>(d, uint64_t(i), dist, a, b);
}

Kernel make_random(const KernelArgs& k) {
  const Node* node = &k.node;
  RandomSpec r = random_spec(k.node.attrs);
  return dispatch_float<Kernel>(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    return [node, r](const std::vector<const Buffer*>&, Buffer& out) {
      RandomDraw d = random_draw(r.seed, node->runs.fetch_add(1));
      int64_t n = out.numel();
      if (n == 0) return;
      if (r.dist == kUniform) {
        uniform_kernel<<<blocks_for(random_uniform_blocks<T>(n)), 256, 0, stream()>>>(
            d, out.as<T>(), n, r.a, r.b);
      } else {
        normal_kernel<<<blocks_for(n), 256, 0, stream()>>>(d, out.as<T>(), n, r.dist, r.a, r.b);
      }
      after_launch("random");
    };
  });
}
Registrar reg_random(ops::Random, make_random);

}  // namespace
}  // namespace kb::cuda
