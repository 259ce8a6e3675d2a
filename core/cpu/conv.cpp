// CPU kernels of Conv, ConvBackwardData and ConvBackwardFilter. float32 runs through oneDNN
// (convolution_forward / _backward_data / _backward_weights, created at plan time and cached by
// geometry) except small problems with channels last, which run as matrix products
// (core/cpu/conv_im2col.h); bfloat16 runs through oneDNN's bf16 kernels where the CPU has bf16
// arithmetic, float16 and the other bfloat16 problems through oneDNN widened to float32
// (core/cpu/widen.h); float64 (oneDNN has no f64) runs through plain reference loops, which are
// also the fallback when oneDNN declines a problem.
#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/backend/kernel.h"
#include "core/cpu/conv_geo.h"
#include "core/cpu/conv_im2col.h"
#include "core/cpu/dnnl_cache.h"
#include "core/cpu/epilogue.h"
#include "core/cpu/widen.h"
#include "core/cpu/loops.h"
#include "core/ops/conv_ops.h"
#include "core/graph/dispatch.h"

namespace kb::cpu {
namespace {

using dnnl::memory;
namespace du = dnnl_util;

template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// ---- reference kernels (any floating type) ----------------------------------------------------
// y[n, o, oc] = sum_{z, ic} x[n, o*s - pb + z*d, g*ICg + ic] * K[z, g*ICg + ic, m], oc = g*OCg + m
template <class T>
void ref_forward(const ConvGeo& g, const T* x, const T* k, T* y) {
  using Acc = acc_t<T>;
  int64_t positions = g.N * g.out[0] * g.out[1] * g.out[2];
  int64_t work = std::max<int64_t>(1, g.OC * g.kvol * g.ICg);
  parallel_for(
      positions,
      [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
          int64_t t = p;
          int64_t o2 = t % g.out[2];
          t /= g.out[2];
          int64_t o1 = t % g.out[1];
          t /= g.out[1];
          int64_t o0 = t % g.out[0], n = t / g.out[0];
          T* yp = y + n * g.yn + o0 * g.ys[0] + o1 * g.ys[1] + o2 * g.ys[2];
          for (int64_t oc = 0; oc < g.OC; ++oc) {
            int64_t gi = oc / g.OCg, m = oc % g.OCg;
            Acc acc = 0;
            for (int64_t z0 = 0; z0 < g.k[0]; ++z0) {
              int64_t i0 = o0 * g.s[0] - g.pb[0] + z0 * g.d[0];
              if (i0 < 0 || i0 >= g.in[0]) continue;
              for (int64_t z1 = 0; z1 < g.k[1]; ++z1) {
                int64_t i1 = o1 * g.s[1] - g.pb[1] + z1 * g.d[1];
                if (i1 < 0 || i1 >= g.in[1]) continue;
                for (int64_t z2 = 0; z2 < g.k[2]; ++z2) {
                  int64_t i2 = o2 * g.s[2] - g.pb[2] + z2 * g.d[2];
                  if (i2 < 0 || i2 >= g.in[2]) continue;
                  const T* xp =
                      x + n * g.xn + i0 * g.xs[0] + i1 * g.xs[1] + i2 * g.xs[2] + gi * g.ICg * g.xc;
                  const T* kp = k + g.kz(z0, z1, z2) * g.C * g.OCg + gi * g.ICg * g.OCg + m;
                  for (int64_t ic = 0; ic < g.ICg; ++ic)
                    acc += Acc(compute_t<T>(xp[ic * g.xc])) * Acc(compute_t<T>(kp[ic * g.OCg]));
                }
              }
            }
            yp[oc * g.yc] = T(compute_t<T>(acc));
          }
        }
      },
      std::max<int64_t>(1, kParallelGrain / work));
}

// dx[n, i, c] = sum over (o, z) with o*s - pb + z*d = i of dy[n, o, g*OCg + m] * K[z, c, m]
template <class T>
void ref_backward_data(const ConvGeo& g, const T* dy, const T* k, T* dx) {
  using Acc = acc_t<T>;
  int64_t positions = g.N * g.in[0] * g.in[1] * g.in[2];
  int64_t work = std::max<int64_t>(1, g.C * g.kvol * g.OCg);
  parallel_for(
      positions,
      [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
          int64_t t = p;
          int64_t i2 = t % g.in[2];
          t /= g.in[2];
          int64_t i1 = t % g.in[1];
          t /= g.in[1];
          int64_t i0 = t % g.in[0], n = t / g.in[0];
          T* dxp = dx + n * g.xn + i0 * g.xs[0] + i1 * g.xs[1] + i2 * g.xs[2];
          for (int64_t c = 0; c < g.C; ++c) {
            int64_t gi = c / g.ICg;
            Acc acc = 0;
            for (int64_t z0 = 0; z0 < g.k[0]; ++z0) {
              int64_t t0 = i0 + g.pb[0] - z0 * g.d[0];
              if (t0 < 0 || t0 % g.s[0] != 0 || t0 / g.s[0] >= g.out[0]) continue;
              for (int64_t z1 = 0; z1 < g.k[1]; ++z1) {
                int64_t t1 = i1 + g.pb[1] - z1 * g.d[1];
                if (t1 < 0 || t1 % g.s[1] != 0 || t1 / g.s[1] >= g.out[1]) continue;
                for (int64_t z2 = 0; z2 < g.k[2]; ++z2) {
                  int64_t t2 = i2 + g.pb[2] - z2 * g.d[2];
                  if (t2 < 0 || t2 % g.s[2] != 0 || t2 / g.s[2] >= g.out[2]) continue;
                  const T* dyp = dy + n * g.yn + (t0 / g.s[0]) * g.ys[0] + (t1 / g.s[1]) * g.ys[1] +
                                 (t2 / g.s[2]) * g.ys[2] + gi * g.OCg * g.yc;
                  const T* kp = k + g.kz(z0, z1, z2) * g.C * g.OCg + c * g.OCg;
                  for (int64_t m = 0; m < g.OCg; ++m)
                    acc += Acc(compute_t<T>(dyp[m * g.yc])) * Acc(compute_t<T>(kp[m]));
                }
              }
            }
            dxp[c * g.xc] = T(compute_t<T>(acc));
          }
        }
      },
      std::max<int64_t>(1, kParallelGrain / work));
}

