// CPU reductions: Reduce (sum/prod/max/min), SumToLike, and Softmax and LogSoftmax along an axis
// (stable: the max subtracted).
#include <cmath>
#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

#include "core/backend/kernel.h"
#include "core/kernel_plans/layout.h"
#include "core/kernel_plans/reduce_plan.h"
#include "core/cpu/loops.h"
#include "core/cpu/scratch.h"
#include "core/cpu/reduce.h"
#include "core/cpu/row_kernels.h"
#include "core/cpu/widen.h"
#include "core/ops/build.h"
#include "core/graph/dispatch.h"
#include "core/ops/modes.h"

namespace kb::cpu {
namespace {

template <class T>
using acc_t = std::conditional_t<is_float_v<T>, double,
                                 std::conditional_t<std::is_same_v<T, bool>, bool, int64_t>>;

// One stage of a reduction of T: In is T for the first stage, else the accumulation type A, the
// previous stage's results; Out is T for the last stage, else A.
template <class T, class In, class Out>
void reduce_stage(ReduceMode mode, const ReduceStage& p, const In* x, Out* out) {
  using C = compute_t<T>;
  using A = acc_t<T>;
  using CIn = std::conditional_t<std::is_same_v<In, T>, C, A>;
  auto result = [](A acc) -> Out {
    if constexpr (std::is_same_v<Out, A>) {
      return acc;
    } else {
      return T(C(acc));
    }
  };
  const int64_t r = p.r, inner = p.inner;
  auto init = [&]() -> A {
    switch (mode) {
      case ReduceMode::sum:
        return A(0);
      case ReduceMode::prod:
        return A(1);
      case ReduceMode::max:
        return A(std::numeric_limits<C>::lowest());
      case ReduceMode::min:
        return A(std::numeric_limits<C>::max());
    }
    return A(0);
  };
  auto combine = [mode](A acc, A v) -> A {
    switch (mode) {
      case ReduceMode::sum:
        return acc + v;
      case ReduceMode::prod:
        return acc * v;
      case ReduceMode::max:
        return v > acc || v != v ? v : acc;
      case ReduceMode::min:
        return v < acc || v != v ? v : acc;
    }
    return acc;
  };
  auto start = [&]() -> A {
    if constexpr (is_float_v<T>) {
      if (mode == ReduceMode::max) return -std::numeric_limits<A>::infinity();
      if (mode == ReduceMode::min) return std::numeric_limits<A>::infinity();
    }
    return init();
  };
  if (inner == 1) {
    parallel_for(
        p.outer,
        [&](int64_t b, int64_t e) {
          for (int64_t o = b; o < e; ++o) {
            const In* row = x + o * r;
            A acc = start();
            if constexpr (std::is_same_v<In, float>) {
              if (mode == ReduceMode::sum) {
                out[o] = Out(row_sum_f32(row, r));
                continue;
              }
            }
            if (mode == ReduceMode::sum) {
              // Independent partial sums: one add chain was latency-bound (W2's row sums ran at
              // a fifth of the memory bandwidth); the fixed lane order keeps results exact
              // between runs and thread counts.
              constexpr int64_t kLanes = 16;
              A lane[kLanes] = {};
              int64_t j = 0;
              for (; j + kLanes <= r; j += kLanes)
                for (int64_t l = 0; l < kLanes; ++l) lane[l] += A(CIn(row[j + l]));
              for (; j < r; ++j) acc += A(CIn(row[j]));
              for (int64_t l = 0; l < kLanes; ++l) acc += lane[l];
            } else {
              for (int64_t j = 0; j < r; ++j) acc = combine(acc, A(CIn(row[j])));
            }
            out[o] = result(acc);
          }
        },
        std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(r, 1)));
  } else {
    // Rows of `inner` values are combined into a row of accumulators (contiguous, vectorized);
    // a column walk with stride `inner` was 17% of a CNN training step (the bias gradients).
    auto combine_rows = [&](int64_t o, int64_t j0, int64_t j1, A* acc) {
      for (int64_t i = 0; i < inner; ++i) acc[i] = start();
      if constexpr (std::is_same_v<In, float>) {
        if (mode == ReduceMode::sum) {
          add_rows_f32(x + (o * r + j0) * inner, j1 - j0, inner, acc);
          return;
        }
      }
      for (int64_t j = j0; j < j1; ++j) {
        const In* row = x + (o * r + j) * inner;
        if (mode == ReduceMode::sum) {
          for (int64_t i = 0; i < inner; ++i) acc[i] += A(CIn(row[i]));
        } else {
          for (int64_t i = 0; i < inner; ++i) acc[i] = combine(acc[i], A(CIn(row[i])));
        }
      }
    };
    // Few outputs (a bias gradient: outer = 1): the reduced axis is split into a fixed number of
    // parts whose partial results combine in order, so the result does not depend on the
    // number of threads.
    constexpr int64_t kParts = 8;
    int64_t parts = p.outer < kParts && p.outer * r * inner >= 4 * kParallelGrain
                        ? std::min<int64_t>(kParts, r)
                        : 1;
    if (parts == 1) {
      parallel_for(
          p.outer,
          [&](int64_t b, int64_t e) {
            ThreadScratch<A, struct ReduceRow> acc(static_cast<size_t>(inner));
            for (int64_t o = b; o < e; ++o) {
              combine_rows(o, 0, r, acc.data());
              for (int64_t i = 0; i < inner; ++i) out[o * inner + i] = result(acc.data()[i]);
            }
          },
          std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(r * inner, 1)));
      return;
    }
    ThreadScratch<A, struct ReducePartials> partial_s(size_t(p.outer * parts * inner));
    A* partial = partial_s.data();
    parallel_for(
        p.outer * parts,
        [&](int64_t b, int64_t e) {
          for (int64_t q = b; q < e; ++q) {
            int64_t o = q / parts, k = q % parts;
            combine_rows(o, r * k / parts, r * (k + 1) / parts, partial + q * inner);
          }
        },
        1);
    for (int64_t o = 0; o < p.outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        A acc = partial[size_t(o * parts * inner + i)];
        for (int64_t k = 1; k < parts; ++k)
          acc = combine(acc, partial[size_t((o * parts + k) * inner + i)]);
        out[o * inner + i] = result(acc);
      }
  }
}

