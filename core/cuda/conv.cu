// CUDA convolutions through cuDNN: forward, backward-data and backward-filter as
// separate kernels, algorithms chosen once per shape at plan time (measured: cudnnFind), and the
// forward pass with its bias and relu (FusedConv). Keras keeps kernels as (spatial..., in,
// out/groups); cuDNN wants (out, spatial..., in/groups) (KRSC), so kernels are permuted on the way
// in and filter gradients on the way out. cuDNN pads symmetrically: the rest of an asymmetric
// padding ('same' with an odd remainder, causal) is made explicit, the input copied into a zeroed,
// larger scratch tensor (and the data gradient copied out of one). Max pooling's gradient is the
// plugin's own kernel (core/cuda/pool.cu): cuDNN does not say which of tied maxima it picks, and
// the CPU and MaxPoolGradGrad take the first. cuDNN's pooling is in core/cuda/pool.cu.
#include <cudnn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>

#include "core/cuda/common.cuh"
#include "core/cuda/cudnn.cuh"
#include "core/cuda/epilogue.cuh"
#include "core/ops/conv_ops.h"

namespace kb::cuda {
namespace {

using Ins = std::vector<const Buffer*>;

// Everything a convolution kernel needs, built at plan time.
struct ConvPlan {
  NdDesc x, y;
  std::vector<int> filter;                                // K, C/G, spatial... (logical order)
  cudnnTensorFormat_t filter_format = CUDNN_TENSOR_NHWC;  // KRSC memory; NCHW: KCRS
  std::vector<int> pad, stride, dilation;
  int groups = 1;
  Dims split_kernel;  // the Keras kernel (spatial..., C, K/G) as (spatial..., G, C/G, K/G)
  std::vector<int64_t> to_krsc, from_krsc;  // split_kernel <-> cuDNN's filter layout
  // Explicit padding: x (dims x_dims) lies in a zero tensor of dims padded_dims, at element
  // offset x_offset; to_padded / from_padded copy it in and out.
  bool padded = false;
  Dims x_dims, padded_dims;
  int64_t x_offset = 0;
  StridedMap to_padded, from_padded;
};

bool make_conv_plan(const ConvGeom& g0, const Dims& x, const Dims& k, const Dims& y, ConvPlan& p) {
  if (!fits_descriptor(x) || !fits_descriptor(k) || !fits_descriptor(y)) return false;
  ConvGeom g = g0.resolved(x, k);
  size_t nsp = g.nsp();
  p.x_dims = p.padded_dims = x;
  Dims extra_before(x.size(), 0);
  for (size_t i = 0; i < nsp; ++i) {
    int64_t sym = std::min(g.pad_before[i], g.pad_after[i]);
    size_t ax = spatial_axis(g.channels_first, i);
    extra_before[ax] = g.pad_before[i] - sym;
    p.padded_dims[ax] += g.pad_before[i] + g.pad_after[i] - 2 * sym;
    g.pad_before[i] = g.pad_after[i] = sym;
    p.padded = p.padded || p.padded_dims[ax] != x[ax];
  }
  if (!fits_descriptor(p.padded_dims)) return false;
  if (p.padded) {
    Placement pl = placement(x, p.padded_dims, extra_before);
    p.x_offset = pl.offset;
    p.to_padded = copy_map(x, pl.outer_strides, pl.inner_strides);
    p.from_padded = copy_map(x, pl.inner_strides, pl.outer_strides);
  }
  p.x = nd_desc(p.padded_dims, g.channels_first);
  p.y = nd_desc(y, g.channels_first);
  // cuDNN's grouped filter is (K, C/G, spatial...) with output channel gi * K/G + m reading
  // input channels gi * C/G + i; the Keras kernel (spatial..., C, K/G) is seen as
  // (spatial..., G, C/G, K/G), the same memory, and permuted to (G, K/G, spatial..., C/G) (KRSC)
  // or (G, K/G, C/G, spatial...) (KCRS).
  int64_t groups = g.groups, icg = k[nsp] / groups, ocg = k[nsp + 1];
  p.split_kernel.assign(k.begin(), k.begin() + int64_t(nsp));
  p.split_kernel.insert(p.split_kernel.end(), {groups, icg, ocg});
  p.filter = {int(groups * ocg), int(icg)};
  if (nsp == 1) p.filter.push_back(1);
  for (size_t i = 0; i < nsp; ++i) p.filter.push_back(int(k[i]));
  if (nsp == 1) {
    p.pad.push_back(0), p.stride.push_back(1), p.dilation.push_back(1);
  }
  for (size_t i = 0; i < nsp; ++i) {
    p.pad.push_back(int(g.pad_before[i]));
    p.stride.push_back(int(g.strides[i]));
    p.dilation.push_back(int(g.dilation[i]));
  }
  p.groups = int(groups);
  int64_t g_axis = int64_t(nsp), ic_axis = g_axis + 1, oc_axis = g_axis + 2;
  p.to_krsc = {g_axis, oc_axis};
  if (g.channels_first) {
    p.filter_format = CUDNN_TENSOR_NCHW;
    p.to_krsc.push_back(ic_axis);
    for (size_t i = 0; i < nsp; ++i) p.to_krsc.push_back(int64_t(i));
  } else {
    for (size_t i = 0; i < nsp; ++i) p.to_krsc.push_back(int64_t(i));
    p.to_krsc.push_back(ic_axis);
  }
  p.from_krsc.assign(p.to_krsc.size(), 0);
  for (size_t i = 0; i < p.to_krsc.size(); ++i) p.from_krsc[size_t(p.to_krsc[i])] = int64_t(i);
  return true;
}

struct FilterDesc {
  cudnnFilterDescriptor_t d = nullptr;
  FilterDesc(const std::vector<int>& dims, cudnnDataType_t t, cudnnTensorFormat_t f) {
    check_dnn(cudnnCreateFilterDescriptor(&d), "filter descriptor");
    check_dnn(cudnnSetFilterNdDescriptor(d, t, f, int(dims.size()), dims.data()),
              "filter descriptor");
  }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(d); }
};

struct ConvDesc {
  cudnnConvolutionDescriptor_t d = nullptr;
  ConvDesc(const ConvPlan& p, cudnnDataType_t t) {
    // float16 and bfloat16 data accumulate in float (tensor cores); float32 is exact float32
    // arithmetic (no TF32), so results match the CPU.
    bool half_data = t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16;
    check_dnn(cudnnCreateConvolutionDescriptor(&d), "convolution descriptor");
    check_dnn(cudnnSetConvolutionNdDescriptor(d, int(p.pad.size()), p.pad.data(), p.stride.data(),
                                              p.dilation.data(), CUDNN_CROSS_CORRELATION,
                                              half_data ? CUDNN_DATA_FLOAT : t),
              "convolution descriptor");
    check_dnn(cudnnSetConvolutionGroupCount(d, p.groups), "group count");
    check_dnn(cudnnSetConvolutionMathType(d, half_data ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH),
              "math type");
  }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(d); }
};