// dK[z, c, m] = sum over (n, o) of x[n, o*s - pb + z*d, c] * dy[n, o, g*OCg + m]
template <class T>
void ref_backward_filter(const ConvGeo& g, const T* x, const T* dy, T* dk) {
  using Acc = acc_t<T>;
  int64_t entries = g.kvol * g.C;
  int64_t work = std::max<int64_t>(1, g.OCg * g.N * g.out[0] * g.out[1] * g.out[2]);
  parallel_for(
      entries,
      [&](int64_t b, int64_t e) {
        for (int64_t q = b; q < e; ++q) {
          int64_t zl = q / g.C, c = q % g.C, gi = c / g.ICg;
          int64_t z2 = zl % g.k[2], z1 = (zl / g.k[2]) % g.k[1], z0 = zl / (g.k[1] * g.k[2]);
          for (int64_t m = 0; m < g.OCg; ++m) {
            Acc acc = 0;
            int64_t oc = gi * g.OCg + m;
            for (int64_t n = 0; n < g.N; ++n)
              for (int64_t o0 = 0; o0 < g.out[0]; ++o0) {
                int64_t i0 = o0 * g.s[0] - g.pb[0] + z0 * g.d[0];
                if (i0 < 0 || i0 >= g.in[0]) continue;
                for (int64_t o1 = 0; o1 < g.out[1]; ++o1) {
                  int64_t i1 = o1 * g.s[1] - g.pb[1] + z1 * g.d[1];
                  if (i1 < 0 || i1 >= g.in[1]) continue;
                  for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
                    int64_t i2 = o2 * g.s[2] - g.pb[2] + z2 * g.d[2];
                    if (i2 < 0 || i2 >= g.in[2]) continue;
                    acc +=
                        Acc(compute_t<T>(
                            x[n * g.xn + i0 * g.xs[0] + i1 * g.xs[1] + i2 * g.xs[2] + c * g.xc])) *
                        Acc(compute_t<T>(
                            dy[n * g.yn + o0 * g.ys[0] + o1 * g.ys[1] + o2 * g.ys[2] + oc * g.yc]));
                  }
                }
              }
            dk[zl * g.C * g.OCg + c * g.OCg + m] = T(compute_t<T>(acc));
          }
        }
      },
      std::max<int64_t>(1, kParallelGrain / work));
}

// ---- oneDNN (float32, bfloat16) --------------------------------------------------------------
// How the primitive sees the activations: in the caller's plain layout, or in the layout oneDNN
// prefers (reordered in and out). Weights always go through oneDNN's preferred layout (they are
// small).
enum class Policy { plain, blocked };