template <class T>
void run_reduce(ReduceMode mode, const ReducePlan& p, const T* x, T* out) {
  using A = acc_t<T>;
  const std::vector<ReduceStage>& stages = p.stages;
  if (stages.size() == 1) {
    reduce_stage<T, T, T>(mode, stages[0], x, out);
    return;
  }
  // Between stages the results stay in the accumulation type: the result is rounded once, as
  // with one stage. Two buffers, taking turns.
  auto count = [&](size_t i) { return size_t(stages[i].outer * stages[i].inner); };
  ThreadScratch<A, struct ReduceStageEven> even(count(0));
  ThreadScratch<A, struct ReduceStageOdd> odd(count(1));
  A* buffer[2] = {even.data(), odd.data()};
  reduce_stage<T, T, A>(mode, stages[0], x, buffer[0]);
  for (size_t i = 1; i + 1 < stages.size(); ++i)
    reduce_stage<T, A, A>(mode, stages[i], buffer[(i - 1) % 2], buffer[i % 2]);
  size_t last = stages.size() - 1;
  reduce_stage<T, A, T>(mode, stages[last], buffer[(last - 1) % 2], out);
}

// any/all are max/min over bool, reduced as its bytes.
void run_bool_reduce(ReduceMode mode, const ReducePlan& p, const Buffer& in, Buffer& out) {
  if (bool_all_of_nothing(int(mode), p)) return void(std::memset(out.data(), 1, out.nbytes()));
  run_reduce<uint8_t>(mode, p, static_cast<const uint8_t*>(in.data()),
                      static_cast<uint8_t*>(out.data()));
}

std::vector<int64_t> concrete_axes(const Attrs& a, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t ax : a.ints(attr::axes)) axes.push_back(ax < 0 ? ax + rank : ax);
  return axes;
}

Kernel make_reduce(const KernelArgs& k) {
  auto mode = mode_of<ReduceMode>(k.node.attrs);
  ReducePlan p = plan_reduce(k.in[0].shape.dims, concrete_axes(k.node.attrs, k.in[0].shape.rank()));
  return dispatch_dtype(k.in[0].dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    if constexpr (std::is_same_v<T, bool>) {
      return [mode, p](const std::vector<const Buffer*>& in, Buffer& out) {
        run_bool_reduce(mode, p, *in[0], out);
      };
    } else {
      return [mode, p](const std::vector<const Buffer*>& in, Buffer& out) {
        run_reduce<T>(mode, p, in[0]->as<T>(), out.as<T>());
      };
    }
  });
}
KernelRegistrar kr_reduce("cpu", ops::Reduce, make_reduce);

Kernel make_sum_to_like(const KernelArgs& k) {
  const Dims& gd = k.in[0].shape.dims;
  const Dims& ld = k.out.shape.dims;
  if (gd == ld)
    return [](const std::vector<const Buffer*>& in, Buffer& out) { out.storage = in[0]->storage; };
  // A bfloat16 gradient summed (a bias's, over the batch and the pixels) on the float32 kernels:
  // the float32 sum rounded once, as here, with the conversions vectorized.
  if (k.in[0].dtype == DType::bf16)
    if (Kernel wide = widened(k, 1, [](const KernelArgs& k32) { return make_sum_to_like(k32); }))
      return [wide](const std::vector<const Buffer*>& in, Buffer& out) {
        if (!out.storage) out.allocate();
        wide(in, out);
      };
  std::vector<int64_t> axes = sum_to_axes(gd, ld);
  ReducePlan p = plan_reduce(gd, axes);
  return dispatch_dtype(k.in[0].dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    if constexpr (std::is_same_v<T, bool>) {
      fail(Status::dtype, "sum_to_like: bool is not supported");
    } else {
      return [p](const std::vector<const Buffer*>& in, Buffer& out) {
        if (!out.storage) out.allocate();  // a plan may have placed it (OpDef::view_when)
        run_reduce<T>(ReduceMode::sum, p, in[0]->as<T>(), out.as<T>());
      };
    }
  });
}
KernelRegistrar kr_sum_to_like("cpu", ops::SumToLike, make_sum_to_like);