// The descriptors of one convolution, kept by the kernel for every call.
struct ConvState {
  ConvPlan p;
  std::unique_ptr<TensorDesc> x, y;
  std::unique_ptr<FilterDesc> w;
  std::unique_ptr<ConvDesc> conv;
  cudnnConvolutionFwdAlgo_t fwd{};
  cudnnConvolutionBwdDataAlgo_t bwd_data{};
  cudnnConvolutionBwdFilterAlgo_t bwd_filter{};
  size_t workspace = 0;
};

std::shared_ptr<ConvState> make_state(const ConvPlan& p, cudnnDataType_t t) {
  auto s = std::make_shared<ConvState>();
  s->p = p;
  s->x = std::make_unique<TensorDesc>(p.x, t);
  s->y = std::make_unique<TensorDesc>(p.y, t);
  s->w = std::make_unique<FilterDesc>(p.filter, t, p.filter_format);
  s->conv = std::make_unique<ConvDesc>(p, t);
  return s;
}

// A device buffer of dims d in scratch memory that `keep` holds.
Buffer scratch_buffer(DType t, const Dims& d, std::shared_ptr<void>& keep) {
  Buffer b(t, d);
  b.device = Device::cuda;
  keep = scratch(b.nbytes());
  b.storage = keep;
  return b;
}

// The dims of `d` permuted by perm.
Dims permuted_dims(const Dims& d, const std::vector<int64_t>& perm) {
  Dims r(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) r[i] = d[size_t(perm[i])];
  return r;
}