memory::desc data_md(const ConvGeo& g, int64_t C, const A3& sp, memory::data_type t) {
  memory::dims dims{g.N, C}, strides;
  int64_t sn, sc;
  A3 ss;
  data_strides(g.cg.channels_first, C, sp, sn, sc, ss);
  strides = {sn, sc};
  for (size_t i = 3 - g.nsp; i < 3; ++i) {
    dims.push_back(sp[i]);
    strides.push_back(ss[i]);
  }
  return memory::desc(dims, t, strides);
}

// Weights cross to and from oneDNN in its plain (O, I, spatial...) order, or (G, OCg, ICg,
// spatial...) with several groups: oneDNN's reorders from our (spatial..., C, OCg) layout straight
// into its blocked weight formats were measured at 1-2 ms for a 3x3x64x64 kernel with several
// threads (a few microseconds from this plain order), so the kernels transpose the small weight
// tensor themselves (transpose_weights).
memory::desc weights_md(const ConvGeo& g, memory::data_type t) {
  memory::dims dims = g.G == 1 ? memory::dims{g.OC, g.C} : memory::dims{g.G, g.OCg, g.ICg};
  for (size_t i = 3 - g.nsp; i < 3; ++i) dims.push_back(g.k[i]);
  memory::dims strides(dims.size());
  int64_t st = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = st;
    st *= dims[i];
  }
  return memory::desc(dims, t, strides);
}

// plain[((gi*OCg + m)*ICg + i)*kvol + z] <-> ours[z*C*OCg + c*OCg + m], c = gi*ICg + i.
template <bool ToPlain, class T>
void transpose_weights(const ConvGeo& g, const T* src, T* dst) {
  parallel_for(
      g.C,
      [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c) {
          int64_t gi = c / g.ICg, i = c % g.ICg;
          for (int64_t m = 0; m < g.OCg; ++m) {
            int64_t p = ((gi * g.OCg + m) * g.ICg + i) * g.kvol;
            for (int64_t z = 0; z < g.kvol; ++z) {
              int64_t o = z * g.C * g.OCg + c * g.OCg + m;
              if constexpr (ToPlain)
                dst[p + z] = src[o];
              else
                dst[o] = src[p + z];
            }
          }
        }
      },
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, g.OCg * g.kvol)));
}

memory::desc any_like(const memory::desc& md) {
  return memory::desc(md.dims(), md.data_type(), memory::format_tag::any);
}

memory::dims spatial(const A3& a, size_t nsp, int64_t minus = 0) {
  memory::dims r;
  for (size_t i = 3 - nsp; i < 3; ++i) r.push_back(a[i] - minus);
  return r;
}

std::vector<int64_t> vec(const A3& a) { return {a[0], a[1], a[2]}; }

std::string spec_key(ConvPass w, const ConvGeo& g, Policy p, Epilogue e, bool bf16) {
  static const char* names[] = {"conv_fwd", "conv_bwd_data", "conv_bwd_filter"};
  du::Key k(names[int(w)]);
  k.add(int64_t(g.nsp)).add(int64_t(g.cg.channels_first)).add(int64_t(p));
  k.add(int64_t(e.bias)).add(int64_t(e.relu)).add(int64_t(bf16));
  if (e.bounded()) {  // the bound's bits: exactly the primitive's
    uint32_t bits = 0;
    std::memcpy(&bits, &e.relu_max, sizeof bits);
    k.add(int64_t(bits));
  }
  k.add(g.N).add(g.C).add(g.OC).add(g.G).add(vec(g.in)).add(vec(g.out)).add(vec(g.k));
  k.add(vec(g.s)).add(vec(g.d)).add(vec(g.pb)).add(vec(g.pa));
  return k.str();
}

