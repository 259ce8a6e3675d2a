// CPU kernels of Pool, PoolBackward and MaxPoolGradGrad. float32 pooling and its backward pass run
// through oneDNN (pooling_forward / pooling_backward, with max pooling's workspace recomputed by a
// forward_training pass inside the backward kernel) except max pooling with channels last (and
// its backward pass over windows that do not overlap), direct loops; bfloat16 runs oneDNN's bf16
// kernels where the CPU has bf16 arithmetic, float16 and the other bfloat16 problems the float32
// kernels widened (core/cpu/widen.h); float64,
// MaxPoolGradGrad and any problem oneDNN declines run through reference loops over the per-element
// functions of core/kernel_plans/pool_windows.h (the CUDA kernels' too). Max takes the
// first maximum of a window and ignores padded cells; avg divides by the number of real cells.
#include <cstring>
#include <limits>
#include <vector>

#include "core/backend/kernel.h"
#include "core/cpu/dnnl_cache.h"
#include "core/cpu/loops.h"
#include "core/cpu/row_kernels.h"
#include "core/cpu/widen.h"
#include "core/ops/conv_ops.h"
#include "core/graph/dispatch.h"
#include "core/kernel_plans/pool_problem.h"
#include "core/kernel_plans/pool_windows.h"

namespace kb::cpu {
namespace {

using dnnl::memory;
namespace du = dnnl_util;
using A3 = int64_t[3];

// The windows (spatial dimensions right-aligned into three) plus what oneDNN's descriptors need.
struct Geo : PoolWindows {
  PoolGeom pg;
  size_t nsp = 0;
  int64_t pa[3] = {0, 0, 0};
};

Geo make_geo(const PoolProblem& p) {
  Geo g;
  static_cast<PoolWindows&>(g) = p.windows();
  const PoolGeom& pg = p.geom;
  g.pg = pg;
  g.nsp = pg.nsp();
  for (size_t i = 0; i < g.nsp; ++i) g.pa[3 - g.nsp + i] = pg.pad_after[i];
  return g;
}

// The reference loops: the per-element functions of core/kernel_plans/pool_windows.h over every
// element, in parallel.
template <class F>
void for_elements(int64_t n, int64_t per_element, F&& f) {
  parallel_for(
      n,
      [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) f(i);
      },
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(per_element, 1)));
}

int64_t window_size(const Geo& g) { return g.w[0] * g.w[1] * g.w[2]; }

template <class T>
void ref_pool(const Geo& g, const T* x, T* y) {
  using C = compute_t<T>;
  bool avg = g.pg.mode == PoolMode::avg;
  for_elements(g.N * g.yn, window_size(g),
               [&](int64_t e) { y[e] = pool_forward_at<C, pool_acc_t<T>>(g, avg, x, e); });
}

template <class T>
void ref_pool_backward(const Geo& g, const T* dy, const T* x, T* dx) {
  bool avg = g.pg.mode == PoolMode::avg;
  int64_t reads = window_size(g) * (avg ? 1 : window_size(g));
  for_elements(g.N * g.xn, reads,
               [&](int64_t e) { dx[e] = pool_backward_at<compute_t<T>>(g, avg, dy, x, e); });
}

// out[o] = gx at the cell that max pooling of x selects in window o.
template <class T>
void ref_max_pool_grad_grad(const Geo& g, const T* gx, const T* x, T* out) {
  for_elements(g.N * g.yn, window_size(g),
               [&](int64_t e) { out[e] = max_pool_grad_grad_at<compute_t<T>>(g, gx, x, e); });
}

// Max pooling with channels last, float32: direct loops over rows of windows, each window's
// channels a contiguous row (core/cpu/row_kernels.h), in place of oneDNN's (a fifth of the time
// of a small CNN's pooling, where oneDNN's own per-call cost dominates). The backward pass needs
// windows that do not overlap (stride >= window in every dimension: the usual 2x2 with stride 2),
// so that each cell of dx is written once; oneDNN's backward pass needs the forward pass's
// workspace, which the graph does not keep (recomputing it cost twice the traffic).
bool direct_max_fits(const Geo& g, bool backward) {
  // Channels last only: with channels first a window's channels lie a plane apart, and oneDNN's
  // plane-wise loops win.
  if (g.pg.mode != PoolMode::max || g.xc != 1) return false;
  for (size_t i = 0; i < 3; ++i)
    if (backward && g.s[i] < g.w[i]) return false;
  return true;
}