// A Keras kernel in cuDNN's filter layout, in scratch memory that `keep` holds.
Buffer filter_of(const ConvPlan& p, const Buffer& kernel, std::shared_ptr<void>& keep) {
  Buffer split = kernel;  // a view
  split.dims = p.split_kernel;
  Buffer t = scratch_buffer(kernel.dtype, permuted_dims(p.split_kernel, p.to_krsc), keep);
  transpose_on_device(split, t, p.to_krsc);
  return t;
}

// The data operand x as cuDNN sees it: x itself, or x inside its explicit padding.
const void* padded_input(const ConvPlan& p, const Buffer& x, std::shared_ptr<void>& keep) {
  if (!p.padded) return x.data();
  Buffer xp = scratch_buffer(x.dtype, p.padded_dims, keep);
  zero_on_device(xp);  // all-bits-zero is zero for every dtype
  strided_copy_on_device(x, 0, xp, p.x_offset, p.to_padded, numel(p.x_dims));
  return xp.data();
}

// Measuring the algorithms at plan time (cudnnFind) is on unless KB_CUDNN_FIND=0.
bool measure_algorithms() {
  static const bool on = [] {
    const char* e = std::getenv("KB_CUDNN_FIND");
    return !(e && std::string(e) == "0");
  }();
  return on;
}

// Algorithms needing more workspace than this are passed over (FFT ones can want gigabytes).
constexpr size_t kMaxWorkspace = size_t(1) << 30;

// cudnnFind into perf; measuring allocates outside the plugin's cache, so when device memory runs
// short (for the whole call or for some algorithms) the cache's idle blocks go back to CUDA and
// the measuring runs once more.
template <class Find, class Perf>
bool measure(Find& find, int max, int& found, Perf* perf) {
  for (int attempt = 0;; ++attempt) {
    found = 0;
    cudnnStatus_t st = find(max, &found, perf);
    auto allocation_failed = [](cudnnStatus_t e) {
      return e == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED ||
             e == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    };
    bool short_of_memory = allocation_failed(st);
    for (int i = 0; i < found; ++i) short_of_memory |= allocation_failed(perf[i].status);
    if (st != CUDNN_STATUS_SUCCESS || short_of_memory) cudaGetLastError();  // not the next launch's
    if (!short_of_memory || attempt == 1) return st == CUDNN_STATUS_SUCCESS;
    release_cached_memory();
  }
}

// The algorithm of one convolution pass, with its workspace size (use(algo) records both and
// returns the size query's status; the size goes to `workspace`). Measured: the fastest
// deterministic algorithm that ran (the results of a call do not depend on timing); else, or when
// measuring fails, the heuristics' first deterministic algorithm that supports the problem and
// runs (trial(): one call on scratch memory, since a suggestion can still be refused when
// called), then their first at all that runs. float32 and float64 take only algorithms without
// tensor-op math (TF32 would round float32's operands); 16-bit data runs with the math type an
// algorithm was measured or suggested with. False: none (the kernel is declined).
template <class Perf, class Find, class Heuristic, class Use, class Trial>
bool choose_algorithm(cudnnConvolutionDescriptor_t conv, bool half_data, size_t& workspace,
                      Find&& find, Heuristic&& heuristic, Use&& use, Trial&& trial) {
  constexpr int kMax = 16;
  Perf perf[kMax];
  int found = 0;
  auto first = [&](bool deterministic_only, bool measured) {
    for (int i = 0; i < found; ++i) {
      const Perf& a = perf[i];
      bool tensor_ops =
          a.mathType == CUDNN_TENSOR_OP_MATH || a.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
      if (a.status != CUDNN_STATUS_SUCCESS || (tensor_ops && !half_data) ||
          (deterministic_only && a.determinism != CUDNN_DETERMINISTIC))
        continue;
      if (half_data && cudnnSetConvolutionMathType(conv, a.mathType) != CUDNN_STATUS_SUCCESS)
        continue;
      if (use(a.algo, &workspace) == CUDNN_STATUS_SUCCESS && workspace <= kMaxWorkspace &&
          (measured || trial(workspace) == CUDNN_STATUS_SUCCESS))
        return true;
    }
    return false;
  };
  if (measure_algorithms() && measure(find, kMax, found, perf) && first(true, true)) return true;
  found = 0;
  if (heuristic(kMax, &found, perf) != CUDNN_STATUS_SUCCESS) return false;
  return first(true, false) || first(false, false);
}

// One convolution pass: its geometry and the dims of its data x, Keras kernel k and forward
// result y. which: 0 forward (x, k) -> y; 1 backward data (dy, k, x) -> dx; 2 backward filter
// (x, dy, k) -> dk.
struct ConvProblem {
  ConvGeom g;
  Dims x, k, y;
  int which = 0;
};

