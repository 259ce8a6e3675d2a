// Batched matrix multiplication through a real GEMM: oneDNN's sgemm for float32 (it picks
// AVX-512 / AVX2 kernels at run time, while this library is compiled for the baseline ISA, where
// Eigen reached 5-13% of the fp32 peak) or oneDNN's matmul primitive for the moderate sizes where
// it is faster, Eigen for float64, oneDNN's bf16 matmul for bfloat16 where the CPU has bf16
// arithmetic, sgemm on widened copies for float16 and the other bfloat16 products, a plain loop
// for the rest. FusedMatMul adds a bias per column and a relu (oneDNN post-ops on the primitive,
// one pass after the GEMM otherwise).
#include <Eigen/Core>
#include <cstring>

#include "core/backend/kernel.h"
#include "core/kernel_plans/layout.h"
#include "core/cpu/dnnl_cache.h"
#include "core/cpu/epilogue.h"
#include "core/cpu/loops.h"
#include "core/cpu/widen.h"
#include "core/graph/dispatch.h"
#include "core/util/error.h"

namespace kb::cpu {
namespace {

using MatMulDims = GemmDims;

template <class T>
void gemm_eigen(const MatMulDims& d, const T* a, const T* b, T* c) {
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  SerialScope serial(d.m * d.n * d.k < kSerialWork);  // per product: small ones on one thread
  for (int64_t i = 0; i < d.batch; ++i) {
    Eigen::Map<const Mat> A(a + i * d.a_rows * d.a_cols, d.a_rows, d.a_cols);
    Eigen::Map<const Mat> B(b + i * d.b_rows * d.b_cols, d.b_rows, d.b_cols);
    Eigen::Map<Mat> C(c + i * d.m * d.n, d.m, d.n);
    if (!d.ta && !d.tb)
      C.noalias() = A * B;
    else if (d.ta && !d.tb)
      C.noalias() = A.transpose() * B;
    else if (!d.ta && d.tb)
      C.noalias() = A * B.transpose();
    else
      C.noalias() = A.transpose() * B.transpose();
  }
}

void gemm_dnnl(const MatMulDims& d, const float* a, const float* b, float* c) {
  SerialScope serial(d.m * d.n * d.k < kSerialWork);
  for (int64_t i = 0; i < d.batch; ++i)
    dnnl_util::sgemm(d.ta ? 'T' : 'N', d.tb ? 'T' : 'N', d.m, d.n, d.k, a + i * d.a_rows * d.a_cols,
                     d.a_cols, b + i * d.b_rows * d.b_cols, d.b_cols, c + i * d.m * d.n, d.n,
                     "dot");
}

template <class T>
void gemm_plain(const MatMulDims& d, const T* a, const T* b, T* c) {
  using C = compute_t<T>;
  using Acc = std::conditional_t<std::is_integral_v<C>, int64_t, double>;
  for (int64_t bi = 0; bi < d.batch; ++bi) {
    const T* A = a + bi * d.a_rows * d.a_cols;
    const T* B = b + bi * d.b_rows * d.b_cols;
    T* O = c + bi * d.m * d.n;
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) {
        Acc s = 0;
        for (int64_t p = 0; p < d.k; ++p) {
          C x = C(d.ta ? A[p * d.a_cols + i] : A[i * d.a_cols + p]);
          C y = C(d.tb ? B[j * d.b_cols + p] : B[p * d.b_cols + j]);
          s += Acc(x) * Acc(y);
        }
        O[i * d.n + j] = T(C(s));
      }
  }
}

namespace du = dnnl_util;

// oneDNN's matmul primitive (brgemm kernels) against its sgemm on this machine's AVX-512 cores,
// two threads: 0.86-0.95 of sgemm's time for the MLP and LSTM products (128x784x512,
// 128x512x512, 64x256x256, their transposed gradients) and 512^3, but 1.12-1.17 for 1024^3 and
// 2048^3 and 1.1-1.2 for results 10 columns wide. Batched products stay with sgemm.
bool prefer_primitive(const MatMulDims& d) {
  return d.batch == 1 && d.n >= 64 && d.m * d.n * d.k <= (int64_t(1) << 27);
}

// The primitive for float32 (`bf16` false, single products) or bfloat16 (batched ones too, each
// product at its own offset: oneDNN's 3-D matmul), accumulating in float32 either way.
std::shared_ptr<const du::PrimSpec> matmul_spec(const MatMulDims& d, Epilogue e, bool bf16) {
  std::string key = du::Key("matmul")
                        .add(d.batch)
                        .add(d.m)
                        .add(d.k)
                        .add(d.n)
                        .add(int64_t(d.ta))
                        .add(int64_t(d.tb))
                        .add(int64_t(e.bias))
                        .add(int64_t(e.relu))
                        .add(int64_t(bf16))
                        .str();
  return du::cached<du::PrimSpec>(key, [&] {
    using namespace dnnl;
    using tag = memory::format_tag;
    auto t = du::dnnl_type(bf16);
    bool b3 = d.batch > 1;
    auto dims = [&](int64_t r, int64_t c, int64_t batch) {
      return b3 ? memory::dims{batch, r, c} : memory::dims{r, c};
    };
    auto layout = [&](bool transposed) {
      return b3 ? (transposed ? tag::acb : tag::abc) : (transposed ? tag::ba : tag::ab);
    };
    memory::desc a(dims(d.m, d.k, d.batch), t, layout(d.ta));
    memory::desc b(dims(d.k, d.n, d.batch), t, layout(d.tb));
    memory::desc bias(dims(1, d.n, 1), t, layout(false));  // one row for every product
    memory::desc c(dims(d.m, d.n, d.batch), t, layout(false));
    primitive_attr attr;
    attr.set_scratchpad_mode(scratchpad_mode::user);
    if (e.relu) {
      post_ops ops;
      ops.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
      attr.set_post_ops(ops);
    }
    auto md = e.bias ? matmul::desc(a, b, bias, c) : matmul::desc(a, b, c);
    matmul::primitive_desc pd(md, attr, du::engine());
    auto spec = std::make_shared<du::PrimSpec>();
    spec->prim = matmul(pd);
    spec->args = {du::ArgSpec(DNNL_ARG_SRC, false, a, pd.src_desc()),
                  du::ArgSpec(DNNL_ARG_WEIGHTS, false, b, pd.weights_desc())};
    if (e.bias) spec->args.push_back(du::ArgSpec(DNNL_ARG_BIAS, false, bias, pd.bias_desc()));
    spec->args.push_back(du::ArgSpec(DNNL_ARG_DST, true, c, pd.dst_desc()));
    spec->scratchpad = pd.scratchpad_desc();
    spec->impl = pd.impl_info_str();
    return spec;
  });
}

// The primitive's kernel, or an empty one where oneDNN declines the problem (or has no fast
// kernel for bfloat16 on this CPU).
Kernel primitive_kernel(const MatMulDims& d, Epilogue e, bool bf16 = false) {
  int64_t macs = d.batch * d.m * d.n * d.k;
  std::shared_ptr<const du::PrimSpec> spec;
  try {
    SerialScope serial(macs < kSerialWork);  // its thread count is fixed when it is made
    spec = matmul_spec(d, e, bf16);
  } catch (const dnnl::error&) {
    return {};
  }
  if (bf16 && spec->impl.rfind("ref", 0) == 0) return {};
  auto runner = std::make_shared<du::Runner>(spec, macs);
  return [runner, e](const std::vector<const Buffer*>& in, Buffer& out) {
    if (e.bias)
      runner->run({in[0]->data(), in[1]->data(), in[2]->data(), out.data()});
    else
      runner->run({in[0]->data(), in[1]->data(), out.data()});
  };
}

Kernel matmul_kernel(const KernelArgs& k, Epilogue e) {
  MatMulDims d =
      gemm_dims(k.in[0].shape.dims, k.in[1].shape.dims, k.node.attrs.i(attr::transpose_a) != 0,
                k.node.attrs.i(attr::transpose_b) != 0);
  bool empty = d.k == 0 || d.m == 0 || d.n == 0 || d.batch == 0;
  if (k.out.dtype == DType::bf16 && !empty && du::native_bf16())
    if (Kernel pk = primitive_kernel(d, e, true)) return pk;
  if (is_narrow_float(k.out.dtype))  // reads a, b and the bias
    return widened(k, 3, [e](const KernelArgs& k32) { return matmul_kernel(k32, e); });
  if (k.out.dtype == DType::f32 && !empty && prefer_primitive(d))
    if (Kernel pk = primitive_kernel(d, e)) return pk;
  return dispatch_dtype(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    return [d, e](const std::vector<const Buffer*>& in, Buffer& out) {
      // An empty result needs no product (and sgemm refuses some of them: (0, 2^31) x (2^31, 0)).
      if (out.numel() == 0) return;
      if (d.k == 0)
        std::memset(out.data(), 0, out.nbytes());
      else if constexpr (std::is_same_v<T, float>)
        gemm_dnnl(d, in[0]->as<T>(), in[1]->as<T>(), out.as<T>());
      else if constexpr (std::is_same_v<T, double>)
        gemm_eigen<T>(d, in[0]->as<T>(), in[1]->as<T>(), out.as<T>());
      else
        gemm_plain<T>(d, in[0]->as<T>(), in[1]->as<T>(), out.as<T>());
      if (e.bias || e.relu)
        apply_epilogue(out.as<T>(), d.batch * d.m * d.n, d.n, 1, e.bias ? in[2]->as<T>() : nullptr,
                       e.relu);
    };
  });
}

Kernel make_matmul(const KernelArgs& k) { return matmul_kernel(k, {}); }

// FusedMatMul(a, b[, bias]), attributes transpose_a, transpose_b, relu.
Kernel make_fused_matmul(const KernelArgs& k) {
  return matmul_kernel(k, {k.in.size() == 3, k.node.attrs.i(attr::relu, 0) != 0});
}

KernelRegistrar kr_matmul("cpu", ops::MatMul, make_matmul);
KernelRegistrar kr_fused_matmul("cpu", ops::FusedMatMul, make_fused_matmul);

}  // namespace
}  // namespace kb::cpu