// f(x_offset, cells, count, windows, y_offset) for every run of windows along dimension 2 that
// share their cells' offsets (all of their cells inside; the windows clipped by padding one by
// one), rows of windows (n, o0, o1) in parallel. x_offset is that of the image; cells (count of
// them, perhaps none) are those of the run's first window in it, the next window's `step` further.
template <class F>
void for_window_runs(const Geo& g, F&& f) {
  int64_t rows = g.N * g.out[0] * g.out[1];
  int64_t per_row = std::max<int64_t>(1, g.out[2] * g.w[0] * g.w[1] * g.w[2] * g.C);
  // Interior windows: dimension 2 fully inside [0, in[2]).
  int64_t lo = 0, hi = g.out[2];
  while (lo < hi && lo * g.s[2] - g.pb[2] < 0) ++lo;
  while (hi > lo && (hi - 1) * g.s[2] - g.pb[2] + g.w[2] > g.in[2]) --hi;
  parallel_for(
      rows,
      [&](int64_t b, int64_t e) {
        // The cells' offsets (kept: no allocation per call).
        static thread_local std::vector<int64_t> cell;
        for (int64_t row = b; row < e; ++row) {
          int64_t n = row / (g.out[0] * g.out[1]);
          int64_t o0 = row / g.out[1] % g.out[0], o1 = row % g.out[1];
          auto run = [&](int64_t o2, int64_t o2_end) {
            int64_t window[3] = {o0, o1, o2};
            cell.clear();
            g.for_cells(window, [&](int64_t i) { cell.push_back(i); });
            f(n * g.xn, cell.data(), int64_t(cell.size()), o2_end - o2,
              n * g.yn + o0 * g.ys[0] + o1 * g.ys[1] + o2 * g.ys[2]);
          };
          for (int64_t o2 = 0; o2 < lo; ++o2) run(o2, o2 + 1);
          if (lo < hi) run(lo, hi);
          for (int64_t o2 = hi; o2 < g.out[2]; ++o2) run(o2, o2 + 1);
        }
      },
      std::max<int64_t>(1, kParallelGrain / per_row));
}

void direct_max(const Geo& g, const float* x, float* y) {
  for_window_runs(g, [&](int64_t base, const int64_t* cell, int64_t k, int64_t windows, int64_t o) {
    if (k == 0)  // a window of padding alone: 0, as ref_pool
      std::memset(y + o, 0, size_t(windows * g.C) * sizeof(float));
    else
      max_windows_forward_f32(x + base, cell, k, windows, g.s[2] * g.xs[2], y + o, g.C);
  });
}

void direct_max_backward(const Geo& g, const float* dy, const float* x, float* dx) {
  // Cells outside every window (a remainder row, strides above the window) get 0 first.
  bool tiled = true;
  for (size_t i = 0; i < 3; ++i)
    tiled = tiled && g.pb[i] == 0 && g.s[i] == g.w[i] && g.out[i] * g.s[i] == g.in[i];
  if (!tiled) std::memset(dx, 0, size_t(g.N * g.xn) * sizeof(float));
  for_window_runs(g, [&](int64_t base, const int64_t* cell, int64_t k, int64_t windows, int64_t o) {
    if (k > 0)
      max_windows_backward_f32(x + base, dx + base, cell, k, windows, g.s[2] * g.xs[2], dy + o,
                               g.C);
  });
}

// ---- oneDNN (float32, bfloat16) ---------------------------------------------------------------
// x (input side) or y.
memory::desc data_md(const Geo& g, bool input, bool bf16) {
  const int64_t* sp = input ? g.in : g.out;
  const int64_t* ss = input ? g.xs : g.ys;
  memory::dims dims{g.N, g.C}, strides{input ? g.xn : g.yn, input ? g.xc : g.yc};
  for (size_t i = 3 - g.nsp; i < 3; ++i) {
    dims.push_back(sp[i]);
    strides.push_back(ss[i]);
  }
  return memory::desc(dims, du::dnnl_type(bf16), strides);
}

memory::dims spatial(const A3& a, size_t nsp) { return memory::dims(a + (3 - nsp), a + 3); }
std::vector<int64_t> vec(const A3& a) { return {a[0], a[1], a[2]}; }

std::string spec_key(const char* kind, const Geo& g, bool bf16) {
  du::Key k(kind);
  k.add(int64_t(g.nsp)).add(int64_t(g.pg.channels_first)).add(int64_t(g.pg.mode));
  k.add(int64_t(bf16));
  k.add(g.N).add(g.C).add(vec(g.in)).add(vec(g.out)).add(vec(g.w)).add(vec(g.s));
  k.add(vec(g.pb)).add(vec(g.pa));
  return k.str();
}