ConvProblem conv_problem(const KernelArgs& k, int which) {
  ConvProblem c;
  c.g = ConvGeom::from(k.node.attrs);
  c.x = which == 1 ? k.out.shape.dims : k.in[0].shape.dims;
  c.k = which == 2 ? k.out.shape.dims : k.in[1].shape.dims;
  c.y = which == 0 ? k.out.shape.dims : (which == 1 ? k.in[0].shape.dims : k.in[1].shape.dims);
  c.which = which;
  return c;
}

// The descriptors and algorithm of one convolution pass, or null where cuDNN has no algorithm.
template <class T>
std::shared_ptr<ConvState> conv_state(const ConvProblem& c) {
  const int which = c.which;
  ConvPlan p;
  if (!make_conv_plan(c.g, c.x, c.k, c.y, p)) return nullptr;
  auto s = make_state(p, dnn_type<T>());
  bool half_data = is_narrow_float_v<T>, chosen = false;
  // The trial calls' operands (contents ignored), made for the first one.
  const compute_t<T> one = 1, zero = 0;  // cuDNN scales 16-bit float data by floats
  std::shared_ptr<void> tx, tw, ty;
  int64_t y_numel = numel(Dims(p.y.dims.begin(), p.y.dims.end()));
  bool empty = numel(p.padded_dims) == 0 || numel(p.split_kernel) == 0 || y_numel == 0;
  // A trial without the memory for it refuses that algorithm only (one with a smaller workspace
  // may follow); a refused call's error is not the next launch's.
  auto trial = [&](size_t workspace, auto&& call) {
    if (empty) return CUDNN_STATUS_SUCCESS;
    cudnnStatus_t st = CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
    try {
      if (!tx) {
        tx = scratch(size_t(numel(p.padded_dims)) * sizeof(T));
        tw = scratch(size_t(numel(p.split_kernel)) * sizeof(T));
        ty = scratch(size_t(y_numel) * sizeof(T));
      }
      auto ws = scratch(workspace);
      st = call(ws.get(), workspace);
    } catch (const Error&) {
    }
    if (st != CUDNN_STATUS_SUCCESS) cudaGetLastError();
    return st;
  };
  if (which == 0) {
    chosen = choose_algorithm<cudnnConvolutionFwdAlgoPerf_t>(
        s->conv->d, half_data, s->workspace,
        [&](int n, int* found, cudnnConvolutionFwdAlgoPerf_t* perf) {
          return cudnnFindConvolutionForwardAlgorithm(handle(), s->x->d, s->w->d, s->conv->d,
                                                      s->y->d, n, found, perf);
        },
        [&](int n, int* found, cudnnConvolutionFwdAlgoPerf_t* perf) {
          return cudnnGetConvolutionForwardAlgorithm_v7(handle(), s->x->d, s->w->d, s->conv->d,
                                                        s->y->d, n, found, perf);
        },
        [&](cudnnConvolutionFwdAlgo_t a, size_t* workspace) {
          s->fwd = a;
          return cudnnGetConvolutionForwardWorkspaceSize(handle(), s->x->d, s->w->d, s->conv->d,
                                                         s->y->d, a, workspace);
        },
        [&](size_t workspace) {
          return trial(workspace, [&](void* ws, size_t n) {
            return cudnnConvolutionForward(handle(), &one, s->x->d, tx.get(), s->w->d, tw.get(),
                                           s->conv->d, s->fwd, ws, n, &zero, s->y->d, ty.get());
          });
        });
  } else if (which == 1) {
    chosen = choose_algorithm<cudnnConvolutionBwdDataAlgoPerf_t>(
        s->conv->d, half_data, s->workspace,
        [&](int n, int* found, cudnnConvolutionBwdDataAlgoPerf_t* perf) {
          return cudnnFindConvolutionBackwardDataAlgorithm(handle(), s->w->d, s->y->d, s->conv->d,
                                                           s->x->d, n, found, perf);
        },
        [&](int n, int* found, cudnnConvolutionBwdDataAlgoPerf_t* perf) {
          return cudnnGetConvolutionBackwardDataAlgorithm_v7(handle(), s->w->d, s->y->d, s->conv->d,
                                                             s->x->d, n, found, perf);
        },
        [&](cudnnConvolutionBwdDataAlgo_t a, size_t* workspace) {
          s->bwd_data = a;
          return cudnnGetConvolutionBackwardDataWorkspaceSize(handle(), s->w->d, s->y->d,
                                                              s->conv->d, s->x->d, a, workspace);
        },
        [&](size_t workspace) {
          return trial(workspace, [&](void* ws, size_t n) {
            return cudnnConvolutionBackwardData(handle(), &one, s->w->d, tw.get(), s->y->d,
                                                ty.get(), s->conv->d, s->bwd_data, ws, n, &zero,
                                                s->x->d, tx.get());
          });
        });
  } else {
    chosen = choose_algorithm<cudnnConvolutionBwdFilterAlgoPerf_t>(
        s->conv->d, half_data, s->workspace,
        [&](int n, int* found, cudnnConvolutionBwdFilterAlgoPerf_t* perf) {
          return cudnnFindConvolutionBackwardFilterAlgorithm(handle(), s->x->d, s->y->d, s->conv->d,
                                                             s->w->d, n, found, perf);
        },
        [&](int n, int* found, cudnnConvolutionBwdFilterAlgoPerf_t* perf) {
          return cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle(), s->x->d, s->y->d,
                                                               s->conv->d, s->w->d, n, found, perf);
        },
        [&](cudnnConvolutionBwdFilterAlgo_t a, size_t* workspace) {
          s->bwd_filter = a;
          return cudnnGetConvolutionBackwardFilterWorkspaceSize(handle(), s->x->d, s->y->d,
                                                                s->conv->d, s->w->d, a, workspace);
        },
        [&](size_t workspace) {
          return trial(workspace, [&](void* ws, size_t n) {
            return cudnnConvolutionBackwardFilter(handle(), &one, s->x->d, tx.get(), s->y->d,
                                                  ty.get(), s->conv->d, s->bwd_filter, ws, n, &zero,
                                                  s->w->d, tw.get());
          });
        });
  }
  return chosen ? s : nullptr;
}

