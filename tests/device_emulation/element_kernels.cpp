#include "element_kernels.h"

#include <algorithm>
#include <cstring>

#include "core/kernel_plans/layout.h"
#include "core/kernel_plans/pool_problem.h"
#include "core/ops/conv_ops.h"
#include "core/kernel_plans/ctc_batch.h"
#include "core/kernel_plans/fused_program.h"
#include "core/kernel_plans/resize_geom.h"
#include "core/kernel_plans/axis_scans.h"
#include "core/graph/dispatch.h"
#include "core/kernel_plans/epilogue_value.h"
#include "core/ops/modes.h"

namespace kb::emulation {
namespace {

using Ins = std::vector<const Buffer*>;

// As core/cuda/pool.cu.
Kernel pool_kernel(const KernelArgs& k, PoolKernel which) {
  PoolProblem p = pool_problem(k, which);
  PoolWindows g = p.windows();
  bool avg = p.avg();
  return dispatch_float<Kernel>(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using C = compute_t<T>;
    return [g, avg, which](const Ins& in, Buffer& out) {
      T* o = out.as<T>();
      for (int64_t e = 0; e < out.numel(); ++e) {
        if (which == PoolKernel::forward)
          o[e] = pool_forward_at<C, pool_acc_t<T>>(g, avg, in[0]->as<T>(), e);
        else if (which == PoolKernel::backward)
          o[e] = pool_backward_at<C>(g, avg, in[0]->as<T>(), in[1]->as<T>(), e);
        else
          o[e] = max_pool_grad_grad_at<C>(g, in[0]->as<T>(), in[1]->as<T>(), e);
      }
    };
  });
}

// As core/cuda/image.cu.
Kernel resize_kernel(const KernelArgs& k, bool adjoint) {
  ResizeGeom g = resize_geom(k.node.attrs, k.in[0].shape.dims, k.out.shape.dims, adjoint);
  return dispatch_non_bool<Kernel>(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    return [g](const Ins& in, Buffer& out) {
      T* o = out.as<T>();
      for (int64_t e = 0; e < out.numel(); ++e)
        o[e] = resize_at<resize_acc_t<T>, compute_t<T>>(g, in[0]->as<T>(), e);
    };
  });
}

// As core/cuda/fused_elementwise.cu, declining the same programs.
template <class T>
Kernel fused_typed(const KernelArgs& k) {
  FusedProgram p;
  if (!make_fused_program(k, p)) return Kernel{};
  return [p](const Ins& in, Buffer& out) {
    FusedOperands o;
    for (size_t i = 0; i < in.size(); ++i) o.in[i] = in[i]->data();
    T* r = out.as<T>();
    for (int64_t e = 0; e < out.numel(); ++e) r[e] = fused_element<T>(p, o, e);
  };
}

Kernel fused_kernel(const KernelArgs& k) {
  return dispatch_float<Kernel>(k.out.dtype, [&](auto z) { return fused_typed<decltype(z)>(k); });
}

// As core/cuda/ctc.cu: labels checked and packed on the host, then the rows and the recursions'
// cells over a chunk's scratch, in the GPU's order of kernels. Chunks hold two entries at most,
// so that the tests' batches run in several chunks.
constexpr size_t kCtcScratchBytes = size_t(1) << 20;

template <bool Grad>
Kernel ctc_kernel(const KernelArgs& k) {
  const Dims& d = k.in[0].shape.dims;
  CtcProblem p{d[0], d[1], d[2], k.in[1].shape.dims[1]};
  auto typed = [p](auto zero) -> Kernel {
    using T = decltype(zero);
    return [p](const Ins& in, Buffer& out) {
      std::vector<int32_t> packed =
          ctc_pack_labels(p, in[1]->as<int32_t>(), in[2]->as<int32_t>(), in[3]->as<int32_t>());
      CtcTable all = ctc_table(p, packed.data());
      int64_t per_chunk = std::min<int64_t>(2, all.entries_within(kCtcScratchBytes, Grad));
      std::vector<double> mem(all.chunk(0, per_chunk).scratch_size(Grad));
      T* o = out.as<T>();
      for (int64_t first = 0; first < p.batch; first += per_chunk) {
        CtcTable q = all.chunk(first, std::min(per_chunk, p.batch - first));
        CtcScratch s = q.scratch(mem.data(), Grad);
        for (int64_t r = 0; r < q.rows(); ++r) ctc_log_softmax_at(q, s, in[0]->as<T>(), r);
        for (int64_t b = first; b < first + q.count; ++b) {
          CtcEntry e = q.entry(s, b);
          for (int64_t t = 0; t < e.steps; ++t)
            for (int64_t u = 0; u < e.u_len; ++u) e.a(t, u) = ctc_alpha_at(e, t, u);
        }
        if (!Grad) {
          for (int64_t b = first; b < first + q.count; ++b)
            o[b] = T(-ctc_log_likelihood(q.entry(s, b)));
          continue;
        }
        for (int64_t b = first; b < first + q.count; ++b) {
          CtcEntry e = q.entry(s, b);
          for (int64_t t = e.steps - 1; t >= 0; --t)
            for (int64_t u = 0; u < e.u_len; ++u) e.b(t, u) = ctc_beta_at(e, t, u);
        }
        for (int64_t r = 0; r < q.rows(); ++r) ctc_grad_at(q, s, o, r);
      }
    };
  };
  return k.in[0].dtype == DType::f32 ? typed(float{}) : typed(double{});
}