std::shared_ptr<const du::PrimSpec> make_spec(ConvPass w, const ConvGeo& g, Policy p, Epilogue e,
                                              bool bf16) {
  using namespace dnnl;
  using du::ArgSpec;
  memory::data_type t = du::dnnl_type(bf16);
  memory::desc xu = data_md(g, g.C, g.in, t), yu = data_md(g, g.OC, g.out, t);
  memory::desc wu = weights_md(g, t);
  memory::desc xa = p == Policy::plain ? xu : any_like(xu);
  memory::desc ya = p == Policy::plain ? yu : any_like(yu);
  memory::desc wa = any_like(wu);
  memory::dims st = spatial(g.s, g.nsp), dil = spatial(g.d, g.nsp, 1);
  memory::dims pl = spatial(g.pb, g.nsp), pr = spatial(g.pa, g.nsp);
  primitive_attr attr;
  attr.set_scratchpad_mode(scratchpad_mode::user);
  engine& eng = du::engine();
  auto spec = std::make_shared<du::PrimSpec>();
  if (w == ConvPass::forward) {
    if (e.relu) {
      post_ops ops;
      if (e.bounded())  // min(max(v, 0), relu_max): relu then the bound, as the unfused steps
        ops.append_eltwise(1.f, algorithm::eltwise_clip, 0.f, e.relu_max);
      else
        ops.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
      attr.set_post_ops(ops);
    }
    memory::desc bu({g.OC}, t, memory::format_tag::a);
    auto d =
        e.bias
            ? convolution_forward::desc(prop_kind::forward_inference, algorithm::convolution_direct,
                                        xa, wa, bu, ya, st, dil, pl, pr)
            : convolution_forward::desc(prop_kind::forward_inference, algorithm::convolution_direct,
                                        xa, wa, ya, st, dil, pl, pr);
    convolution_forward::primitive_desc pd(d, attr, eng);
    spec->prim = convolution_forward(pd);
    spec->args = {ArgSpec(DNNL_ARG_SRC, false, xu, pd.src_desc()),
                  ArgSpec(DNNL_ARG_WEIGHTS, false, wu, pd.weights_desc())};
    if (e.bias) spec->args.push_back(ArgSpec(DNNL_ARG_BIAS, false, bu, pd.bias_desc()));
    spec->args.push_back(ArgSpec(DNNL_ARG_DST, true, yu, pd.dst_desc()));
    spec->scratchpad = pd.scratchpad_desc();
    spec->impl = pd.impl_info_str();
    return spec;
  }
  convolution_forward::desc fd(prop_kind::forward_training, algorithm::convolution_direct, xa, wa,
                               ya, st, dil, pl, pr);
  convolution_forward::primitive_desc hint(fd, eng);
  if (w == ConvPass::backward_data) {
    convolution_backward_data::desc d(algorithm::convolution_direct, xa, wa, ya, st, dil, pl, pr);
    convolution_backward_data::primitive_desc pd(d, attr, eng, hint);
    spec->prim = convolution_backward_data(pd);
    spec->args = {ArgSpec(DNNL_ARG_DIFF_DST, false, yu, pd.diff_dst_desc()),
                  ArgSpec(DNNL_ARG_WEIGHTS, false, wu, pd.weights_desc()),
                  ArgSpec(DNNL_ARG_DIFF_SRC, true, xu, pd.diff_src_desc())};
    spec->scratchpad = pd.scratchpad_desc();
    spec->impl = pd.impl_info_str();
    return spec;
  }
  convolution_backward_weights::desc d(algorithm::convolution_direct, xa, wa, ya, st, dil, pl, pr);
  convolution_backward_weights::primitive_desc pd(d, attr, eng, hint);
  spec->prim = convolution_backward_weights(pd);
  spec->args = {ArgSpec(DNNL_ARG_SRC, false, xu, pd.src_desc()),
                ArgSpec(DNNL_ARG_DIFF_DST, false, yu, pd.diff_dst_desc()),
                ArgSpec(DNNL_ARG_DIFF_WEIGHTS, true, wu, pd.diff_weights_desc())};
  spec->scratchpad = pd.scratchpad_desc();
  spec->impl = pd.impl_info_str();
  return spec;
}

bool slow_impl(const std::string& impl) {
  return impl.rfind("ref", 0) == 0 || impl.find("gemm") != std::string::npos;
}

// channels_last: oneDNN's fast kernels read and write plain nhwc directly, so no reorders (unless
// only a slow implementation takes that layout); channels_first: oneDNN chooses the layout and
// the activations are reordered in and out (its nchw kernels are im2col + GEMM, 2-3 times slower
// than the reorders plus a fast kernel on W4).
std::shared_ptr<const du::PrimSpec> choose_spec(ConvPass w, const ConvGeo& g, Epilogue e,
                                                bool bf16) {
  auto get = [&](Policy p) {
    return du::cached<du::PrimSpec>(spec_key(w, g, p, e, bf16),
                                    [&] { return make_spec(w, g, p, e, bf16); });
  };
  if (g.cg.channels_first) return get(Policy::blocked);
  auto plain = get(Policy::plain);
  if (!slow_impl(plain->impl)) return plain;
  try {
    auto blocked = get(Policy::blocked);
    return slow_impl(blocked->impl) ? plain : blocked;
  } catch (const dnnl::error&) {
    return plain;
  }
}

