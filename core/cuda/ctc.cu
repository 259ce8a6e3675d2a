// CUDA kernels of CtcLoss and CtcLossGrad through the CPU's per-cell functions
// (core/kernel_plans/ctc_recursion.h): a thread per row of log-softmax and of the gradient, a block
// per batch entry for the forward and backward recursions (a thread per state, a barrier per step),
// over chunks of the batch whose scratch fits a budget.
// The labels and lengths are read on the host first, to be checked with the CPU's rules and
// messages; their extended labels go back in one copy. Decoding stays on the CPU, as TensorFlow
// decodes there.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/cuda/common.cuh"
#include "core/kernel_plans/ctc_batch.h"

namespace kb::cuda {
namespace {

using Ins = std::vector<const Buffer*>;

template <class T>
__global__ void log_softmax_kernel(CtcTable q, CtcScratch s, const T* x) {
  KB_GRID_LOOP(r, q.rows()) ctc_log_softmax_at(q, s, x, r);
}

__global__ void alpha_kernel(CtcTable q, CtcScratch s) {
  CtcEntry e = q.entry(s, q.first + blockIdx.x);
  for (int64_t t = 0; t < e.steps; ++t) {
    for (int64_t u = threadIdx.x; u < e.u_len; u += blockDim.x) e.a(t, u) = ctc_alpha_at(e, t, u);
    __syncthreads();
  }
}

__global__ void beta_kernel(CtcTable q, CtcScratch s) {
  CtcEntry e = q.entry(s, q.first + blockIdx.x);
  for (int64_t t = e.steps - 1; t >= 0; --t) {
    for (int64_t u = threadIdx.x; u < e.u_len; u += blockDim.x) e.b(t, u) = ctc_beta_at(e, t, u);
    __syncthreads();
  }
}

template <class T>
__global__ void loss_kernel(CtcTable q, CtcScratch s, T* out) {
  KB_GRID_LOOP(k, q.count) out[q.first + k] = T(-ctc_log_likelihood(q.entry(s, q.first + k)));
}

template <class T>
__global__ void grad_kernel(CtcTable q, CtcScratch s, T* out) {
  KB_GRID_LOOP(r, q.rows()) ctc_grad_at(q, s, out, r);
}

// The scratch of one chunk of the batch (log-softmax, alpha, beta and occupancies in double):
// large batches of long sequences run in several chunks instead of asking for gigabytes. 256 MiB,
// or KB_CUDA_CTC_SCRATCH_BYTES when set (read per plan; a budget below one entry's scratch runs
// one entry at a time).
size_t scratch_budget() {
  const char* e = std::getenv("KB_CUDA_CTC_SCRATCH_BYTES");
  if (e && *e) {
    try {
      return size_t(std::stoull(e));
    } catch (const std::exception&) {
    }
  }
  return size_t(256) << 20;
}

// Threads of a recursion's block: one per state up to a warp multiple, at most 256.
unsigned recursion_threads(int64_t states) {
  int64_t n = (states + 31) / 32 * 32;
  return unsigned(n < 256 ? n : 256);
}

template <bool Grad, class T>
void run_ctc(const CtcProblem& p, size_t budget, const Ins& in, Buffer& out) {
  if (p.batch == 0) return;
  std::vector<int32_t> labels = host_copy<int32_t>(*in[1], 0, p.batch * p.max_label);
  std::vector<int32_t> label_length = host_copy<int32_t>(*in[2], 0, p.batch);
  std::vector<int32_t> input_length = host_copy<int32_t>(*in[3], 0, p.batch);
  std::vector<int32_t> packed =
      ctc_pack_labels(p, labels.data(), label_length.data(), input_length.data());
  std::shared_ptr<void> table_mem = scratch(sizeof(int32_t) * packed.size());
  // `packed` goes when this returns: the copy must be done by then (the stream is idle after
  // the host copies above, so waiting costs only the copy).
  check_cuda(cudaMemcpyAsync(table_mem.get(), packed.data(), sizeof(int32_t) * packed.size(),
                             cudaMemcpyHostToDevice, stream()),
             "ctc: copy of the labels");
  check_cuda(cudaStreamSynchronize(stream()), "ctc: copy of the labels");
  CtcTable all = ctc_table(p, static_cast<const int32_t*>(table_mem.get()));

  // The batch in chunks whose scratch fits the budget, one after another over the same memory.
  int64_t per_chunk = all.entries_within(budget, Grad);
  std::shared_ptr<void> mem = scratch(sizeof(double) * all.chunk(0, per_chunk).scratch_size(Grad));
  const T* x = in[0]->as<T>();
  unsigned threads = recursion_threads(all.states);
  for (int64_t first = 0; first < p.batch; first += per_chunk) {
    CtcTable q = all.chunk(first, std::min(per_chunk, p.batch - first));
    CtcScratch s = q.scratch(static_cast<double*>(mem.get()), Grad);
    unsigned entries = unsigned(q.count);
    log_softmax_kernel<<<blocks_for(q.rows()), 256, 0, stream()>>>(q, s, x);
    alpha_kernel<<<entries, threads, 0, stream()>>>(q, s);
    if constexpr (Grad) {
      beta_kernel<<<entries, threads, 0, stream()>>>(q, s);
      grad_kernel<<<blocks_for(q.rows()), 256, 0, stream()>>>(q, s, out.as<T>());
    } else {
      loss_kernel<<<blocks_for(q.count), 256, 0, stream()>>>(q, s, out.as<T>());
    }
    after_launch("ctc");
  }
}

template <bool Grad>
Kernel make_ctc_loss(const KernelArgs& k) {
  const Dims& d = k.in[0].shape.dims;
  CtcProblem p{d[0], d[1], d[2], k.in[1].shape.dims[1]};
  size_t budget = scratch_budget();
  if (k.in[0].dtype == DType::f32)
    return [p, budget](const Ins& in, Buffer& out) { run_ctc<Grad, float>(p, budget, in, out); };
  return [p, budget](const Ins& in, Buffer& out) { run_ctc<Grad, double>(p, budget, in, out); };
}
Registrar r1(ops::CtcLoss, make_ctc_loss<false>);
Registrar r2(ops::CtcLossGrad, make_ctc_loss<true>);

}  // namespace
}  // namespace kb::cuda