// As core/cuda/indexing.cu: a line scanned per output, or for long rows the warp's 32 lane
// candidates combined in its order of shuffles (a lane whose partner lies past the warp keeps its
// own candidate).
Kernel arg_reduce_kernel(const KernelArgs& k) {
  const AxisScan scan = arg_reduce_scan(k);
  const AxisView v = scan.v;
  const bool is_max = scan.first_mode;
  return dispatch_non_bool<Kernel>(k.in[0].dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    using C = compute_t<T>;
    return [v, is_max](const Ins& in, Buffer& out) {
      const T* x = in[0]->as<T>();
      int64_t* o = out.as<int64_t>();
      for (int64_t t = 0; t < v.outer * v.inner; ++t) {
        const T* p = x + v.line_start(t);
        if (v.inner != 1 || v.n < kArgWarpRowLength) {
          o[t] = arg_scan<C>(p, v.n, v.inner, is_max);
          continue;
        }
        std::vector<ArgCandidate<C>> lanes;
        for (int lane = 0; lane < kArgLanes; ++lane)
          lanes.push_back(arg_lane<C>(p, v.n, lane, kArgLanes, is_max));
        for (int offset = kArgLanes / 2; offset > 0; offset >>= 1) {
          std::vector<ArgCandidate<C>> next = lanes;
          for (int lane = 0; lane + offset < kArgLanes; ++lane)
            if (arg_prefer(lanes[lane], lanes[lane + offset], is_max))
              next[lane] = lanes[lane + offset];
          lanes = next;
        }
        o[t] = arg_row_result<C>(p, lanes[0]);
      }
    };
  });
}

// As core/cuda/indexing.cu's scan kernel: a line per output position across the axis.
Kernel cumulative_kernel(const KernelArgs& k) {
  const AxisScan scan = cumulative_scan(k);
  const AxisView v = scan.v;
  const bool is_sum = scan.first_mode;
  return dispatch_non_bool<Kernel>(k.in[0].dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    return [v, is_sum](const Ins& in, Buffer& out) {
      for (int64_t t = 0; t < v.outer * v.inner; ++t) {
        int64_t base = v.line_start(t);
        cumulative_line<compute_t<T>>(in[0]->as<T>() + base, out.as<T>() + base, v.n, v.inner,
                                      is_sum);
      }
    };
  });
}

// As core/cuda/conv.cu's FusedConv where cuDNN's fused call is not taken: the convolution (the
// CPU's), then the epilogue kernel's function over every element.
Kernel fused_conv_kernel(const KernelArgs& k, KernelFactory cpu_conv) {
  Kernel conv = cpu_conv ? cpu_conv(k) : Kernel{};  // reads x and the kernel only
  if (!conv) return Kernel{};
  ChannelPlacement c =
      channel_placement(ConvGeom::from(k.node.attrs).channels_first, k.out.shape.dims);
  bool relu = k.node.attrs.i(attr::relu, 0) != 0;
  return dispatch_float<Kernel>(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    return [conv, c, relu](const Ins& in, Buffer& out) {
      conv(in, out);
      const T* bias = in.size() == 3 ? in[2]->as<T>() : nullptr;
      T* y = out.as<T>();
      for (int64_t p = 0; p < out.numel(); ++p)
        y[p] = T(epilogue_value(compute_t<T>(y[p]), bias, p, c.channels, c.stride, relu));
    };
  });
}

}  // namespace

std::optional<Kernel> element_kernel(const char* op, const KernelArgs& args,
                                     KernelFactory (*cpu)(const char* name)) {
  if (std::strcmp(op, "FusedConv") == 0) return fused_conv_kernel(args, cpu("Conv"));
  if (std::strcmp(op, "Pool") == 0) return pool_kernel(args, PoolKernel::forward);
  if (std::strcmp(op, "PoolBackward") == 0) return pool_kernel(args, PoolKernel::backward);
  if (std::strcmp(op, "MaxPoolGradGrad") == 0) return pool_kernel(args, PoolKernel::max_grad_grad);
  if (std::strcmp(op, "FusedElementwise") == 0) return fused_kernel(args);
  if (std::strcmp(op, "Resize") == 0) return resize_kernel(args, false);
  if (std::strcmp(op, "ResizeGrad") == 0) return resize_kernel(args, true);
  if (std::strcmp(op, "CtcLoss") == 0) return ctc_kernel<false>(args);
  if (std::strcmp(op, "CtcLossGrad") == 0) return ctc_kernel<true>(args);
  if (std::strcmp(op, "ArgReduce") == 0) return arg_reduce_kernel(args);
  if (std::strcmp(op, "Cumulative") == 0) return cumulative_kernel(args);
  if (std::optional<Kernel> strided = strided_kernel(op, args)) return strided;
  if (std::optional<Kernel> reduce = device_reduce_kernel(op, args)) return reduce;
  return batch_norm_kernel(op, args);
}

}  // namespace kb::emulation