bool same_storage(const std::shared_ptr<void>& a, const std::shared_ptr<void>& b) {
  return a.get() == b.get() && !a.owner_before(b) && !b.owner_before(a);
}

// Whether the kernel's weights (input 1) are stable (KernelArgs::stable).
bool stable_weights(const KernelArgs& ka) {
  return ka.stable && ka.stable->size() > 1 && (*ka.stable)[1];
}

// An empty Kernel when oneDNN declines the problem (or, for bfloat16, has only a slow kernel for
// it). With `stable` weights, the forward kernels transpose and reorder them on the first run and
// again only when their storage changes (which they hold meanwhile): a ResNet50 predict at batch 1
// reordered 100 MB of weights per call. T: float, or bfloat16 on oneDNN's bf16 kernels.
template <class T = float>
Kernel dnnl_kernel(ConvPass w, const ConvGeo& g, Epilogue e = {}, bool stable = false) {
  constexpr bool bf16 = std::is_same_v<T, bfloat16>;
  int64_t macs = g.N * g.out[0] * g.out[1] * g.out[2] * g.OC * g.kvol * g.ICg;
  std::shared_ptr<const du::PrimSpec> spec;
  try {
    // A primitive's thread count is fixed when it is made: small ones are made for one thread.
    SerialScope serial(macs < kSerialWork);
    spec = choose_spec(w, g, e, bf16);
  } catch (const dnnl::error&) {
    return {};
  }
  if (bf16 && slow_impl(spec->impl)) return {};
  auto runner = std::make_shared<du::Runner>(spec, macs);
  auto plain = du::aligned_buffer(size_t(g.kvol * g.C * g.OCg) * sizeof(T));
  // The weights' storage that `plain` and the runner's reordered copy were made from.
  auto kept = stable ? std::make_shared<std::shared_ptr<void>>() : nullptr;
  return [runner, plain, w, g, e, kept](const std::vector<const Buffer*>& in, Buffer& out) {
    T* pw = static_cast<T*>(plain.get());
    if (w == ConvPass::backward_filter) {
      runner->run({in[0]->data(), in[1]->data(), pw});
      transpose_weights<false>(g, static_cast<const T*>(pw), out.as<T>());
      return;
    }
    const Buffer& k = *in[1];
    const bool fresh = !kept || k.external || !same_storage(*kept, k.storage);
    if (fresh) {
      if (kept) kept->reset();  // until the copies are made again
      transpose_weights<true>(g, k.as<T>(), pw);
    }
    if (e.bias)
      runner->run({in[0]->data(), pw, in[2]->data(), out.data()}, fresh ? -1 : 1);
    else
      runner->run({in[0]->data(), pw, out.data()}, fresh ? -1 : 1);
    if (fresh && kept && !k.external) *kept = k.storage;
  };
}

template <ConvPass W>
Kernel make_conv_kernel(const KernelArgs& ka) {
  const Dims& a = ka.in[0].shape.dims;
  const Dims& b = ka.in[1].shape.dims;
  const Dims& o = ka.out.shape.dims;
  const Dims& x = W == ConvPass::backward_data ? o : a;
  const Dims& k = W == ConvPass::backward_filter ? o : b;
  const Dims& y = W == ConvPass::forward ? o : W == ConvPass::backward_data ? a : b;
  ConvGeom cg = ConvGeom::from(ka.node.attrs).resolved(x, k);
  if (numel(x) == 0 || numel(k) == 0 || numel(y) == 0)
    return [](const std::vector<const Buffer*>&, Buffer& out) {
      if (out.nbytes()) std::memset(out.data(), 0, out.nbytes());
    };
  ConvGeo g = make_conv_geo(cg, x, k, y);
  if (ka.out.dtype == DType::f32) {
    if (im2col_fits(g)) return im2col_kernel(W, g);
    if (Kernel dk = dnnl_kernel(W, g, {}, W == ConvPass::forward && stable_weights(ka))) return dk;
  }
  if (ka.out.dtype == DType::bf16 && du::native_bf16())
    if (Kernel dk = dnnl_kernel<bfloat16>(W, g, {}, W == ConvPass::forward && stable_weights(ka)))
      return dk;
  if (is_narrow_float(ka.out.dtype))  // the primitive reads the first two inputs
    if (Kernel dk = widened(ka, 2, [&](const KernelArgs&) { return dnnl_kernel(W, g); })) return dk;
  return dispatch_dtype(ka.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    if constexpr (!is_float_v<T>) {
      fail(Status::dtype, cg.who, ": floating input required");
    } else {
      return [g](const std::vector<const Buffer*>& in, Buffer& out) {
        const T* p0 = in[0]->as<T>();
        const T* p1 = in[1]->as<T>();
        if constexpr (W == ConvPass::forward)
          ref_forward<T>(g, p0, p1, out.as<T>());
        else if constexpr (W == ConvPass::backward_data)
          ref_backward_data<T>(g, p0, p1, out.as<T>());
        else
          ref_backward_filter<T>(g, p0, p1, out.as<T>());
      };
    }
  });
}

