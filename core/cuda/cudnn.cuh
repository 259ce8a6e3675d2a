// cuDNN as the plugin's convolutions (core/cuda/conv.cu) and pooling (core/cuda/pool.cu) call it:
// status checks, the shared handle, data types, tensor descriptors of channels-first or -last
// data, and operands aligned as cuDNN's algorithms want.
#pragma once
#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/cuda/common.cuh"

namespace kb::cuda {

// Fails with the library's status for a cuDNN error (out of memory where cuDNN says so).
void check_dnn(cudnnStatus_t s, const char* what);

// cuDNN's handle, held for the full expression that calls handle(): host threads may run
// different functions at once, and cuDNN allows a handle in one thread at a time. (Only the
// enqueueing is serialized; the work runs on the one stream anyway.)
struct DnnHandle {
  std::unique_lock<std::recursive_mutex> lock;
  cudnnHandle_t h;
  operator cudnnHandle_t() const { return h; }  // NOLINT: passed straight to cuDNN calls
};
DnnHandle handle();

template <class T>
cudnnDataType_t dnn_type() {
  if constexpr (std::is_same_v<T, half>) return CUDNN_DATA_HALF;
  if constexpr (std::is_same_v<T, bfloat16>) return CUDNN_DATA_BFLOAT16;
  return std::is_same_v<T, double> ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
}

// Logical NC(spatial) dims and strides of a tensor stored channels-last or channels-first;
// 1-D problems get a leading spatial dimension of 1 (cuDNN wants at least 4 dims).
struct NdDesc {
  std::vector<int> dims, strides;
};
// cuDNN's descriptors take int dims and strides, and its legacy API indexes in 32 bits.
inline bool fits_descriptor(const Dims& d) { return numel(d) <= int64_t(INT32_MAX); }
NdDesc nd_desc(const Dims& d, bool channels_first);

struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDesc(const NdDesc& nd, cudnnDataType_t t) {
    check_dnn(cudnnCreateTensorDescriptor(&d), "tensor descriptor");
    check_dnn(
        cudnnSetTensorNdDescriptor(d, t, int(nd.dims.size()), nd.dims.data(), nd.strides.data()),
        "tensor descriptor");
  }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
};

// cuDNN's algorithms are chosen at plan time for memory aligned as the allocator aligns it; a
// view into a larger buffer (a loop's per-step slice of 16-bit data) may be only 2-byte aligned,
// which some algorithms reject. Such an operand is read from an aligned copy, and such a result
// is written to aligned scratch and copied out.
constexpr uintptr_t kDnnAlignment = 16;
inline bool dnn_aligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % kDnnAlignment == 0;
}

// data (`bytes` long) itself when aligned, else an aligned copy that `keep` holds.
const void* dnn_operand(const void* data, size_t bytes, std::shared_ptr<void>& keep);

// write(y) with y = out's memory when aligned, else aligned scratch then copied into out.
template <class Write>
void into_dnn_result(Buffer& out, Write&& write) {
  if (dnn_aligned(out.data())) return write(out.data());
  auto tmp = scratch(out.nbytes());
  write(tmp.get());
  copy_on_device(out.data(), tmp.get(), out.nbytes());
}

}  // namespace kb::cuda