// y = the forward convolution of x (as cuDNN sees it: padded_input) by w (KRSC).
template <class T>
void forward_into(const ConvState& s, const void* x, const void* w, void* y) {
  const compute_t<T> one = 1, zero = 0;  // cuDNN scales 16-bit float data by floats
  auto ws = scratch(s.workspace);
  check_dnn(cudnnConvolutionForward(handle(), &one, s.x->d, x, s.w->d, w, s.conv->d, s.fwd,
                                    ws.get(), s.workspace, &zero, s.y->d, y),
            "forward");
}

template <class T>
Kernel conv_kernel(const ConvProblem& c) {
  auto s = conv_state<T>(c);
  if (!s) return Kernel{};
  return [s, which = c.which](const Ins& in, Buffer& out) {
    if (out.numel() == 0) return;
    std::shared_ptr<void> keep, keep_x, keep_dy;
    const ConvPlan& p = s->p;
    // x, unpadded or padded (scratch, aligned)
    auto x_of = [&](const Buffer& x) {
      return dnn_operand(padded_input(p, x, keep_x), x.nbytes(), keep_x);
    };
    if (which == 0) {  // forward_into takes its own workspace
      Buffer w = filter_of(p, *in[1], keep);
      const void* x = x_of(*in[0]);
      into_dnn_result(out, [&](void* y) { forward_into<T>(*s, x, w.data(), y); });
      return;
    }
    const compute_t<T> one = 1, zero = 0;  // cuDNN scales 16-bit float data by floats
    auto ws = scratch(s->workspace);
    if (which == 1) {
      Buffer w = filter_of(p, *in[1], keep);
      const void* dy = dnn_operand(in[0]->data(), in[0]->nbytes(), keep_dy);
      auto backward_data = [&](void* dx) {
        check_dnn(
            cudnnConvolutionBackwardData(handle(), &one, s->w->d, w.data(), s->y->d, dy, s->conv->d,
                                         s->bwd_data, ws.get(), s->workspace, &zero, s->x->d, dx),
            "backward data");
      };
      if (!p.padded) return into_dnn_result(out, backward_data);
      // the gradient of the padded input, then its interior
      Buffer dxp = scratch_buffer(out.dtype, p.padded_dims, keep_x);
      backward_data(dxp.data());
      strided_copy_on_device(dxp, p.x_offset, out, 0, p.from_padded, out.numel());
    } else {
      Buffer dw = scratch_buffer(out.dtype, permuted_dims(p.split_kernel, p.to_krsc), keep);
      const void* x = x_of(*in[0]);
      const void* dy = dnn_operand(in[1]->data(), in[1]->nbytes(), keep_dy);
      check_dnn(cudnnConvolutionBackwardFilter(handle(), &one, s->x->d, x, s->y->d, dy, s->conv->d,
                                               s->bwd_filter, ws.get(), s->workspace, &zero,
                                               s->w->d, dw.data()),
                "backward filter");
      transpose_on_device(dw, out, p.from_krsc);
    }
  };
}

