// CUDA MatMul through cuBLAS (strided batched GEMM, row-major by computing C^T = B^T A^T).
#include <cublas_v2.h>

#include <mutex>

#include "core/backend/layout.h"
#include "core/cuda/common.cuh"

namespace kb::cuda {
namespace {

using Ins = std::vector<const Buffer*>;

cublasHandle_t handle() {
  static cublasHandle_t h = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) h = nullptr;
  });
  check(h != nullptr, Status::device, "cuda: cublasCreate failed");
  cublasSetStream(h, stream());
  return h;
}

void check_blas(cublasStatus_t s) {
  check(s == CUBLAS_STATUS_SUCCESS, Status::device, "cuda: cuBLAS error ", int(s));
}

using Gemm = GemmDims;

template <class T>
__global__ void zero_kernel(T* o, int64_t n) {
  KB_GRID_LOOP(i, n)
  o[i] = T(0);
}

template <class T>
void gemm(const Gemm& g, const T* a, const T* b, T* c) {
  const compute_t<T> one = 1, zero = 0;
  cublasOperation_t opb = g.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opa = g.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  if constexpr (std::is_same_v<T, half>) {
    // float16 storage, float accumulation (as the CPU computes float16 in float).
    check_blas(cublasGemmStridedBatchedEx(
        handle(), opb, opa, int(g.n), int(g.m), int(g.k), &one, b, CUDA_R_16F, int(g.b_cols),
        g.b_rows * g.b_cols, a, CUDA_R_16F, int(g.a_cols), g.a_rows * g.a_cols, &zero, c,
        CUDA_R_16F, int(g.n), g.m * g.n, int(g.batch), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  } else if constexpr (std::is_same_v<T, float>) {
    check_blas(cublasSgemmStridedBatched(handle(), opb, opa, int(g.n), int(g.m), int(g.k), &one, b,
                                         int(g.b_cols), g.b_rows * g.b_cols, a, int(g.a_cols),
                                         g.a_rows * g.a_cols, &zero, c, int(g.n), g.m * g.n,
                                         int(g.batch)));
  } else {
    check_blas(cublasDgemmStridedBatched(handle(), opb, opa, int(g.n), int(g.m), int(g.k), &one, b,
                                         int(g.b_cols), g.b_rows * g.b_cols, a, int(g.a_cols),
                                         g.a_rows * g.a_cols, &zero, c, int(g.n), g.m * g.n,
                                         int(g.batch)));
  }
}

Kernel make_matmul(const KernelArgs& k) {
  Gemm g = gemm_dims(k.in[0].shape.dims, k.in[1].shape.dims, k.node.attrs.i("transpose_a") != 0,
                     k.node.attrs.i("transpose_b") != 0);
  return dispatch_dtype(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    if constexpr (!is_float_v<T>) {
      return Kernel{};
    } else {
      return [g](const Ins& in, Buffer& out) {
        int64_t n = out.numel();
        if (n == 0) return;
        if (g.k == 0) {
          zero_kernel<<<blocks_for(n), 256, 0, stream()>>>(out.as<T>(), n);
          after_launch("matmul");
          return;
        }
        gemm<T>(g, in[0]->as<T>(), in[1]->as<T>(), out.as<T>());
      };
    }
  });
}
Registrar reg_matmul("MatMul", make_matmul);

}  // namespace
}  // namespace kb::cuda