// FusedConv(x, kernel[, bias]), attributes relu and relu_max: one oneDNN convolution with the bias
// and a relu (or clip) post-op; the reference loops followed by the epilogue where oneDNN
// declines or for other types.
template <class T>
void ref_epilogue(const ConvGeo& g, const T* bias, Epilogue e, T* y) {
  apply_epilogue(y, g.N * g.OC * g.out[0] * g.out[1] * g.out[2], g.OC, g.yc, bias, e.relu,
                 e.relu_max);
}

Kernel make_fused_conv_kernel(const KernelArgs& ka) {
  const Dims& x = ka.in[0].shape.dims;
  const Dims& k = ka.in[1].shape.dims;
  const Dims& y = ka.out.shape.dims;
  ConvGeom cg = ConvGeom::from(ka.node.attrs).resolved(x, k);
  Epilogue e{ka.in.size() == 3, ka.node.attrs.i(attr::relu, 0) != 0};
  if (ka.node.attrs.has(attr::relu_max)) e.relu_max = float(ka.node.attrs.f(attr::relu_max));
  if (numel(x) == 0 || numel(k) == 0 || numel(y) == 0) {
    // No products: the result is relu(bias) (or 0) everywhere.
    ConvGeo g = make_conv_geo(cg, x, k, y);
    return dispatch_dtype(ka.out.dtype, [&](auto z) -> Kernel {
      using T = decltype(z);
      return [g, e](const std::vector<const Buffer*>& in, Buffer& out) {
        if (out.nbytes()) std::memset(out.data(), 0, out.nbytes());
        if (e.bias && out.nbytes()) ref_epilogue<T>(g, in[2]->as<T>(), e, out.as<T>());
      };
    });
  }
  ConvGeo g = make_conv_geo(cg, x, k, y);
  if (ka.out.dtype == DType::f32) {
    if (im2col_fits(g)) return im2col_kernel(ConvPass::forward, g, e);
    if (Kernel dk = dnnl_kernel(ConvPass::forward, g, e, stable_weights(ka))) return dk;
  }
  if (ka.out.dtype == DType::bf16 && du::native_bf16())
    if (Kernel dk = dnnl_kernel<bfloat16>(ConvPass::forward, g, e, stable_weights(ka))) return dk;
  if (is_narrow_float(ka.out.dtype))  // the primitive reads x, the kernel and the bias
    if (Kernel dk =
            widened(ka, 3, [&](const KernelArgs&) { return dnnl_kernel(ConvPass::forward, g, e); }))
      return dk;
  return dispatch_dtype(ka.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    if constexpr (!is_float_v<T>) {
      fail(Status::dtype, cg.who, ": floating input required");
    } else {
      return [g, e](const std::vector<const Buffer*>& in, Buffer& out) {
        ref_forward<T>(g, in[0]->as<T>(), in[1]->as<T>(), out.as<T>());
        ref_epilogue<T>(g, e.bias ? in[2]->as<T>() : nullptr, e, out.as<T>());
      };
    }
  });
}

KernelRegistrar k1("cpu", ops::Conv, make_conv_kernel<ConvPass::forward>);
KernelRegistrar k4("cpu", ops::FusedConv, make_fused_conv_kernel);
KernelRegistrar k2("cpu", ops::ConvBackwardData, make_conv_kernel<ConvPass::backward_data>);
KernelRegistrar k3("cpu", ops::ConvBackwardFilter, make_conv_kernel<ConvPass::backward_filter>);

}  // namespace
}  // namespace kb::cpu