// The pass of a channels-last problem on channels-first copies of its data operands: cuDNN 9
// has no engine for some channels-last problems that it runs channels-first (float64 backward
// passes and 3-D float64 convolutions on Hopper). Empty where cuDNN declines that too.
template <class T>
Kernel channels_first_kernel(const ConvProblem& c) {
  int64_t rank = int64_t(c.x.size());
  std::vector<int64_t> to_cf{0, rank - 1}, from_cf{0};
  for (int64_t i = 1; i + 1 < rank; ++i) to_cf.push_back(i), from_cf.push_back(i + 1);
  from_cf.push_back(1);
  ConvProblem cf = c;
  cf.g.channels_first = true;
  cf.x = permuted_dims(c.x, to_cf);
  cf.y = permuted_dims(c.y, to_cf);
  Kernel inner = conv_kernel<T>(cf);
  if (!inner) return Kernel{};
  // The operands that have the data layout (a third operand only lends its shape: not read).
  std::vector<bool> data_in =
      c.which == 2 ? std::vector<bool>{true, true} : std::vector<bool>{true};
  bool data_out = c.which != 2;
  return [inner, to_cf, from_cf, data_in, data_out](const Ins& in, Buffer& out) {
    if (out.numel() == 0) return;
    std::vector<Buffer> moved(in.size());
    std::vector<std::shared_ptr<void>> keep(in.size() + 1);
    Ins cf_in(in);
    for (size_t i = 0; i < data_in.size(); ++i) {
      moved[i] = scratch_buffer(in[i]->dtype, permuted_dims(in[i]->dims, to_cf), keep[i]);
      transpose_on_device(*in[i], moved[i], to_cf);
      cf_in[i] = &moved[i];
    }
    if (!data_out) return inner(cf_in, out);
    Buffer y = scratch_buffer(out.dtype, permuted_dims(out.dims, to_cf), keep.back());
    inner(cf_in, y);
    transpose_on_device(y, out, from_cf);
  };
}

// A problem cuDNN cannot describe or has no algorithm for, in its own layout or channels-first,
// is declined (the CPU runs it).
template <int Which>
Kernel make_conv(const KernelArgs& k) {
  try {
    ConvProblem c = conv_problem(k, Which);
    return dispatch_float<Kernel>(k.out.dtype, [&](auto z) {
      using T = decltype(z);
      Kernel kernel = conv_kernel<T>(c);
      if (!kernel && !c.g.channels_first) kernel = channels_first_kernel<T>(c);
      return kernel;
    });
  } catch (const Error&) {
  }
  return Kernel{};
}
Registrar r1(ops::Conv, make_conv<0>);
Registrar r2(ops::ConvBackwardData, make_conv<1>);
Registrar r3(ops::ConvBackwardFilter, make_conv<2>);

// FusedConv(x, kernel[, bias]), attribute relu (core/compile/fuse_epilogue.cpp). With a bias: one
// cudnnConvolutionBiasActivationForward (relu with the pass's chosen algorithm; identity, which
// needs the implicit precomputed GEMM) where a trial call at plan time succeeds; otherwise, and
// without a bias, the forward convolution and the epilogue as its own kernel.
struct FusedConvState {
  std::shared_ptr<ConvState> conv;
  bool bias = false, relu = false;
  ChannelPlacement channels;
  int64_t y_numel = 0;
  std::unique_ptr<TensorDesc> bias_desc;
  cudnnActivationDescriptor_t act = nullptr;
  cudnnConvolutionFwdAlgo_t algo{};
  size_t workspace = 0;
  bool fused = false;
  ~FusedConvState() {
    if (act) cudnnDestroyActivationDescriptor(act);
  }
};