template <bool Log>
Kernel make_softmax_kernel(const KernelArgs& k) {
  AxisView v = axis_view(k.in[0].shape.dims, k.node.attrs.i(attr::axis));
  int64_t outer = v.outer, n = v.n, inner = v.inner;
  return dispatch_dtype(k.out.dtype, [&](auto z) -> Kernel {
    using T = decltype(z);
    if constexpr (!is_float_v<T>) {
      fail(Status::dtype, "softmax: floating input required");
    } else {
      using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
      if constexpr (std::is_same_v<T, float>) {
        if (inner == 1)
          return [outer, n](const std::vector<const Buffer*>& in, Buffer& out) {
            const float* x = in[0]->as<float>();
            float* o = out.as<float>();
            // A result larger than the caches goes straight to memory.
            bool stream = outer * n * int64_t(sizeof(float)) >= (int64_t(8) << 20);
            parallel_for(
                outer,
                [&](int64_t b, int64_t e) {
                  ThreadScratch<float, struct SoftmaxRow> scratch(static_cast<size_t>(n));
                  for (int64_t r = b; r < e; ++r)
                    softmax_row_f32(x + r * n, o + r * n, scratch.data(), n, Log, stream);
                },
                std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)));
          };
      }
      if constexpr (std::is_same_v<T, bfloat16>) {
        // A mixed-precision model's attention scores: each row widened, the float32 row kernel,
        // the row rounded once.
        if (inner == 1)
          return [outer, n](const std::vector<const Buffer*>& in, Buffer& out) {
            const bfloat16* x = in[0]->as<bfloat16>();
            bfloat16* o = out.as<bfloat16>();
            parallel_for(
                outer,
                [&](int64_t b, int64_t e) {
                  ThreadScratch<float, struct SoftmaxRow> scratch(static_cast<size_t>(3 * n));
                  float* wide = scratch.data();
                  for (int64_t r = b; r < e; ++r) {
                    bf16_to_f32(x + r * n, wide, n);
                    softmax_row_f32(wide, wide + n, wide + 2 * n, n, Log, false);
                    f32_to_bf16(wide + n, o + r * n, n);
                  }
                },
                std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)));
          };
      }
      return [outer, n, inner](const std::vector<const Buffer*>& in, Buffer& out) {
        const T* x = in[0]->as<T>();
        T* o = out.as<T>();
        parallel_for(
            outer * inner,
            [&](int64_t b, int64_t e) {
              for (int64_t oi = b; oi < e; ++oi) {
                int64_t base = (oi / inner) * n * inner + oi % inner;
                C mx = -std::numeric_limits<C>::infinity();
                for (int64_t j = 0; j < n; ++j) mx = std::max(mx, C(x[base + j * inner]));
                if (!std::isfinite(mx)) mx = std::isnan(mx) ? mx : C(0);
                C sum = 0;
                for (int64_t j = 0; j < n; ++j) sum += std::exp(C(x[base + j * inner]) - mx);
                if constexpr (Log) {
                  C ls = std::log(sum);  // (x - mx) - ls: see softmax_row_f32
                  for (int64_t j = 0; j < n; ++j)
                    o[base + j * inner] = T(C(x[base + j * inner]) - mx - ls);
                } else {
                  for (int64_t j = 0; j < n; ++j)
                    o[base + j * inner] = T(std::exp(C(x[base + j * inner]) - mx) / sum);
                }
              }
            },
            std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)));
      };
    }
  });
}
KernelRegistrar kr_softmax("cpu", ops::Softmax, make_softmax_kernel<false>);
KernelRegistrar kr_log_softmax("cpu", ops::LogSoftmax, make_softmax_kernel<true>);

}  // namespace
}  // namespace kb::cpu

namespace kb::cpu {
void reduce_into(ReduceMode mode, const Buffer& in, const std::vector<int64_t>& axes, Buffer& out) {
  ReducePlan p = plan_reduce(in.dims, axes);
  dispatch_dtype(in.dtype, [&](auto z) {
    using T = decltype(z);
    if constexpr (std::is_same_v<T, bool>) {
      run_bool_reduce(mode, p, in, out);
    } else {
      run_reduce<T>(mode, p, in.as<T>(), out.as<T>());
    }
  });
}
}  // namespace kb::cpu