dnnl::algorithm algo(const Geo& g) {
  return g.pg.mode == PoolMode::max ? dnnl::algorithm::pooling_max
                                    : dnnl::algorithm::pooling_avg_exclude_padding;
}

dnnl::pooling_forward::desc fwd_desc(const Geo& g, dnnl::prop_kind pk, bool bf16) {
  return dnnl::pooling_forward::desc(pk, algo(g), data_md(g, true, bf16), data_md(g, false, bf16),
                                     spatial(g.s, g.nsp), spatial(g.w, g.nsp), spatial(g.pb, g.nsp),
                                     spatial(g.pa, g.nsp));
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// kind "fwd": [src -> dst]; "fwd_train" (max): [src -> dst, workspace];
// "bwd": [diff_dst (, workspace) -> diff_src].
std::shared_ptr<const du::PrimSpec> make_spec(const std::string& kind, const Geo& g, bool bf16) {
  using namespace dnnl;
  using du::ArgSpec;
  engine& eng = du::engine();
  auto spec = std::make_shared<du::PrimSpec>();
  memory::desc xu = data_md(g, true, bf16), yu = data_md(g, false, bf16);
  if (kind == "fwd") {
    pooling_forward::primitive_desc pd(fwd_desc(g, prop_kind::forward_inference, bf16),
                                       user_scratchpad(), eng);
    spec->prim = pooling_forward(pd);
    spec->args = {ArgSpec(DNNL_ARG_SRC, false, xu, pd.src_desc()),
                  ArgSpec(DNNL_ARG_DST, true, yu, pd.dst_desc())};
    spec->scratchpad = pd.scratchpad_desc();
    spec->impl = pd.impl_info_str();
    return spec;
  }
  pooling_forward::primitive_desc hint(fwd_desc(g, prop_kind::forward_training, bf16),
                                       user_scratchpad(), eng);
  if (kind == "fwd_train") {
    spec->prim = pooling_forward(hint);
    spec->args = {ArgSpec(DNNL_ARG_SRC, false, xu, hint.src_desc()),
                  ArgSpec(DNNL_ARG_DST, true, yu, hint.dst_desc()),
                  ArgSpec(DNNL_ARG_WORKSPACE, true, hint.workspace_desc(), hint.workspace_desc())};
    spec->scratchpad = hint.scratchpad_desc();
    spec->impl = hint.impl_info_str();
    return spec;
  }
  pooling_backward::desc d(algo(g), xu, yu, spatial(g.s, g.nsp), spatial(g.w, g.nsp),
                           spatial(g.pb, g.nsp), spatial(g.pa, g.nsp));
  pooling_backward::primitive_desc pd(d, user_scratchpad(), eng, hint);
  spec->prim = pooling_backward(pd);
  spec->args = {ArgSpec(DNNL_ARG_DIFF_DST, false, yu, pd.diff_dst_desc())};
  if (g.pg.mode == PoolMode::max)
    spec->args.push_back(
        ArgSpec(DNNL_ARG_WORKSPACE, false, hint.workspace_desc(), hint.workspace_desc()));
  spec->args.push_back(ArgSpec(DNNL_ARG_DIFF_SRC, true, xu, pd.diff_src_desc()));
  spec->scratchpad = pd.scratchpad_desc();
  spec->impl = pd.impl_info_str();
  return spec;
}

std::shared_ptr<const du::PrimSpec> spec_for(const std::string& kind, const Geo& g, bool bf16) {
  return du::cached<du::PrimSpec>(spec_key(("pool_" + kind).c_str(), g, bf16),
                                  [&] { return make_spec(kind, g, bf16); });
}

// Elements visited, the measure of a pooling's work; a primitive's thread count is fixed when it is
// made, so small ones are made (and run) for one thread.
int64_t pool_work(const Geo& g) {
  return g.N * g.C * g.out[0] * g.out[1] * g.out[2] * g.w[0] * g.w[1] * g.w[2];
}

// bf16: on oneDNN's bfloat16 kernels (declined, as an empty Kernel, where only a reference one
// takes the problem).
Kernel dnnl_pool(const Geo& g, bool bf16 = false) {
  try {
    SerialScope serial(pool_work(g) < kSerialWork);
    auto spec = spec_for("fwd", g, bf16);
    if (bf16 && spec->impl.rfind("ref", 0) == 0) return {};
    auto runner = std::make_shared<du::Runner>(spec, pool_work(g));
    return [runner](const std::vector<const Buffer*>& in, Buffer& out) {
      runner->run({in[0]->data(), out.data()});
    };
  } catch (const dnnl::error&) {
    return {};
  }
}

Kernel dnnl_pool_backward(const Geo& g, bool bf16 = false) {
  try {
    SerialScope serial(pool_work(g) < kSerialWork);
    auto bwd_spec = spec_for("bwd", g, bf16);
    if (bf16 && bwd_spec->impl.rfind("ref", 0) == 0) return {};
    auto bwd = std::make_shared<du::Runner>(bwd_spec, pool_work(g));
    if (g.pg.mode == PoolMode::avg)
      return [bwd](const std::vector<const Buffer*>& in, Buffer& out) {
        bwd->run({in[0]->data(), out.data()});
      };
    // Max: recompute the forward pass to get the workspace (where each maximum is).
    auto fwd = std::make_shared<du::Runner>(spec_for("fwd_train", g, bf16), pool_work(g));
    auto y = du::aligned_buffer(fwd->spec().args[1].user.get_size());
    auto ws = du::aligned_buffer(fwd->spec().args[2].user.get_size());
    return [bwd, fwd, y, ws](const std::vector<const Buffer*>& in, Buffer& out) {
      fwd->run({in[1]->data(), y.get(), ws.get()});
      bwd->run({in[0]->data(), ws.get(), out.data()});
    };
  } catch (const dnnl::error&) {
    return {};
  }
}

template <PoolKernel W>
Kernel make_pool_kernel(const KernelArgs& ka) {
  PoolProblem pp = pool_problem(ka, W);
  const PoolGeom& pg = pp.geom;
  if (numel(pp.x) == 0 || numel(pp.y) == 0)
    return [](const std::vector<const Buffer*>&, Buffer& out) {
      if (out.nbytes()) std::memset(out.data(), 0, out.nbytes());
    };
  Geo g = make_geo(pp);
  auto f32_kernel = [&]() -> Kernel {
    if constexpr (W == PoolKernel::forward) {
      if (direct_max_fits(g, false))
        return [g](const std::vector<const Buffer*>& in, Buffer& out) {
          direct_max(g, in[0]->as<float>(), out.as<float>());
        };
      return dnnl_pool(g);
    }
    if constexpr (W == PoolKernel::backward) {
      if (direct_max_fits(g, true))
        return [g](const std::vector<const Buffer*>& in, Buffer& out) {
          direct_max_backward(g, in[0]->as<float>(), in[1]->as<float>(), out.as<float>());
        };
      return dnnl_pool_backward(g);
    }
    return {};
  };
  if (ka.out.dtype == DType::f32)
    if (Kernel k = f32_kernel()) return k;
  if (ka.out.dtype == DType::bf16 && du::native_bf16()) {
    Kernel k;
    if constexpr (W == PoolKernel::forward) k = dnnl_pool(g, true);
    if constexpr (W == PoolKernel::backward) k = dnnl_pool_backward(g, true);
    if (k) return k;
  }
  // 16-bit types on the float32 kernels: a window's max, its gradient's routing and an average
  // rounded once are the reference loops' values (which ran a bfloat16 CNN's pooling 100 times
  // slower).
  if (is_narrow_float(ka.out.dtype))
    if (Kernel k = widened(ka, ka.in.size(), [&](const KernelArgs&) { return f32_kernel(); }))
      return k;
  return dispatch_dtype(ka.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    if constexpr (!is_float_v<T>) {
      fail(Status::dtype, pg.who, ": floating input required");
    } else {
      return [g](const std::vector<const Buffer*>& in, Buffer& out) {
        if constexpr (W == PoolKernel::forward)
          ref_pool<T>(g, in[0]->as<T>(), out.as<T>());
        else if constexpr (W == PoolKernel::backward)
          ref_pool_backward<T>(g, in[0]->as<T>(), in[1]->as<T>(), out.as<T>());
        else
          ref_max_pool_grad_grad<T>(g, in[0]->as<T>(), in[1]->as<T>(), out.as<T>());
      };
    }
  });
}

KernelRegistrar k1("cpu", ops::Pool, make_pool_kernel<PoolKernel::forward>);
KernelRegistrar k2("cpu", ops::PoolBackward, make_pool_kernel<PoolKernel::backward>);
KernelRegistrar k3("cpu", ops::MaxPoolGradGrad, make_pool_kernel<PoolKernel::max_grad_grad>);

}  // namespace
}  // namespace kb::cpu