template <class T>
cudnnStatus_t fused_forward(const FusedConvState& f, const void* x, const void* w, const void* bias,
                            void* y) {
  const compute_t<T> one = 1, zero = 0;  // z (= y) is scaled by zero: not read
  const ConvState& s = *f.conv;
  auto ws = scratch(f.workspace);
  return cudnnConvolutionBiasActivationForward(handle(), &one, s.x->d, x, s.w->d, w, s.conv->d,
                                               f.algo, ws.get(), f.workspace, &zero, s.y->d, y,
                                               f.bias_desc->d, bias, f.act, s.y->d, y);
}

// Whether cuDNN runs this fused problem: descriptors, algorithm, then one call on scratch memory
// (cuDNN reports the configurations it does not support when called).
template <class T>
bool make_fused_call(FusedConvState& f) {
  const ConvState& s = *f.conv;
  const ConvPlan& p = s.p;
  NdDesc b;  // (1, K, 1, ...), as many dims as the data's descriptors
  b.dims.assign(p.y.dims.size(), 1);
  b.dims[1] = int(f.channels.channels);
  b.strides.assign(p.y.dims.size(), 1);
  b.strides[0] = int(f.channels.channels);
  f.bias_desc = std::make_unique<TensorDesc>(b, dnn_type<T>());
  if (cudnnCreateActivationDescriptor(&f.act) != CUDNN_STATUS_SUCCESS ||
      cudnnSetActivationDescriptor(f.act,
                                   f.relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
                                   CUDNN_NOT_PROPAGATE_NAN, 0.0) != CUDNN_STATUS_SUCCESS)
    return false;
  f.algo = f.relu ? s.fwd : CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  f.workspace = s.workspace;
  if (!f.relu &&
      cudnnGetConvolutionForwardWorkspaceSize(handle(), s.x->d, s.w->d, s.conv->d, s.y->d, f.algo,
                                              &f.workspace) != CUDNN_STATUS_SUCCESS)
    return false;
  auto x = scratch(size_t(numel(p.padded_dims)) * sizeof(T));
  auto w = scratch(size_t(numel(p.split_kernel)) * sizeof(T));
  auto y = scratch(size_t(f.y_numel) * sizeof(T));
  auto bias = scratch(size_t(f.channels.channels) * sizeof(T));
  return fused_forward<T>(f, x.get(), w.get(), bias.get(), y.get()) == CUDNN_STATUS_SUCCESS;
}

template <class T>
Kernel fused_conv_kernel(const KernelArgs& k) {
  auto f = std::make_shared<FusedConvState>();
  f->conv = conv_state<T>(conv_problem(k, 0));
  if (!f->conv) return Kernel{};
  ConvGeom g = ConvGeom::from(k.node.attrs);
  const Dims& yd = k.out.shape.dims;
  f->bias = k.in.size() == 3;
  f->relu = k.node.attrs.i(attr::relu, 0) != 0;
  f->channels = channel_placement(g.channels_first, yd);
  f->y_numel = numel(yd);
  if (f->bias && f->y_numel > 0) {
    try {
      f->fused = make_fused_call<T>(*f);
    } catch (const Error&) {
      f->fused = false;
    }
  }
  return [f](const Ins& in, Buffer& out) {
    if (out.numel() == 0) return;
    const ConvState& s = *f->conv;
    std::shared_ptr<void> keep, keep_x, keep_bias;
    Buffer w = filter_of(s.p, *in[1], keep);
    const void* x = dnn_operand(padded_input(s.p, *in[0], keep_x), in[0]->nbytes(), keep_x);
    const T* bias =
        f->bias ? static_cast<const T*>(dnn_operand(in[2]->data(), in[2]->nbytes(), keep_bias))
                : nullptr;
    into_dnn_result(out, [&](void* result) {
      T* y = static_cast<T*>(result);
      if (f->fused) return check_dnn(fused_forward<T>(*f, x, w.data(), bias, y), "fused forward");
      forward_into<T>(s, x, w.data(), y);
      epilogue_on_device(y, bias, out.numel(), f->channels.channels, f->channels.stride, f->relu);
    });
  };
}

Kernel make_fused_conv(const KernelArgs& k) {
  try {
    return dispatch_float<Kernel>(k.out.dtype,
                                  [&](auto z) { return fused_conv_kernel<decltype(z)>(k); });
  } catch (const Error&) {
  }
  return Kernel{};
}
Registrar r3f(ops::FusedConv, make_fused_conv);

}  // namespace
}  // namespace kb::cuda
