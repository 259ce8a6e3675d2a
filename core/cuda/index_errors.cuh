// Index errors found on the device, reported through a flag read back after the kernel, and the
// pieces of the kernels that index by data (gather, scatter, sparse): the index dtype dispatch.
#pragma once
#include <memory>
#include <vector>

#include "core/cuda/common.cuh"

namespace kb::cuda {

// A flag holding the lowest row (position in an index tensor) whose index a kernel found out of
// range, kNoRow when none: the host then reads that index back, so the error is the one the CPU
// (which checks in order) reports.
constexpr long long kNoRow = 9223372036854775807LL;

struct ErrorFlag {
  ErrorFlag() {
    check_cuda(cudaMemcpyAsync(ptr(), &kNoRow, sizeof kNoRow, cudaMemcpyHostToDevice, stream()),
               "copy");
  }
  std::shared_ptr<void> mem = scratch(sizeof(long long));
  long long* ptr() { return static_cast<long long*>(mem.get()); }
  long long read() {
    long long v = -1;
    check_cuda(cudaMemcpyAsync(&v, ptr(), sizeof v, cudaMemcpyDeviceToHost, stream()), "copy");
    check_cuda(cudaStreamSynchronize(stream()), "sync");
    return v;
  }
};

// Elements [begin, begin + n) of an index tensor (int32 or int64), on the host, as int64.
inline std::vector<int64_t> host_indices(const Buffer& b, int64_t begin, int64_t n) {
  if (b.dtype == DType::i64) return host_copy<int64_t>(b, begin, n);
  std::vector<int32_t> v = host_copy<int32_t>(b, begin, n);
  return std::vector<int64_t>(v.begin(), v.end());
}

// The CPU's error for index v of `idx`: "<who>: <what> <v> is out of range [0, limit)".
inline void check_index(int64_t v, int64_t limit, const char* who, const char* what) {
  check(v >= 0 && v < limit, Status::invalid_argument, who, ": ", what, " ", v,
        " is out of range [0, ", limit, ")");
}

// When a kernel flagged a row of the index tensor `idx` (tuples of `width` indices), reads that
// tuple back and fails through check(tuple), the CPU's check with its message.
template <class Check>
void check_flagged_row(ErrorFlag& flag, const Buffer& idx, int64_t width, const char* who,
                       Check&& check) {
  long long row = flag.read();
  if (row == kNoRow) return;
  std::vector<int64_t> tuple = host_indices(idx, row * width, width);
  check(tuple.data());
  fail(Status::internal, who, ": index row ", row, " was flagged but is in range");
}

// The same for single indices in [0, limit).
inline void check_flagged_index(ErrorFlag& flag, const Buffer& idx, int64_t limit, const char* who,
                                const char* what) {
  check_flagged_row(flag, idx, 1, who,
                    [&](const int64_t* v) { check_index(*v, limit, who, what); });
}

// Checks every index on the host: for a call with nothing to compute (empty rows), whose
// indices the CPU checks all the same.
inline void check_indices_on_host(const Buffer& idx, int64_t limit, const char* who,
                                  const char* what) {
  for (int64_t v : host_indices(idx, 0, idx.numel())) check_index(v, limit, who, what);
}

// Records row as bad: the flag ends up holding the lowest bad row.
__device__ inline void flag_row(long long* bad, int64_t row) { atomicMin(bad, (long long)row); }

// Whether index v (at `row` of its tensor) is in [0, limit); flags the row when not.
template <class I>
__device__ bool index_ok(I v, int64_t limit, int64_t row, long long* bad) {
  if (v < 0 || int64_t(v) >= limit) {
    flag_row(bad, row);
    return false;
  }
  return true;
}

template <class F>
Kernel with_index_type(DType t, F&& f) {
  if (t == DType::i32) return f(int32_t{});
  return f(int64_t{});
}

}  // namespace kb::cuda
