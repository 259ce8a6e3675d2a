// CUDA MatMul through cuBLAS (strided batched GEMM, row-major by computing C^T = B^T A^T), and
// FusedMatMul (core/compile/fuse_epilogue.cpp: a 2-D product, a bias per column, relu) through
// cuBLASLt's epilogues: one launch for the product, the bias and relu.
#include <cublasLt.h>
#include <cublas_v2.h>

#include <limits>
#include <memory>
#include <mutex>

#include "core/kernel_plans/layout.h"
#include "core/cuda/common.cuh"
#include "core/cuda/epilogue.cuh"

namespace kb::cuda {
namespace {

using Ins = std::vector<const Buffer*>;

void check_blas(cublasStatus_t s) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  fail(s == CUBLAS_STATUS_ALLOC_FAILED ? Status::out_of_memory : Status::device,
       "cuda: cuBLAS: ", cublasGetStatusString(s));
}

// cuBLAS's workspace: a block of the caching allocator, kept for the process (cuBLAS would
// otherwise allocate its own, beyond the cache's reach). 32 MiB is what it takes on Hopper.
constexpr size_t kBlasWorkspace = size_t(32) << 20;

// Made once with its stream and workspace. The stream never changes, and setting it on every
// call would put cuBLAS's own workspace back each time (cublasSetStream does) while another host
// thread may be running a product on the handle.
cublasHandle_t handle() {
  return library_handle<cublasHandle_t>(
      [](cublasHandle_t* p) {
        if (cublasCreate(p) != CUBLAS_STATUS_SUCCESS) return false;
        // 16-bit products accumulate in float throughout: no split-K partial sums rounded to
        // 16 bits, which the CPU never does.
        if (cublasSetStream(*p, stream()) != CUBLAS_STATUS_SUCCESS ||
            cublasSetMathMode(*p, cublasMath_t(CUBLAS_DEFAULT_MATH |
                                               CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)) !=
                CUBLAS_STATUS_SUCCESS) {
          cublasDestroy(*p);
          return false;
        }
        // Without memory to spare, or when cuBLAS refuses it, cuBLAS keeps its own workspace.
        void* workspace = nullptr;
        try {
          workspace = scratch_alloc(kBlasWorkspace);
        } catch (const Error&) {
          return true;
        }
        if (cublasSetWorkspace(*p, workspace, kBlasWorkspace) != CUBLAS_STATUS_SUCCESS)
          scratch_free(workspace);
        return true;
      },
      "cublasCreate");
}

using Gemm = GemmDims;

template <class T>
void gemm(const Gemm& g, const T* a, const T* b, T* c) {
  const compute_t<T> one = 1, zero = 0;
  cublasOperation_t opb = g.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opa = g.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  if constexpr (is_narrow_float_v<T>) {
    // 16-bit storage, float accumulation (as the CPU computes float16 and bfloat16 in float).
    constexpr cudaDataType_t t = std::is_same_v<T, half> ? CUDA_R_16F : CUDA_R_16BF;
    check_blas(cublasGemmStridedBatchedEx(
        handle(), opb, opa, int(g.n), int(g.m), int(g.k), &one, b, t, int(g.b_cols),
        g.b_rows * g.b_cols, a, t, int(g.a_cols), g.a_rows * g.a_cols, &zero, c, t, int(g.n),
        g.m * g.n, int(g.batch), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
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

// out = op(in[0]) op(in[1]); zeros when the inner dimension is empty.
template <class T>
void product_into(const Gemm& g, const Ins& in, Buffer& out) {
  if (g.k == 0)
    zero_on_device(out);
  else
    gemm<T>(g, in[0]->as<T>(), in[1]->as<T>(), out.as<T>());
}

Kernel make_matmul(const KernelArgs& k) {
  Gemm g = gemm_dims(k.in[0].shape.dims, k.in[1].shape.dims, k.node.attrs.i(attr::transpose_a) != 0,
                     k.node.attrs.i(attr::transpose_b) != 0);
  return dispatch_float<Kernel>(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    return [g](const Ins& in, Buffer& out) {
      if (out.numel()) product_into<T>(g, in, out);
    };
  });
}
Registrar reg_matmul(ops::MatMul, make_matmul);

cublasLtHandle_t lt_handle() {
  return library_handle<cublasLtHandle_t>(
      [](cublasLtHandle_t* p) { return cublasLtCreate(p) == CUBLAS_STATUS_SUCCESS; },
      "cublasLtCreate");
}

// The cuBLASLt objects of one fused product, made at plan time. In column-major terms the
// product is D^T = op(B)^T op(A)^T (n x m), so the bias of each result column is cuBLASLt's bias
// of each row of D^T.
struct LtProduct {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
  bool found = false;
  std::mutex bias_mu;  // the bias pointer is an attribute of the shared descriptor

  ~LtProduct() {
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

constexpr uint32_t kLtAlignment = 16;
bool lt_aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kLtAlignment == 0; }

// Exact float32 arithmetic (no TF32), as cublasSgemm; false when cuBLASLt has no algorithm.
bool make_lt_product(const Gemm& g, bool bias, bool relu, LtProduct& p) {
  constexpr size_t kMaxWorkspace = size_t(32) << 20;
  if (cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS)
    return false;
  cublasOperation_t opb = g.tb ? CUBLAS_OP_T : CUBLAS_OP_N, opa = g.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = bias ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                                     : (relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
  cudaDataType_t bias_type = CUDA_R_32F;
  // The heuristics read the bias pointer's alignment (cublasLt.h): a stand-in aligned as a call's
  // bias must be, so the algorithm chosen serves every bias the call accepts (lt_aligned).
  const void* bias_probe = reinterpret_cast<const void*>(uintptr_t(kLtAlignment));
  cublasLtMatmulPreference_t pref = nullptr;
  bool ok = cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &opb, sizeof opb) ==
                CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &opa, sizeof opa) ==
                CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                           sizeof epilogue) == CUBLAS_STATUS_SUCCESS &&
            (!bias ||
             (cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                                             sizeof bias_type) == CUBLAS_STATUS_SUCCESS &&
              cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_probe,
                                             sizeof bias_probe) == CUBLAS_STATUS_SUCCESS)) &&
            cublasLtMatrixLayoutCreate(&p.a, CUDA_R_32F, uint64_t(g.b_cols), uint64_t(g.b_rows),
                                       g.b_cols) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatrixLayoutCreate(&p.b, CUDA_R_32F, uint64_t(g.a_cols), uint64_t(g.a_rows),
                                       g.a_cols) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatrixLayoutCreate(&p.d, CUDA_R_32F, uint64_t(g.n), uint64_t(g.m), g.n) ==
                CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &kMaxWorkspace,
                                                 sizeof kMaxWorkspace) == CUBLAS_STATUS_SUCCESS;
  // The heuristics assume 256-byte aligned operands unless told less; a call whose operands are
  // not kLtAlignment-aligned (views into other buffers) takes the cuBLAS path.
  for (auto which :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    ok = ok && cublasLtMatmulPreferenceSetAttribute(pref, which, &kLtAlignment,
                                                    sizeof kLtAlignment) == CUBLAS_STATUS_SUCCESS;
  cublasLtHandle_t lt = nullptr;
  try {
    if (ok) lt = lt_handle();
  } catch (const Error&) {
    ok = false;  // no cuBLASLt: the cuBLAS product and the epilogue kernel
  }
  if (ok) {
    cublasLtMatmulHeuristicResult_t result{};
    int count = 0;
    ok = cublasLtMatmulAlgoGetHeuristic(lt, p.op, p.a, p.b, p.d, p.d, pref, 1, &result, &count) ==
             CUBLAS_STATUS_SUCCESS &&
         count > 0 && result.state == CUBLAS_STATUS_SUCCESS;
    if (ok) {
      p.algo = result.algo;
      p.workspace = result.workspaceSize;
    }
  }
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  return p.found = ok;
}

// FusedMatMul(a, b[, bias]), attributes transpose_a, transpose_b, relu; float32 (the rewrite
// fuses float32 products only) and within cuBLAS's sizes (core/kernel_plans/cuda_ops.cpp).
Kernel make_fused_matmul(const KernelArgs& k) {
  Gemm g = gemm_dims(k.in[0].shape.dims, k.in[1].shape.dims, k.node.attrs.i(attr::transpose_a) != 0,
                     k.node.attrs.i(attr::transpose_b) != 0);
  bool bias = k.in.size() == 3, relu = k.node.attrs.i(attr::relu, 0) != 0;
  auto p = std::make_shared<LtProduct>();
  if (g.k > 0 && numel(k.out.shape.dims) > 0) make_lt_product(g, bias, relu, *p);
  return [g, bias, relu, p](const Ins& in, Buffer& out) {
    int64_t n = out.numel();
    if (n == 0) return;
    float* y = out.as<float>();
    const float* b = bias ? in[2]->as<float>() : nullptr;
    if (p->found && lt_aligned(in[0]->data()) && lt_aligned(in[1]->data()) && lt_aligned(y) &&
        (!b || lt_aligned(b))) {
      const float one = 1, zero = 0;
      auto ws = scratch(p->workspace);
      std::lock_guard<std::mutex> lock(p->bias_mu);
      if (bias)
        check_blas(
            cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &b, sizeof b));
      check_blas(cublasLtMatmul(lt_handle(), p->op, &one, in[1]->data(), p->a, in[0]->data(), p->b,
                                &zero, y, p->d, y, p->d, &p->algo, ws.get(), p->workspace,
                                stream()));
      return;
    }
    // The epilogue as its own kernel, after a cuBLAS product.
    product_into<float>(g, in, out);
    epilogue_on_device(y, b, n, g.n, 1, relu);
  };
}
Registrar reg_fused_matmul(ops::FusedMatMul, make_fused_matmul);

}  // namespace
}  // namespace kb::cuda
